// driver.cpp: the program behind main() (see driver.hpp): the command line (CLI11), the checks of the input and the
// output before any work, the dry run, the run itself (execute.hpp), and the one-line error reports.
// Order of work: parse the command line; read and validate the whole input, the output path and the resume decision
// and build the process grid on every rank (no file is touched before this succeeds; the ranks agree on the first
// failure, so a bad input ends every rank with exit code 2 and one error line); set up logging; then execute.
#include "src/run/driver.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
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
#include "src/run/gauge_setup.hpp"
#include "src/run/input.hpp"
#include "src/run/memory_check.hpp"
#include "src/run/output_lock.hpp"
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

void log_setup(const Config& cfg, const Communicator& comm, const ProcessGrid& grid) {
  const Extents& e = cfg.lattice.extents;
  spdlog::info("emprism-mpi {} ({}), backend {}, {} rank(s); rank 0 device: {}", EMPRISM_VERSION, EMPRISM_GIT_HASH,
               backend::name(), comm.size(), backend::device_name());
  spdlog::info("input {}: lattice {} ({} sites), precision {}{}, kappa {}, csw {}, theta/pi ({}, {}, {}, {})",
               cfg.input_path, extents_str(e), std::int64_t(e[0]) * e[1] * e[2] * e[3],
               choice_name(cfg.solver.precision),
               cfg.solver.sloppy == Sloppy::Single ? "" : " (sloppy " + choice_name(cfg.solver.sloppy) + ")",
               cfg.dirac.kappa, cfg.dirac.csw, cfg.dirac.theta_over_pi[0], cfg.dirac.theta_over_pi[1],
               cfg.dirac.theta_over_pi[2], cfg.dirac.theta_over_pi[3]);
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

// Rank 0 takes the lock of the output (a dry run only checks that no live run holds it): before the output or its
// partial file is read, created or truncated. InputError naming output.file and the owner.
void lock_output(const CommandLine& cl, const Config& cfg, Communicator& comm, OutputLock& lock) {
  if (comm.rank() != 0) return;
  check_output_location(cfg.output.file);
  if (!cl.dry_run) {
    lock.acquire(cfg.output.file);
    return;
  }
  const std::string owner = OutputLock::live_owner(cfg.output.file);
  if (!owner.empty())
    throw InputError("output.file: '" + cfg.output.file + "' is being written by another run (" + owner +
                     ", lock file '" + OutputLock::lock_path(cfg.output.file) + "')");
}

// Reads and checks the input and the output on this rank (InputError naming the key or file); rank 0 takes the
// output's lock. Creates nothing else.
Validated validate(const CommandLine& cl, Communicator& comm, OutputLock& lock) {
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
  check_generate_output(cfg);
  lock_output(cl, cfg, comm, lock);
  CheckpointOptions options;
  options.overwrite = cfg.output.overwrite;
  options.resume = cfg.output.resume;
  options.physics_inputs = physics_inputs(cfg);
  v.plan = plan_output(cfg.output.file, options);
  if (cfg.output.io == OutputIo::Collective && !io::h5::collective_available())
    throw InputError(
        "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" or "
        "\"auto\"");
  return v;
}

// Logging (per-rank log files only for a run, not a dry run), once every rank agreed the input is valid.
void start_logging(const CommandLine& cl, const Config& cfg, const Communicator& comm) {
  try {
    io::setup_logging(cfg.log.level, comm.rank(), cfg.log.per_rank && !cl.dry_run ? cfg.output.file : std::string());
  } catch (const InputError& e) {
    throw InputError(std::string("log.per_rank: ") + e.what());
  }
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
                                                 cfg.solves.size() * std::max<std::size_t>(1, cfg.gauge.members.size()),
                                                 partial_path(cfg.output.file)));
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
  const int failing_rank = first_failing_rank(comm, !error.empty(), error);
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

// "<input>: <message>" unless the message names the input already.
std::string with_input(const CommandLine& cl, const std::string& message) {
  return message.rfind(cl.input, 0) == 0 || message.rfind("--set ", 0) == 0 ? message : cl.input + ": " + message;
}

// After a failed run (rank 0): where the complete solves are kept, if any.
void keep_partial_note(const Config& cfg) {
  std::error_code ec;
  if (std::filesystem::exists(partial_path(cfg.output.file), ec))
    spdlog::info("the complete solves are kept in {}; run again with output.resume = true to continue",
                 partial_path(cfg.output.file));
}

// A failure every rank shares: rank 0 alone reports it; every rank returns `code` (no abort).
int end_together(const Communicator& comm, const Config& cfg, const std::string& message, int code) {
  if (comm.rank() == 0) {
    io::print_error(message);
    keep_partial_note(cfg);
  }
  return code;
}

// lattice.extents: a rank's block must be indexable by the kernels (32-bit site indices) and fit in the memory of
// the rank (memory_check.hpp), checked before anything is allocated. A dry run logs the estimate. Local.
void check_memory(const CommandLine& cl, const Config& cfg, const Communicator& comm, const ProcessGrid& grid,
                  int node_ranks) {
  const Extents local = grid.local_extents(cfg.lattice.extents);
  const std::int64_t vol = std::int64_t(local[0]) * local[1] * local[2] * local[3];
  if (vol > INT32_MAX)
    throw InputError("lattice.extents: the local lattice " + extents_str(local) + " has " + std::to_string(vol) +
                     " sites, more than 2^31 - 1 per rank (the kernels index sites with 32-bit integers); use more "
                     "ranks");
  const MemoryNeed need = memory_need(cfg, vol);
  const MemoryHave have = memory_have(node_ranks);
  if (cl.dry_run && comm.rank() == 0) spdlog::info("dry run: {}", memory_summary(need, have));
  const std::string refusal = memory_refusal(need, have, extents_str(local));
  if (!refusal.empty()) throw InputError(refusal);
}

// Validation in phases, each ending with an agreement (so no rank enters a collective call another rank skipped):
// the input, the output and its lock; the process grid; the transport and the logging; the memory. False after one line
// was reported (exit code 2).
bool agree_valid(const CommandLine& cl, Communicator& comm, Validated& v, ProcessGrid& grid, OutputLock& lock) {
  std::string error;
  auto input_error = [&](const InputError& e) { error = with_input(cl, e.what()); };
  try {
    v = validate(cl, comm, lock);
  } catch (const InputError& e) {
    input_error(e);
  }
  if (report_first_error(comm, error)) return false;
  try {  // the same input on every rank: the same outcome, before and after its collective calls
    grid = make_process_grid(comm, v.cfg.lattice.extents, v.cfg.lattice.procs, v.cfg.comm.force_halo);
  } catch (const InputError& e) {
    input_error(e);
  }
  if (report_first_error(comm, error)) return false;
  // The transport needs the grid, and its check is collective: only now that every rank has one.
  try {
    check_transport_request(transport_request(v.cfg.comm), grid);
    start_logging(cl, v.cfg, comm);
  } catch (const InputError& e) {
    input_error(e);
  }
  if (report_first_error(comm, error)) return false;
  const int node_ranks = comm.local_size();  // collective: before anything that may throw
  try {
    check_memory(cl, v.cfg, comm, grid, node_ranks);
  } catch (const InputError& e) {
    input_error(e);
  }
  return !report_first_error(comm, error);
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
  set_fault_reporter([](const std::string& line) { io::print_error(line); });

  if (argc >= 2 && std::string(argv[1]) == "gauge-info") return run_gauge_info(comm, argc - 1, argv + 1);

  CLI::App cli{
      "EmPRiSM-MPI: even-odd preconditioned CG for the Wilson-clover Dirac equation.\n"
      "Output: one HDF5 file (see README.md). Exit codes: 0 converged, 1 failure, 2 bad input, "
      "3 not converged or not finite.",
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
  Validated v;
  OutputLock lock;  // rank 0: held until the run ends
  if (!agree_valid(cl, comm, v, grid, lock)) return kExitInput;
  if (!lock.takeover().empty()) spdlog::warn("output: {}", lock.takeover());

  try {
    return run_validated(v, cl, comm, grid);
  } catch (const NonFiniteError& e) {  // thrown on every rank alike (global values): one line, no abort
    return end_together(comm, v.cfg, e.what(), kExitNotConverged);
  } catch (const AgreedInputError& e) {  // e.g. a damaged gauge file: every rank alike
    return end_together(comm, v.cfg, with_input(cl, e.what()), kExitInput);
  } catch (const AgreedRuntimeFailure& e) {  // e.g. a write error on any rank, agreed in comm/
    return end_together(comm, v.cfg, e.what(), kExitFailure);
  } catch (const std::exception& e) {
    // A failure of this rank alone must not leave the others waiting in a collective: end the whole job.
    const bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    const std::string text = input ? with_input(cl, e.what()) : std::string(e.what());
    io::print_error(comm.size() > 1 ? text + " (on rank " + std::to_string(comm.rank()) + ")" : text);
    if (comm.rank() == 0) keep_partial_note(v.cfg);
    lock.release();
    if (comm.size() > 1) comm.abort(input ? kExitInput : kExitFailure);
    return input ? kExitInput : kExitFailure;
  }
}

}  // namespace emprism::run
