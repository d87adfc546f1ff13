// execute.cpp: one run (see execute.hpp): set-up, the output file's header, the task loop over the checkpoint store,
// the metrics and the timing summary.
#include "src/run/execute.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <thread>

#include "comm/collectives.hpp"
#include "emprism_version.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/context.hpp"
#include "src/physics/clover_device.hpp"
#include "src/physics/peak.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/gauge_setup.hpp"
#include "src/run/input.hpp"
#include "src/run/parameters.hpp"
#include "src/run/schema.hpp"
#include "src/run/tasks.hpp"
#include "src/run/tune_setup.hpp"

namespace emprism::run {

namespace {

constexpr double kPi = 3.14159265358979323846;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The date of rank 0 on every rank (attributes must be identical on all ranks).
std::string utc_now(Communicator& comm) {
  long long now = static_cast<long long>(std::time(nullptr));
  broadcast(comm, now);
  const std::time_t t = static_cast<std::time_t>(now);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A test hook's count from the environment, or -1 when unset.
int test_hook(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : -1;
}

// Test hooks (tests only), after `done` solves of this run are complete (0: after the header is written):
//   EMPRISM_TEST_CRASH_AFTER_SOLVES=k  every rank is killed (SIGKILL, no clean-up)
//   EMPRISM_TEST_PAUSE_AFTER_SOLVES=k  rank 0 creates "<partial file>.paused", and every rank waits until it is gone
void run_test_hooks(int done, Communicator& comm, const std::string& partial) {
  if (done == test_hook("EMPRISM_TEST_CRASH_AFTER_SOLVES")) {
    spdlog::warn("test hook EMPRISM_TEST_CRASH_AFTER_SOLVES={}: killing the run now", done);
    comm.barrier();
    std::raise(SIGKILL);
  }
  if (done != test_hook("EMPRISM_TEST_PAUSE_AFTER_SOLVES")) return;
  const std::string flag = partial + ".paused";
  if (comm.rank() == 0) {
    std::FILE* f = std::fopen(flag.c_str(), "w");
    if (f != nullptr) std::fclose(f);
    while (std::FILE* g = std::fopen(flag.c_str(), "r")) {
      std::fclose(g);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  comm.barrier();
}

// The operator's parameters from [dirac] and [comm]: built once, for the clover term and the operator alike.
DiracParams dirac_params(const Config& cfg) {
  DiracParams dp;
  dp.kappa = cfg.dirac.kappa;
  dp.csw = cfg.dirac.csw;
  for (int mu = 0; mu < 4; ++mu) dp.theta[mu] = cfg.dirac.theta_over_pi[mu] * kPi;
  dp.reconstruct = cfg.dirac.reconstruct;
  dp.transport = transport_request(cfg.comm);
  dp.report = [](const std::string& line) { spdlog::info("{}", line); };
  return dp;
}

// Per-rank times into /metrics/ranks, and one log line on the load balance and the hidden halo time.
RankTimes rank_times(Communicator& comm, const MetricsRegistry& metrics, const HaloStats& halo) {
  double kernels = 0;
  for (const auto& k : metrics.table()) kernels += k.total_s;
  const ReductionStats& red = metrics.reductions();
  const RankTimes t{comm.rank(),
                    kernels - halo.wait_s,
                    halo.wait_s,
                    comm.reduction_seconds(),
                    red.cg_iterations > 0 ? static_cast<double>(red.cg_reductions) / red.cg_iterations : 0.0,
                    red.wait_s};
  double v[4] = {t.compute_s, t.compute_s, halo.wait_s, halo.exchange_s};
  reduce_max(comm, v, 1);
  reduce_sum(comm, v + 1, 3);
  const double mean = v[1] / comm.size();
  if (comm.size() > 1 || v[3] > 0) {
    spdlog::info(
        "ranks: compute max {:.3f} s, mean {:.3f} s (load balance {:.1f}%); halo exchange {:.3f} s, of "
        "which {:.1f}% hidden behind compute",
        v[0], mean, v[0] > 0 ? 100.0 * mean / v[0] : 100.0, v[3] / comm.size(),
        v[3] > 0 ? 100.0 * std::max(0.0, 1.0 - v[2] / v[3]) : 100.0);
  }
  return t;
}

// Rank 0's /metrics/comm rows.
void log_comm_table(const std::vector<CommRow>& rows) {
  for (const CommRow& r : rows)
    spdlog::info(
        "halo {} (fp{}): {}, {} exterior, {:.2f} MB per call, {} calls, exchange {:.4f} s, exposed {:.4f} s "
        "({:.1f}% hidden)",
        "xyzt"[r.direction & 3], r.precision_bits, r.transport, r.exterior, r.bytes_per_call / 1e6, r.calls,
        r.exchange_s, r.exposed_s, 100.0 * r.hidden_fraction);
}

void log_kernel_table(const MetricsRegistry& m) {
  spdlog::info("{:<24} {:>8} {:>12} {:>10} {:>10} {:>8}", "kernel", "calls", "ms/call", "GFLOP/s", "GB/s", "%peak");
  for (const auto& k : m.table()) {
    spdlog::info("{:<24} {:>8} {:>12.4f} {:>10.2f} {:>10.2f} {:>8.1f}", k.name, k.calls, 1e3 * k.mean_s,
                 k.total_s > 0 ? k.flops / k.total_s / 1e9 : 0.0, k.gbs, k.percent_of_peak);
  }
}

// The gauge field solved on, for /gauge and the resume check.
struct GaugeSummary {
  double plaquette = 0, link_trace = 0;  // of the field solved on (after [generate] when there is one)
  GaugeOrigin origin;
};

// Root attributes and /input.
void write_run_header(CheckpointStore& store, const Config& cfg, Communicator& comm, const ProcessGrid& grid,
                      const std::string& physics) {
  RootInfo root;
  root.program_version = EMPRISM_VERSION;
  root.git_hash = EMPRISM_GIT_HASH;
  root.date = utc_now(comm);
  root.backend = backend::name();
  root.device = backend::device_name();
  root.ranks = comm.size();
  root.process_grid = grid.dims;
  root.extents = cfg.lattice.extents;
  root.precision = choice_name(cfg.solver.precision);
  root.physics_inputs = physics;
  root.input_hash = text_hash(physics);
  write_root(store.file(), root);
  write_input(store.file(), cfg.input_text);
}

// /gauge below the file's root (links of the field solved on when output.write_gauge), flushed.
void write_gauge_group(CheckpointStore& store, const Config& cfg, RunGauge& gauge, const GaugeSummary& summary) {
  GaugeInfo gi;
  gi.source = choice_name(cfg.gauge.source);
  gi.plaquette = summary.plaquette;
  gi.link_trace = summary.link_trace;
  gi.file = summary.origin.file;
  gi.format = summary.origin.format;
  gi.checksum = summary.origin.checksum;
  const Geometry& geom = gauge.geometry();
  std::vector<std::complex<double>> links;
  if (cfg.output.write_gauge) links = gauge_to_natural(gauge.host());  // the host copy only when written
  write_gauge(store.file(), gi, BlockLayout{geom.global(), geom.local(), geom.origin()},
              cfg.output.write_gauge ? &links : nullptr);
  store.flush();
}

// The set-up before the first task, step by step: each step's wall time (device work included: the step waits for
// the device) is a row "setup.<step>" of /metrics/kernels and a term of the log line.
class SetupClock {
 public:
  explicit SetupClock(MetricsRegistry& metrics) : metrics_(metrics), start_(std::chrono::steady_clock::now()) {
    last_ = start_;
  }
  void step(const char* name) {
    backend::synchronize();
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    metrics_.record(std::string("setup.") + name, s, 0, 0);
    steps_ += fmt::format("{}{} {:.3f} s", steps_.empty() ? "" : ", ", name, s);
  }
  void log() const { spdlog::info("set-up: {:.3f} s before the first task ({})", seconds_since(start_), steps_); }

 private:
  MetricsRegistry& metrics_;
  std::chrono::steady_clock::time_point start_, last_;
  std::string steps_;
};

// Links of 12 or 8 reals (dirac.reconstruct) need the field in SU(3): checked on every rank before anything is written,
// to the SU(3) tolerance of the outer operator's precision (exit 2 naming the key and the first bad link).
void check_reconstruct(const Config& cfg, RunGauge& gauge, Communicator& comm, SetupClock& setup) {
  const int rc = cfg.dirac.reconstruct;
  if (rc == 18) return;
  const double tol = su3_tolerance(cfg.solver.precision == Precision::Single ? 32 : 64);
  agreed_step(comm, [&] {
    try {
      check_link_format(gauge.host(), rc, tol);
    } catch (const InputError& e) {
      throw InputError(std::string("dirac.reconstruct: ") + e.what());
    }
  });
  setup.step("link_check");
  spdlog::info("links stored in {} reals (dirac.reconstruct): every link in SU(3) and packed within {:.0e}", rc, tol);
}

// The plaquette and link trace into summary: those computed where the field was made (observed), else from its host
// copy; logged. Collective.
void observe_gauge(const Config& cfg, RunGauge& gauge, const std::optional<GaugeObservables>& observed,
                   Communicator& comm, GaugeSummary& summary) {
  summary.plaquette = observed ? observed->plaquette : plaquette(gauge.host(), &comm);
  summary.link_trace = observed ? observed->link_trace : link_trace(gauge.host(), &comm);
  spdlog::info("gauge field: {}, plaquette {:.12f}, link trace {:.12f}", gauge_description(cfg), summary.plaquette,
               summary.link_trace);
}

// The operator from the field where it was made (on the device: no host copy of it).
std::unique_ptr<Solver> solver_for(const SolverConfig& sc, Context& ctx, const Geometry& geom, RunGauge& gauge,
                                   const DiracParams& dirac) {
  return gauge.device() ? make_solver(sc.precision, sc.sloppy, ctx, geom, *gauge.device(), dirac)
                        : make_solver(sc.precision, sc.sloppy, ctx, geom, gauge.host(), dirac);
}

// The field of gauge.source, then [generate]'s configurations; the summary is of the field solved on.
RunGauge gauge_field(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                     MetricsRegistry& metrics, SetupClock& setup, GaugeSummary& summary) {
  std::optional<GaugeObservables> observed;  // computed where the field was made (on the device without [generate])
  RunGauge gauge = make_run_gauge(cfg, geom, grid, comm, metrics, &summary.origin, &observed);
  setup.step("gauge");
  observe_gauge(cfg, gauge, observed, comm, summary);
  setup.step("observables");
  if (!cfg.generate.enabled) return gauge;
  GenerateTask(cfg, metrics).execute(gauge.host(), grid, comm, &summary.origin);  // (a host field: make_run_gauge)
  summary.plaquette = plaquette(gauge.host(), &comm);
  summary.link_trace = link_trace(gauge.host(), &comm);
  setup.step("generate");
  spdlog::info("gauge field solved on: {}, plaquette {:.12f}, link trace {:.12f}", summary.origin.file,
               summary.plaquette, summary.link_trace);
  return gauge;
}

// The name of a task in the checkpoint store: its own, or "<id>/<name>" for configuration `id` of an ensemble.
std::string store_name(const std::string& id, const std::string& name) {
  return id.empty() ? name : ensemble_solve_name(id, name);
}

// Every task not already complete in the store (for configuration `id` of an ensemble, "" otherwise), each marked
// complete when written; `done` counts the solves this run completed (the test hooks). True when all converged.
bool run_tasks(const Config& cfg, TaskContext& ctx, CheckpointStore& store, const std::string& id, int& done) {
  bool all = true;
  for (const auto& task : make_tasks(cfg)) {
    if (const auto previous = store.resumed(store_name(id, task->name()))) {
      spdlog::info("solve '{}': complete in the partial file of the interrupted run ({}), not solved again",
                   task->name(), previous->converged ? "converged" : "not converged");
      all = all && previous->converged;
      continue;
    }
    try {
      all = task->execute(ctx) && all;
    } catch (const NonFiniteError& e) {
      throw NonFiniteError("solve '" + task->name() + "': " + e.what());
    }
    auto t = std::chrono::steady_clock::now();
    store.mark_complete(store_name(id, task->name()));  // flushed: a crash from here on does not lose this solve
    add_time(ctx, &PhaseTimes::io, t);
    run_test_hooks(++done, ctx.comm, store.temp_path());
  }
  return all;
}

// The checkpoint store of this run, with the plaquette a resumed partial file must match.
CheckpointOptions store_options(const Config& cfg, double plaquette) {
  CheckpointOptions options;
  options.overwrite = cfg.output.overwrite;
  options.resume = cfg.output.resume;
  options.physics_inputs = physics_inputs(cfg);
  options.plaquette = plaquette;
  options.check_plaquette = true;
  options.mode = cfg.output.io;
  return options;
}

void log_summary(double total, const PhaseTimes& t, const RankTimes& mine, const HaloStats& halo,
                 const MetricsRegistry& metrics, const std::string& file) {
  log_comm_table(halo.rows);
  log_kernel_table(metrics);
  const double other = total - (t.setup + t.gauge + t.sources + t.solves + t.contractions + t.io);
  spdlog::info(
      "timing summary (rank 0): {:.3f} s in total = set-up {:.3f} + gauge field {:.3f} + sources {:.3f} + solves "
      "{:.3f} + contractions {:.3f} + I/O {:.3f} + other {:.3f} s (other = total - the rest: logging, skipped "
      "solves, waits between phases)",
      total, t.setup, t.gauge, t.sources, t.solves, t.contractions, t.io, other);
  spdlog::info(
      "timing summary (rank 0): in the kernels {:.3f} s computing, {:.3f} s waiting for halos, {:.3f} s in "
      "reductions ({:.2f} per CG iteration, {:.3f} s waiting for the device's partial sums)",
      mine.compute_s, mine.halo_wait_s, mine.reduction_s, mine.reductions_per_iteration, mine.reduction_wait_s);
  spdlog::info("wrote {}", file);
}

// The metrics (halo rows of the last operator), the commit and the timing summary; the exit code.
int finish_run(const Config& cfg, CheckpointStore& store, Communicator& comm, const MetricsRegistry& metrics,
               const HaloStats& halo, PhaseTimes& times, std::chrono::steady_clock::time_point t_start,
               bool all_converged) {
  const auto t = std::chrono::steady_clock::now();
  const RankTimes mine = rank_times(comm, metrics, halo);
  store.file().set_root("/");
  write_metrics(store.file(), metrics.table(), metrics.peak(), mine);
  write_comm_metrics(store.file(), halo.rows);
  store.commit();
  times.io += seconds_since(t);
  log_summary(seconds_since(t_start), times, mine, halo, metrics, cfg.output.file);
  return all_converged ? kExitOk : kExitNotConverged;
}

// The empirical peak bandwidth of rank 0 into the registry (metrics.peak), logged.
void measure_peak(const Config& cfg, MetricsRegistry& metrics) {
  if (!cfg.metrics.peak) return;
  const PeakBandwidth p = measure_peak_bandwidth();
  metrics.set_peak(p);
  spdlog::info("empirical peak bandwidth (rank 0): copy {:.1f}, triad {:.1f}, read {:.1f} GB/s; peak {:.1f} GB/s",
               p.copy_gbs, p.triad_gbs, p.read_gbs, p.peak_gbs);
}

// ---- ensembles (gauge.source = "ensemble"): every task on every configuration, below /configs/<id>

// Member m as the single-configuration input a run on its file alone would have (gauge.source = "file").
Config ensemble_member(const Config& cfg, const EnsembleMember& m) {
  Config one = cfg;
  one.gauge.source = GaugeSource::File;
  one.gauge.file = m.file;
  one.gauge.members.clear();
  return one;
}

// What the configurations of an ensemble share.
struct EnsembleRun {
  const Config& cfg;
  Communicator& comm;
  const ProcessGrid& grid;
  const Geometry& geom;
  MetricsRegistry& metrics;
  Context& ctx;
  const DiracParams& dirac;
  CheckpointStore& store;
  PhaseTimes& times;
  HaloStats halo;  // of the last configuration's operator
  int done = 0;    // solves completed by this run (the test hooks)
  bool all_converged = true;
};

// True when every solve of member m is complete in the partial file of an interrupted run (converged: all converged).
bool member_complete(const EnsembleRun& r, const EnsembleMember& m, bool& converged) {
  for (const SolveConfig& s : r.cfg.solves) {
    const auto c = r.store.resumed(ensemble_solve_name(m.id, s.name));
    if (!c) return false;
    converged = converged && c->converged;
  }
  return true;
}

// /configs/<id>/gauge, or, when a resumed partial file holds it, the check that the configuration is the same.
void write_or_check_gauge(EnsembleRun& r, const Config& one, const EnsembleMember& m, RunGauge& gauge,
                          const GaugeSummary& summary) {
  const auto kept = r.store.resumed_plaquette(m.id);
  if (!kept) return write_gauge_group(r.store, one, gauge, summary);
  if (!(std::fabs(*kept - summary.plaquette) <= 1e-10 * std::fabs(summary.plaquette)))
    throw AgreedInputError(fmt::format(
        "output.resume: configuration {} ('{}') has plaquette {:.12f} but {:.12f} in the partial file '{}' (the "
        "configuration changed); remove it to start again",
        m.id, m.file, summary.plaquette, *kept, r.store.temp_path()));
}

// Member `index`: its field read, /configs/<id>/gauge, its operator and its tasks; skipped (not read) when every
// solve of it is complete in the partial file of an interrupted run.
void run_member(EnsembleRun& r, std::size_t index) {
  const EnsembleMember& m = r.cfg.gauge.members[index];
  const std::string what =
      fmt::format("configuration {} of {} (id {}, {})", index + 1, r.cfg.gauge.members.size(), m.id, m.file);
  bool converged = true;
  if (member_complete(r, m, converged)) {
    spdlog::info("{}: every solve is complete in the partial file of the interrupted run; not read again", what);
    r.all_converged = r.all_converged && converged;
    return;
  }
  spdlog::info("{}", what);
  auto t = std::chrono::steady_clock::now();
  const Config one = ensemble_member(r.cfg, m);
  GaugeSummary summary;
  std::optional<GaugeObservables> observed;  // the file read straight to the device, its observables computed there
  RunGauge gauge = make_run_gauge(one, r.geom, r.grid, r.comm, r.metrics, &summary.origin, &observed);
  observe_gauge(one, gauge, observed, r.comm, summary);
  r.times.gauge += seconds_since(t);
  t = std::chrono::steady_clock::now();
  r.store.file().set_root("/configs/" + m.id);
  write_or_check_gauge(r, one, m, gauge, summary);
  const std::unique_ptr<Solver> solver = solver_for(r.cfg.solver, r.ctx, r.geom, gauge, r.dirac);
  r.times.setup += seconds_since(t);
  TaskContext tasks{r.cfg, r.comm, r.grid, r.geom, r.metrics, gauge, r.dirac, *solver, r.store.file(), &r.times};
  r.all_converged = run_tasks(r.cfg, tasks, r.store, m.id, r.done) && r.all_converged;
  r.halo = solver->halo(r.comm.rank());
}

int execute_ensemble(const Config& cfg, Communicator& comm, const ProcessGrid& grid) {
  const auto t_start = std::chrono::steady_clock::now();
  PhaseTimes times;
  const Extents& global = cfg.lattice.extents;
  const Geometry geom(global, grid.local_extents(global), grid.origin(global), grid.partitioned);
  MetricsRegistry metrics;
  RunTuner tuner(cfg, comm);
  Context ctx{metrics, comm, grid, tuner.get()};
  measure_peak(cfg, metrics);
  const DiracParams dirac = dirac_params(cfg);
  CheckpointOptions options = store_options(cfg, 0);
  options.check_plaquette = false;  // per configuration, when it is read (write_or_check_gauge)
  CheckpointStore store(comm, cfg.output.file, options);
  try {
    if (!store.resumed().empty())
      spdlog::info("resume: {} of {} solve(s) ({} configuration(s) x {}) complete in {} are kept",
                   store.resumed().size(), cfg.gauge.members.size() * cfg.solves.size(), cfg.gauge.members.size(),
                   cfg.solves.size(), store.temp_path());
    write_run_header(store, cfg, comm, grid, options.physics_inputs);
    write_ensemble_list(store.file(), cfg.gauge.members);
    store.flush();
    times.setup += seconds_since(t_start);
    EnsembleRun r{cfg, comm, grid, geom, metrics, ctx, dirac, store, times, {}, 0, true};
    run_test_hooks(0, comm, store.temp_path());
    for (std::size_t i = 0; i < cfg.gauge.members.size(); ++i) run_member(r, i);
    tuner.account(metrics);
    const int code = finish_run(cfg, store, comm, metrics, r.halo, times, t_start, r.all_converged);
    tuner.save();
    return code;
  } catch (const Agreed&) {  // every rank alike: close the file together, its complete solves stay readable
    store.close_after_agreed_failure();
    throw;
  }
}

}  // namespace

int execute(const Config& cfg, Communicator& comm, const ProcessGrid& grid) {
  if (cfg.gauge.source == GaugeSource::Ensemble) return execute_ensemble(cfg, comm, grid);
  const auto t_start = std::chrono::steady_clock::now();
  auto t = t_start;
  PhaseTimes times;
  const auto phase = [&](double& into) {
    const auto now = std::chrono::steady_clock::now();
    into += std::chrono::duration<double>(now - t).count();
    t = now;
  };
  const Extents& global = cfg.lattice.extents;
  const Geometry geom(global, grid.local_extents(global), grid.origin(global), grid.partitioned);
  MetricsRegistry metrics;
  RunTuner tuner(cfg, comm);
  Context ctx{metrics, comm, grid, tuner.get()};
  measure_peak(cfg, metrics);
  phase(times.setup);
  SetupClock setup(metrics);
  GaugeSummary summary;
  RunGauge gauge = gauge_field(cfg, geom, grid, comm, metrics, setup, summary);
  check_reconstruct(cfg, gauge, comm, setup);
  phase(times.gauge);
  const DiracParams dirac = dirac_params(cfg);

  const CheckpointOptions options = store_options(cfg, summary.plaquette);
  CheckpointStore store(comm, cfg.output.file, options);
  try {
    if (!store.resumed().empty())
      spdlog::info("resume: {} of {} solve(s) complete in {} are kept", store.resumed().size(), cfg.solves.size(),
                   store.temp_path());
    write_run_header(store, cfg, comm, grid, options.physics_inputs);
    write_gauge_group(store, cfg, gauge, summary);
    setup.step("header");

    const std::unique_ptr<Solver> solver = solver_for(cfg.solver, ctx, geom, gauge, dirac);
    setup.step("operator");
    setup.log();
    phase(times.setup);
    TaskContext tasks{cfg, comm, grid, geom, metrics, gauge, dirac, *solver, store.file(), &times};
    int done = 0;
    run_test_hooks(done, comm, store.temp_path());
    const bool all_converged = run_tasks(cfg, tasks, store, "", done);
    tuner.account(metrics);
    const int code = finish_run(cfg, store, comm, metrics, solver->halo(comm.rank()), times, t_start, all_converged);
    tuner.save();
    return code;
  } catch (const Agreed&) {  // every rank alike: close the file together, its complete solves stay readable
    store.close_after_agreed_failure();
    throw;
  }
}

}  // namespace emprism::run
