# shellcheck shell=bash
# jobs/local/common.sh: functions shared by the Slurm jobs of jobs/local/ and jobs/setonix/ (sourced, never run).
#
# What it provides:
#   emprism_exe DEFAULT_BUILD_DIR   path of the emprism-mpi binary (EMPRISM_EXE, else $EMPRISM_BUILD_DIR or the given
#                                   default build directory + /emprism-mpi); fails if it is not executable
#   emprism_launch NODES RANKS CPUS PROGRAM ARGS...
#                                   starts RANKS ranks of PROGRAM inside the allocation: srun (default) or mpirun
#   emprism_python                  a python3 that can import h5py (analysis/python3: EMPRISM_PYTHON, python3,
#                                   /usr/bin/python3)
#   emprism_weak_grid RANKS         process grid for weak scaling: factors of RANKS dealt to t, z, y, x in turn
#   emprism_write_input FILE EXTENTS PROCS OUTPUT
#                                   a solver input (random gauge field, csw 1, one noise solve) for a scaling point
#   emprism_scaling_point SERIES EXTENTS PROCS NODES RANKS
#                                   writes and runs one scaling point in $EMPRISM_OUT_DIR, records its exit code
#   emprism_scaling_analysis RANKS_PER_NODE
#                                   jobs/setonix/scaling_table.py over the points: scaling.md, scaling.csv, scaling.png
#
# Variables read (all optional unless stated):
#   EMPRISM_EXE          the program; EMPRISM_BUILD_DIR the build directory holding it
#   EMPRISM_LAUNCHER     srun (default) or mpirun (Open MPI inside the allocation, for a Slurm without a working
#                        PMI plugin; as root it needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;
#                        with --overcommit jobs it adds --oversubscribe)
#   EMPRISM_SRUN_MPI     value of srun --mpi= (e.g. pmix, pmi2, cray_shasta); unset: the cluster's MpiDefault
#   EMPRISM_SRUN_OPTS    extra srun options, one string split on spaces (e.g. "--cpu-bind=cores")
#   SRUN_GPU_OPTS        (array, set by the Setonix scripts) GPU options appended to every srun
#   EMPRISM_SCALING_PRECISION (single), EMPRISM_SCALING_TOL (1e-5), EMPRISM_SCALING_MAX_ITER (2000),
#   EMPRISM_SCALING_GPU_AWARE ("auto"): solver settings of the generated scaling inputs
#   EMPRISM_REPO         set by the caller (the repository root); EMPRISM_OUT_DIR, the output directory of a series
#
# The functions print their progress on stdout with the prefix "emprism-job:".

emprism_log() { echo "emprism-job: $*"; }
emprism_die() {
  echo "emprism-job: error: $*" >&2
  exit 1
}

# emprism_exe DEFAULT_BUILD_DIR: the executable to run.
emprism_exe() {
  local exe=${EMPRISM_EXE:-${EMPRISM_BUILD_DIR:-$1}/emprism-mpi}
  [[ -x $exe ]] || emprism_die "no executable $exe (build it first, or set EMPRISM_EXE / EMPRISM_BUILD_DIR)"
  (cd "$(dirname "$exe")" && echo "$(pwd)/$(basename "$exe")")
}

# emprism_launch NODES RANKS CPUS PROGRAM ARGS...: run RANKS ranks on NODES nodes ("" = let Slurm choose) with CPUS
# cores each. Returns the launcher's exit status.
emprism_launch() {
  local nodes=$1 ranks=$2 cpus=$3
  shift 3
  local -a cmd extra=()
  if [[ -n ${EMPRISM_SRUN_OPTS:-} ]]; then
    read -r -a extra <<< "$EMPRISM_SRUN_OPTS"
  fi
  case ${EMPRISM_LAUNCHER:-srun} in
    srun)
      cmd=(srun)
      [[ -n ${EMPRISM_SRUN_MPI:-} ]] && cmd+=("--mpi=$EMPRISM_SRUN_MPI")
      [[ -n $nodes ]] && cmd+=(-N "$nodes")
      cmd+=(-n "$ranks" -c "$cpus")
      if declare -p SRUN_GPU_OPTS > /dev/null 2>&1; then
        cmd+=("${SRUN_GPU_OPTS[@]}")
      fi
      cmd+=("${extra[@]}")
      ;;
    mpirun)
      # Open MPI's mpirun reads the allocation from Slurm and starts its daemons with srun.
      cmd=(mpirun -n "$ranks" --bind-to none -x OMP_NUM_THREADS)
      # A job submitted with --overcommit may start more ranks than it has slots (cores).
      [[ ${SLURM_OVERCOMMIT:-0} == 1 ]] && cmd+=(--oversubscribe)
      [[ -n $nodes ]] && cmd+=(--map-by "ppr:$(((ranks + nodes - 1) / nodes)):node")
      ;;
    *) emprism_die "EMPRISM_LAUNCHER must be srun or mpirun, not '${EMPRISM_LAUNCHER}'" ;;
  esac
  emprism_log "launch: ${cmd[*]} $*"
  "${cmd[@]}" "$@"
}

# emprism_python: print a python3 that can import h5py, or nothing (analysis/python3's search: EMPRISM_PYTHON, else
# python3 on PATH, /usr/bin/python3).
emprism_python() {
  EMPRISM_PYTHON_MODULES=h5py "$EMPRISM_REPO/analysis/python3" -c 'import sys; print(sys.executable)' 2> /dev/null ||
    true
}

# emprism_weak_grid RANKS: "px py pz pt" with px*py*pz*pt = RANKS, the prime factors of RANKS (largest first) dealt to
# t, z, y, x in turn (the direction order in which the program itself splits first).
emprism_weak_grid() {
  local n=$1 f=2 i=0
  local -a factors=() grid=(1 1 1 1)
  while ((n > 1)); do
    if ((n % f == 0)); then
      factors=("$f" "${factors[@]}")
      n=$((n / f))
    else
      f=$((f + 1))
    fi
  done
  for f in "${factors[@]}"; do
    grid[3 - i % 4]=$((grid[3 - i % 4] * f))
    i=$((i + 1))
  done
  echo "${grid[*]}"
}

# emprism_write_input FILE "Lx Ly Lz Lt" "px py pz pt"|"" OUTPUT_FILE [COMMENT]
emprism_write_input() {
  local file=$1 output=$4 comment=${5:-} gpu_aware=${EMPRISM_SCALING_GPU_AWARE:-auto}
  local -a e p=()
  [[ $gpu_aware == true || $gpu_aware == false ]] || gpu_aware="\"$gpu_aware\""
  read -r -a e <<< "$2"
  [[ -n $3 ]] && read -r -a p <<< "$3"
  {
    echo "# $comment"
    echo "[lattice]"
    echo "extents = [${e[0]}, ${e[1]}, ${e[2]}, ${e[3]}]"
    if ((${#p[@]} == 4)); then
      echo "procs = [${p[0]}, ${p[1]}, ${p[2]}, ${p[3]}]"
    fi
    cat << EOF

[gauge]
source = "random"
width = 0.3
seed = 11

[dirac]
kappa = 0.12
csw = 1.0

[solver]
precision = "${EMPRISM_SCALING_PRECISION:-single}"
tol = ${EMPRISM_SCALING_TOL:-1e-5}
max_iter = ${EMPRISM_SCALING_MAX_ITER:-2000}

[comm]
gpu_aware = $gpu_aware

[metrics]
peak = false

[log]
progress_every = 100

[output]
file = "$output"
overwrite = true

[[solve]]
name = "noise"
type = "random"
seed = 5
EOF
  } > "$file"
}

# emprism_scaling_point SERIES "Lx Ly Lz Lt" "px py pz pt"|"" NODES RANKS: one point of a scaling series, run in
# $EMPRISM_OUT_DIR as <series>-<Lx>x<Ly>x<Lz>x<Lt>-r<ranks>.{toml,h5,log}. Appends "name ranks nodes exit_code" to
# points.txt and sets EMPRISM_FAILED_POINTS on failure; never stops the series.
emprism_scaling_point() {
  local series=$1 extents=$2 procs=$3 nodes=$4 ranks=$5
  local name rc=0
  name="$series-${extents// /x}-r$ranks"
  emprism_write_input "$EMPRISM_OUT_DIR/$name.toml" "$extents" "$procs" "$name.h5" \
    "generated by the EmPRiSM-MPI scaling job $SLURM_JOB_ID: $series scaling, $ranks rank(s) on ${nodes:-?} node(s)"
  emprism_log "point $name: extents ${extents// /x}, ${procs:+grid ${procs// /x}, }$ranks rank(s)"
  (cd "$EMPRISM_OUT_DIR" && emprism_launch "$nodes" "$ranks" "${EMPRISM_CPUS_PER_TASK:-1}" \
    "$EMPRISM_EXE_PATH" "$name.toml" > "$name.log" 2>&1) || rc=$?
  echo "$name $ranks ${nodes:--} $rc" >> "$EMPRISM_OUT_DIR/points.txt"
  if ((rc != 0)); then
    emprism_log "point $name FAILED with exit code $rc; last lines of $name.log:"
    tail -n 5 "$EMPRISM_OUT_DIR/$name.log" || true
    EMPRISM_FAILED_POINTS=$((${EMPRISM_FAILED_POINTS:-0} + 1))
  else
    grep -E "converged in|did not converge" "$EMPRISM_OUT_DIR/$name.log" | sed 's/^.*\] /  /' || true
  fi
}

# emprism_scaling_analysis RANKS_PER_NODE: table (markdown on stdout and in scaling.md, scaling.csv) and plot
# (scaling.png) of the points in $EMPRISM_OUT_DIR. Skipped with a message when no python3 has h5py.
emprism_scaling_analysis() {
  local py
  py=$(emprism_python)
  shopt -s nullglob
  local -a files=("$EMPRISM_OUT_DIR"/*.h5)
  shopt -u nullglob
  if [[ -z $py ]]; then
    emprism_log "no python3 with h5py (set EMPRISM_PYTHON); analyse later with:"
    emprism_log "  python3 $EMPRISM_REPO/jobs/setonix/scaling_table.py --ranks-per-node $1 $EMPRISM_OUT_DIR"
    return 0
  fi
  if ((${#files[@]} == 0)); then
    emprism_log "no output files to analyse"
    return 1
  fi
  "$py" "$EMPRISM_REPO/jobs/setonix/scaling_table.py" --ranks-per-node "$1" --csv "$EMPRISM_OUT_DIR/scaling.csv" \
    --plot "$EMPRISM_OUT_DIR/scaling.png" "${files[@]}" | tee "$EMPRISM_OUT_DIR/scaling.md"
  return "${PIPESTATUS[0]}"
}

# emprism_extents SIZE: "LxxLyxLzxLt" -> "Lx Ly Lz Lt" (4 even integers >= 2), or fail.
emprism_extents() {
  local -a e
  IFS=x read -r -a e <<< "$1"
  ((${#e[@]} == 4)) || emprism_die "size '$1' is not Lx x Ly x Lz x Lt (e.g. 16x16x16x32)"
  local l
  for l in "${e[@]}"; do
    if ! [[ $l =~ ^[0-9]+$ ]] || ((l < 2 || l % 2 != 0)); then
      emprism_die "size '$1': extents must be even integers >= 2"
    fi
  done
  echo "${e[*]}"
}

# emprism_scaling_series "NODES:RANKS ...": for every pair, one strong-scaling point per size in
# EMPRISM_STRONG_SIZES (the program picks the process grid) and one weak-scaling point with the local lattice
# EMPRISM_WEAK_LOCAL per rank (grid from emprism_weak_grid, global lattice = local x grid). NODES may be empty.
emprism_scaling_series() {
  local pair nodes ranks size extents grid l
  local -a local_e g global
  for size in ${EMPRISM_STRONG_SIZES:-}; do
    extents=$(emprism_extents "$size")
    for pair in $1; do
      nodes=${pair%%:*} ranks=${pair#*:}
      emprism_scaling_point strong "$extents" "" "$nodes" "$ranks"
    done
  done
  if [[ -n ${EMPRISM_WEAK_LOCAL:-} ]]; then
    extents=$(emprism_extents "$EMPRISM_WEAK_LOCAL")
    read -r -a local_e <<< "$extents"
    for pair in $1; do
      nodes=${pair%%:*} ranks=${pair#*:}
      grid=$(emprism_weak_grid "$ranks")
      read -r -a g <<< "$grid"
      global=()
      for l in 0 1 2 3; do global+=($((local_e[l] * g[l]))); done
      emprism_scaling_point weak "${global[*]}" "$grid" "$nodes" "$ranks"
    done
  fi
}
