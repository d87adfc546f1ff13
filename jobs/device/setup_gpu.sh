#!/usr/bin/env bash
# setup_gpu.sh: the GPU checks and timings of the device-resident set-up (issue 16) on one H100/H200, for the lead.
#
#   bash jobs/device/setup_gpu.sh            # from the repository root; results under $OUT (or ./setup_gpu_out)
#
# What it does (about 5 minutes of device time on 16 cores; the build is most of it):
#   1. Dependencies the image lacks (toml++, Random123): unpacks the .debs carried in .debs/ as multi_gpu.sh does.
#   2. Builds the CUDA backend for sm_90 (-j16) into build-device/.
#   3. ctest -L gpu (every GPU test, with GpuSetup.*: the clover term, its inverse, the operator and the random gauge
#      field built on the device against the CPU path; GpuPropagator.*: the contractions, the quark smearing, the
#      APE/stout link smearing (LinkSmearingMatchesHost: every link entry and the spatial plaquette within 1e-12 of
#      the host's double path after 5 steps) and the point source on the device against the host code), then the CPU
#      suite's CloverDevice.*, GaugeDevice.*, PropagatorDevice.*, Dirac.*, Solver.* tests, which run on the GPU in
#      this build (the device set-up against make_clover and make_random_gauge to rounding; Philox against Random123
#      bit for bit; the solve of device fields bit for bit against the solve of host vectors; the operator built from
#      the device-resident random field bit for bit against the one built from its host copy:
#      CloverDevice.*FromDeviceField*; link smearing of the device-resident field: PropagatorDevice.LinkSmearing*),
#      and Mpi.Smearing.* (1, 2 and 4 ranks on the one GPU: the device link and quark smearing with host-staged halos
#      against the host's, within 1e-12). Gauge files read straight to the device: GpuSetup.GaugeFileReadToTheDevice*,
#      GpuSetup.UnitGaugeAndSu3Check*, and in the CPU suite GaugeDeviceRead.*, GaugeMilc.DeviceRead*,
#      GaugeOpenQcd.DeviceRead* (the links bit for bit against the host reader, the observables to 1e-13, the same
#      errors) and Mpi.GaugeFile.* (the same on 1, 2 and 4 ranks, every process grid).
#   4. Timings, each run once:
#      one_solve  32^3x64, random gauge (width 0.3, seed 11), csw 1, one fp32 noise solve to 1e-5 (bench_32x64.toml
#                 with metrics.peak = false): the program's "set-up:" line (each step; the plaquette and link trace
#                 are computed on the device inside "gauge": row setup_gauge_observables; the field stays on the
#                 device and the operator is built from it: no setup_gauge_download, no setup_gauge_copy row), the time from the program's first log line to the solve's start
#                 ("before CG", target <= 1.0 s), the whole run (first to last log line) against the solve's CG
#                 time (target <= 1.0 s + 1.2 x solve), and the process wall time.
#      read_solve the same solve on a gauge field READ from a 32^3x64 ILDG file (64-bit, with checksums) that the
#                 program writes first (gen: [generate], one heatbath sweep at beta 6 from the unit field; its file in
#                 the page cache when read): the file is read straight to the device a timeslice at a time (rows
#                 setup_gauge_read, setup_gauge_check, setup_gauge_observables; no setup_gauge_download), with the
#                 same "before CG" and "whole run" figures and targets as one_solve.
#      propagator jobs/bench/propagator_32x64.toml as it is: the whole propagator ("propagator complete in X s")
#                 against the sum of its 12 CG solves (target <= 1.3 x); the device rows of the link smearing
#                 (smearing_slice_links, link_smearing, smearing_plaquette: host_link_smearing is gone), the sources
#                 and contractions (point_source, quark_smearing, meson_contractions, meson_planes;
#                 propagator_download only with output.fields).
#   5. Prints a table and the set-up rows of the kernel table; leaves summary.txt and results.tar.gz in $OUT.
# Exit status: 0 when the build and every test passed (the timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, EMPRISM_DEVICE_SKIP_PROPAGATOR=1, EMPRISM_DEVICE_JOBS (default 16),
# EMPRISM_DEVICE_BUILD_DIR (default build-device), EMPRISM_DEVICE_BACKEND=CPU (trying it without a GPU),
# EMPRISM_DEVICE_EXTENTS (default "32, 32, 32, 64"), EMPRISM_DEVICE_FORCE_DEBS=1.
set -uo pipefail
EMPRISM_DEVICE_NAME=setup_gpu
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 3. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu
  grep -E "Gpu(Setup|Propagator)\." "$out/ctest_gpu.log" | sed 's/^ *[0-9/]* *Test *#[0-9]*: /  /' | tee -a "$summary"
  device_ctest cpu_suite -R '^(CloverDevice|GaugeDevice|GaugeDeviceRead|GaugeMilc|GaugeOpenQcd|PropagatorDevice|Dirac|Solver)\.' -j 8
  device_ctest mpi_smearing -R '^Mpi\.(Smearing|GaugeFile)\.'
fi
say "tests done ($(elapsed))"

# ---- 4. timings ----
exe=$build/emprism-mpi
sed -e "s/^extents = .*/extents = [$extents]/" -e 's/^file = .*/file = "one_solve.h5"/' \
  "$repo/jobs/bench/bench_32x64.toml" > "$work/one_solve.toml"
printf '\n[metrics]\npeak = false\n' >> "$work/one_solve.toml"
sed -e "s/^extents = .*/extents = [$extents]/" "$repo/jobs/bench/propagator_32x64.toml" > "$work/propagator.toml"
run() {  # run NAME: NAME.toml on one rank, not bound to a core (Open MPI binds one rank to one core by default,
  # which leaves the host loops one thread); leaves NAME.log, NAME.rc and NAME.wall (process seconds)
  local a b
  a=$(date +%s.%N)
  (cd "$work" && OMP_NUM_THREADS=$jobs timeout 300 mpiexec -n 1 --bind-to none "$exe" "$1.toml" > "$1.log" 2>&1
  echo $? > "$1.rc")
  b=$(date +%s.%N)
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }' > "$work/$1.wall"
}
stamp() {  # stamp NAME PATTERN: seconds of the day of the first log line matching PATTERN
  grep -m1 -E "$2" "$work/$1.log" | sed -n 's/^\[[0-9-]* \([0-9]*\):\([0-9]*\):\([0-9.]*\)\].*/\1 \2 \3/p' |
    awk '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }'
}
lstamp() {  # the same for the last matching line
  grep -E "$2" "$work/$1.log" | tail -1 | sed -n 's/^\[[0-9-]* \([0-9]*\):\([0-9]*\):\([0-9.]*\)\].*/\1 \2 \3/p' |
    awk '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }'
}
diff_s() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.3f", b - a }'; }
run one_solve
printf '%s\n' "[lattice]" "extents = [$extents]" "[gauge]" 'source = "heatbath"' "sweeps = 0" "seed = 3" "[dirac]" \
  "kappa = 0.12" "csw = 1.0" "[generate]" "count = 1" "every = 1" 'prefix = "conf"' "[output]" 'file = "gen.h5"' \
  "overwrite = true" > "$work/gen.toml"
run gen
sed -e 's/^source = .*/source = "file"\nfile = "conf_000001.ildg"/' -e '/^width = /d' -e '/^seed = 11$/d' \
  -e 's/^file = "one_solve.h5"/file = "read_solve.h5"/' "$work/one_solve.toml" > "$work/read_solve.toml"
run read_solve
rm -f "$work/conf_000001.ildg"
[ "${EMPRISM_DEVICE_SKIP_PROPAGATOR:-0}" = 1 ] || run propagator
say "timings done ($(elapsed))"

# ---- 5. table ----
say ""
say "lattice [$extents], backend $backend"
report_solve() {  # report_solve NAME: before CG, whole run against the solve, the set-up line and rows
  local w=$1 first before whole solve limit
  first=$(stamp "$w" "emprism-mpi ")
  before=$(diff_s "$first" "$(stamp "$w" "solve '[a-z_]*': [a-z_]* source")")
  whole=$(diff_s "$first" "$(lstamp "$w" "wrote ")")
  solve=$(sed -n "s/.*solve '[a-z]*': converged in .*, \([0-9.]*\) s$/\1/p" "$work/$w.log" | head -1)
  limit=$(awk -v s="$solve" 'BEGIN { if (s == "") print "-"; else printf "%.3f", 1.0 + 1.2 * s }')
  say "$w (exit $(cat "$work/$w.rc")): before CG ${before} s (target <= 1.0); whole run ${whole} s, solve" \
    "${solve:--} s, target whole <= ${limit} s; process wall $(cat "$work/$w.wall") s"
  grep -E "set-up: |\] read " "$work/$w.log" | sed 's/^.*\] /  /' | tee -a "$summary"
  grep -E "^\[.*\] (setup[._][a-z_.]*) " "$work/$w.log" | sed 's/^.*\] /  /' | tee -a "$summary"
}
report_solve one_solve
say "gen (exit $(cat "$work/gen.rc")): wrote the 32^3x64 ILDG file, process wall $(cat "$work/gen.wall") s"
report_solve read_solve
if [ "${EMPRISM_DEVICE_SKIP_PROPAGATOR:-0}" != 1 ]; then
  w=propagator
  prop=$(sed -n "s/.*propagator complete in \([0-9.]*\) s$/\1/p" "$work/$w.log" | head -1)
  cg=$(sed -n "s/.*(spin [0-9], colour [0-9]): converged in .*, \([0-9.]*\) s$/\1/p" "$work/$w.log" |
    awk '{ s += $1; n++ } END { if (n) printf "%.3f %d", s, n }')
  ratio=$(echo "$prop $cg" | awk 'NF == 3 && $2 > 0 { printf "%.2f", $1 / $2 }')
  say "propagator (exit $(cat "$work/$w.rc")): whole ${prop:--} s, sum of CG ${cg:--} (s, solves), ratio ${ratio:--}" \
    "(target <= 1.3); process wall $(cat "$work/$w.wall") s"
  grep -E "set-up: " "$work/$w.log" | sed 's/^.*\] /  /' | tee -a "$summary"
  grep -E "^\[.*\] (setup[._][a-z_.]*|host_[a-z_]*|smearing_slice_links|link_smearing|smearing_plaquette|point_source|quark_smearing|meson_[a-z]*|propagator_download) " \
    "$work/$w.log" | sed 's/^.*\] /  /' | tee -a "$summary"
fi
touch "$out/ctest_gpu.log" "$out/ctest_cpu_suite.log" "$out/ctest_mpi_smearing.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_cpu_suite.log \
  ctest_mpi_smearing.log \
  2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
