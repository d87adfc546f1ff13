// driver.cpp: the program behind main() (see driver.hpp): the command line (CLI11), the checks of the input and the
// output before any work, the dry run, the run itself (execute.hpp), and the one-line error reports.
// Order of work: parse the command line; read and validate the whole input, the output path and the resume decision
// and build the process grid on every rank (no file is touched before this succeeds; the ranks agree on the first
// failure, so a bad input ends every rank with exit code 2 and one error line); set up logging; then execute.
#include "src/run/driver.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/communicator.hpp"
#include "comm/halo_policy.hpp"
#include "comm/process_grid.hpp"
#include "emprism_version.hpp"
#include "io/gauge/gauge_file.hpp"
#include "io/logging.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "src/physics/peak.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/execute.hpp"
#include "src/run/input.hpp"
#include "src/run/overrides.hpp"
#include "src/run/parameters.hpp"
#include "src/run/plan.hpp"
#include "src/run/solver.hpp"
#include "src/run/tasks.hpp"

namespace emprism::run {

namespace {

std::string extents_str(const Extents& e) {
  return std::to_string(e[0]) + "x" + std::to_string(e[1]) + "x" + std::to_string(e[2]) + "x" + std::to_string(e[3]);
}

// Bytes of device memory the solve needs (fields of precision R plus the double outer fields when mixed).
double memory_estimate(const Config& cfg, std::int64_t volume) {
  const double vh = volume / 2.0;
  auto per_precision = [&](double r) {
    const double gauge = 8 * vh * 18 * r, clover = 4 * vh * 72 * r, spinors = 16 * vh * 24 * r;
    return gauge + clover + spinors;
  };
  switch (cfg.solver.precision) {
    case Precision::Single:
      return per_precision(4);
    case Precision::Double:
      return per_precision(8);
    case Precision::Mixed:
      return per_precision(4) + per_precision(8);
  }
  return 0;
}

void log_setup(const Config& cfg, const Communicator& comm, const ProcessGrid& grid) {
  const Extents& e = cfg.lattice.extents;
  spdlog::info("emprism-mpi {} ({}), backend {}, {} rank(s); rank 0 device: {}", EMPRISM_VERSION, EMPRISM_GIT_HASH,
               backend::name(), comm.size(), backend::device_name());
  spdlog::info("input {}: lattice {} ({} sites), precision {}, kappa {}, csw {}, theta/pi ({}, {}, {}, {})",
               cfg.input_path, extents_str(e), std::int64_t(e[0]) * e[1] * e[2] * e[3],
               choice_name(cfg.solver.precision), cfg.dirac.kappa, cfg.dirac.csw, cfg.dirac.theta_over_pi[0],
               cfg.dirac.theta_over_pi[1], cfg.dirac.theta_over_pi[2], cfg.dirac.theta_over_pi[3]);
  spdlog::info("process grid {} (local lattice {}), halo exchange in x y z t: {} {} {} {}", extents_str(grid.dims),
               extents_str(grid.local_extents(e)), grid.partitioned[0] ? "yes" : "no",
               grid.partitioned[1] ? "yes" : "no", grid.partitioned[2] ? "yes" : "no",
               grid.partitioned[3] ? "yes" : "no");
  spdlog::info("{} solve(s), tol {:.1e}, max_iter {}; output {}", cfg.solves.size(), cfg.solver.tol,
               cfg.solver.max_iter, cfg.output.file);
}

// --dry-run: the decomposition and the memory estimates.
void log_dry_run(const Config& cfg, const ProcessGrid& grid) {
  const Extents local = grid.local_extents(cfg.lattice.extents);
  const std::int64_t vol = std::int64_t(local[0]) * local[1] * local[2] * local[3];
  spdlog::info("dry run: input is valid; process grid {}, local lattice {}, estimated memory {:.1f} MiB per rank",
               extents_str(grid.dims), extents_str(local), memory_estimate(cfg, vol) / (1024.0 * 1024.0));
  double host = 0;
  for (const auto& task : make_tasks(cfg)) host = std::max(host, task->host_bytes(vol));
  if (host > 0)
    spdlog::info("dry run: a propagator holds {:.1f} MiB of host memory per rank (12 columns, double)",
                 host / (1024.0 * 1024.0));
}

// --dry-run: the solves in order with their estimated times, on stdout whatever the log level (rank 0).
void print_solve_plan(const Config& cfg, const ProcessGrid& grid, const RunState& previous, const Communicator& comm) {
  if (comm.rank() != 0) return;
  AssumedBandwidth bw = nominal_bandwidth();
  if (cfg.metrics.peak) {
    const PeakBandwidth p = measure_peak_bandwidth();
    bw = {p.peak_gbs,
          fmt::format("the measured peak {:.1f} GB/s of rank 0 (copy, triad and read streams)", p.peak_gbs)};
  }
  std::set<std::string> complete;
  for (const CompleteSolve& c : previous.solves) complete.insert(c.name);
  std::fputs(solve_plan(cfg, grid, bw, complete).c_str(), stdout);
  std::fflush(stdout);
}

// The subcommands, for --help (one line each; each has its own --help).
constexpr char kSubcommands[] =
    "Subcommands (emprism-mpi SUBCOMMAND --help for their options):\n"
    "  gauge-info FILE [--format F]  check a gauge configuration file (ILDG, NERSC, openQCD, MILC) and print one "
    "JSON line: format, extents, precision, checksum, plaquette, link trace";

// What the command line asks for.
struct CommandLine {
  std::string input;
  bool dry_run = false, resume = false;
  std::string log_level;
  std::vector<std::string> settings;  // --set table.key=value, in the order given
};

// The state every rank agreed on before any work.
struct Validated {
  Config cfg;
  OutputPlan plan;  // resume decision: the previous run's state, or output.file already complete
};

// Reads and checks the input, the output and the process grid on this rank (InputError naming the key or file).
Validated validate(const CommandLine& cl, Communicator& comm, ProcessGrid& grid) {
  Validated v;
  v.cfg = load_config(cl.input, cl.settings);
  Config& cfg = v.cfg;
  if (!cl.log_level.empty()) cfg.log.level = cl.log_level;
  if (cl.resume) cfg.output.resume = true;
  try {
    io::check_log_level(cfg.log.level);
  } catch (const InputError& e) {
    throw InputError(std::string("log.level: ") + e.what());
  }
  try {
    io::setup_logging(cfg.log.level, comm.rank(), cfg.log.per_rank ? cfg.output.file : std::string());
  } catch (const InputError& e) {
    throw InputError(std::string("log.per_rank: ") + e.what());
  }
  CheckpointOptions options;
  options.overwrite = cfg.output.overwrite;
  options.resume = cfg.output.resume;
  options.physics_inputs = physics_inputs(cfg);
  v.plan = plan_output(cfg.output.file, options);
  if (cfg.output.io == OutputIo::Collective && !io::h5::collective_available())
    throw InputError(
        "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" or "
        "\"auto\"");
  grid = make_process_grid(comm, cfg.lattice.extents, cfg.lattice.procs, cfg.comm.force_halo);
  return v;
}

// After validation: nothing to do, the dry run, or the run. Failures throw.
int run_validated(const Validated& v, const CommandLine& cl, Communicator& comm, const ProcessGrid& grid) {
  const Config& cfg = v.cfg;
  const RunState& previous = v.plan.previous;
  if (v.plan.already_complete) {
    bool converged = true;
    for (const CompleteSolve& c : previous.solves) converged = converged && c.converged;
    spdlog::info("resume: {} already holds all {} solve(s) of this input; nothing to do", cfg.output.file,
                 previous.solves.size());
    return converged ? kExitOk : kExitNotConverged;
  }
  backend::select_device(comm.local_rank());
  log_setup(cfg, comm, grid);
  if (cfg.output.resume) {
    spdlog::info("resume: {}", previous.solves.empty()
                                   ? "no complete solve to carry over; starting from the beginning"
                                   : fmt::format("{} of {} solve(s) complete in {}", previous.solves.size(),
                                                 cfg.solves.size(), partial_path(cfg.output.file)));
  }
  if (cl.dry_run) {
    log_dry_run(cfg, grid);
    print_solve_plan(cfg, grid, previous, comm);
    return kExitOk;
  }
  return execute(cfg, comm, grid);
}

// The ranks agree on the first rank with an error (`error` not empty); it prints it. True when there was one.
bool report_first_error(Communicator& comm, const std::string& error) {
  const int failing_rank = first_failing_rank(comm, !error.empty());
  if (failing_rank == comm.size()) return false;
  if (comm.rank() == failing_rank) io::print_error(error);
  return true;
}

// A parse error of CLI11: --help and --version print and exit 0 (rank 0), anything else is a one-line error (2).
int cli_exit(const CLI::App& cli, const CLI::ParseError& e, const Communicator& comm, const std::string& where) {
  if (e.get_exit_code() == 0) {
    if (comm.rank() == 0) cli.exit(e);
    return kExitOk;
  }
  if (comm.rank() == 0) io::print_error(where + ": " + e.what() + " (see --help)");
  return kExitInput;
}

}  // namespace

// `emprism-mpi gauge-info FILE [--format F]`: one JSON line describing a gauge configuration file (format,
// extents, precision, checksum status, plaquette, link trace); reads the whole file on rank 0.
int run_gauge_info(Communicator& comm, int argc, char** argv) {
  CLI::App cli{"Checks a gauge configuration file and prints one JSON line about it.", "emprism-mpi gauge-info"};
  std::string path, format = "auto";
  cli.add_option("file", path, "gauge configuration file")->required();
  cli.add_option("--format", format, "auto, ildg, nersc, openqcd or milc (default: detected from the file)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli_exit(cli, e, comm, "gauge-info");
  }
  if (comm.rank() != 0) return kExitOk;
  try {
    const auto fmt = io::parse_gauge_format(format);
    if (!fmt) throw InputError("gauge-info: --format: '" + format + "' is not one of auto, ildg, nersc, openqcd, milc");
    std::printf("%s\n", io::gauge_info_json(io::inspect_gauge_file(path, *fmt)).c_str());
    return kExitOk;
  } catch (const InputError& e) {
    io::print_error(e.what());
    return kExitInput;
  } catch (const std::exception& e) {
    io::print_error(e.what());
    return kExitFailure;
  }
}

int run_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  Communicator comm;

  if (argc >= 2 && std::string(argv[1]) == "gauge-info") return run_gauge_info(comm, argc - 1, argv + 1);

  CLI::App cli{
      "EmPRiSM-MPI: even-odd preconditioned CG for the Wilson-clover Dirac equation.\n"
      "Output: one HDF5 file (see README.md). Exit codes: 0 converged, 1 failure, 2 bad input, "
      "3 not converged.",
      "emprism-mpi"};
  CommandLine cl;
  cli.add_option("input", cl.input, "TOML input file")->required();
  cli.add_flag("--dry-run", cl.dry_run,
               "validate the input, print the solves it would run (type, precision, tolerance, sources, estimated "
               "time), the decomposition and the memory estimate, and exit");
  cli.add_flag("--resume", cl.resume,
               "as output.resume = true: continue an interrupted run from <output.file>.partial (same input)");
  cli.add_option("--log-level", cl.log_level, "override log.level (trace, debug, info, warn, error)")
      ->check([](const std::string& level) {
        try {
          io::check_log_level(level);
          return std::string();
        } catch (const InputError& e) {
          return std::string(e.what());
        }
      });
  cli.add_option("--set", cl.settings,
                 "set an input key over the file's value, as if it were in the file (repeatable): "
                 "--set dirac.kappa=0.1365 --set solve[0].tol=1e-10; /input records the effective input")
      ->type_name("TABLE.KEY=VALUE")
      ->allow_extra_args(false);
  cli.footer(kSubcommands);
  cli.set_version_flag("--version", std::string("emprism-mpi ") + EMPRISM_VERSION + " (git " + EMPRISM_GIT_HASH +
                                        ", backend " + EMPRISM_BACKEND_NAME + ")");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli_exit(cli, e, comm, "command line");
  }

  // Input checks run on every rank (all read the same file); the ranks agree on the outcome, so a bad input ends
  // every rank with exit code 2 and one error line, and never leaves some ranks waiting.
  ProcessGrid grid;
  struct CartGuard {  // the Cartesian communicator is freed before MPI_Finalize
    ProcessGrid& g;
    ~CartGuard() { free_process_grid(g); }
  } cart_guard{grid};
  std::string error;
  Validated v;
  try {
    v = validate(cl, comm, grid);
  } catch (const InputError& e) {
    error = e.what();
    if (error.rfind(cl.input, 0) != 0 && error.rfind("--set ", 0) != 0) error = cl.input + ": " + error;
  }
  if (report_first_error(comm, error)) return kExitInput;
  // The transport needs the grid, and its check is collective: only now that every rank has one.
  try {
    check_transport_request(transport_request(v.cfg.comm), grid);
  } catch (const InputError& e) {
    error = cl.input + ": " + e.what();
  }
  if (report_first_error(comm, error)) return kExitInput;

  try {
    return run_validated(v, cl, comm, grid);
  } catch (const std::exception& e) {
    // A failure on one rank must not leave the others waiting in a collective: end the whole job.
    io::print_error(comm.size() > 1 ? "rank " + std::to_string(comm.rank()) + ": " + e.what() : e.what());
    std::error_code ec;
    if (comm.rank() == 0 && std::filesystem::exists(partial_path(v.cfg.output.file), ec)) {
      spdlog::info("the complete solves are kept in {}; run again with output.resume = true to continue",
                   partial_path(v.cfg.output.file));
    }
    if (comm.size() > 1) comm.abort(kExitFailure);
    return kExitFailure;
  }
}

}  // namespace emprism::run
