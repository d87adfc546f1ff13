// execute.cpp: one run (see execute.hpp): set-up, the output file's header, the task loop over the checkpoint store,
// the metrics and the timing summary.
#include "src/run/execute.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
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
#include "src/physics/peak.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/gauge_setup.hpp"
#include "src/run/input.hpp"
#include "src/run/parameters.hpp"
#include "src/run/schema.hpp"
#include "src/run/tasks.hpp"

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
        v[3] > 0 ? 100.0 * (1.0 - v[2] / v[3]) : 100.0);
  }
  return t;
}

// Rank 0's /metrics/comm rows.
void log_comm_table(const std::vector<CommRow>& rows) {
  for (const CommRow& r : rows)
    spdlog::info(
        "halo {} (fp{}): {}, {} exterior, {:.2f} MB per call, {} calls, exchange {:.4f} s, exposed {:.4f} s "
        "({:.1f}% hidden)",
        "xyzt"[r.direction & 3], r.precision_bits, r.transport, r.split_exterior ? "split" : "fused",
        r.bytes_per_call / 1e6, r.calls, r.exchange_s, r.exposed_s, 100.0 * r.hidden_fraction);
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

// Root attributes, /input and /gauge (links of the field solved on when output.write_gauge), flushed.
void write_header(CheckpointStore& store, const Config& cfg, Communicator& comm, const ProcessGrid& grid,
                  const HostGauge& gauge, const GaugeSummary& summary, const std::string& physics) {
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
  GaugeInfo gi;
  gi.source = choice_name(cfg.gauge.source);
  gi.plaquette = summary.plaquette;
  gi.link_trace = summary.link_trace;
  gi.file = summary.origin.file;
  gi.format = summary.origin.format;
  gi.checksum = summary.origin.checksum;
  const Geometry& geom = gauge.geometry();
  std::vector<std::complex<double>> links;
  if (cfg.output.write_gauge) links = gauge_to_natural(gauge);
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

// The field of gauge.source, then [generate]'s configurations; the summary is of the field solved on.
HostGauge gauge_field(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                      MetricsRegistry& metrics, SetupClock& setup, GaugeSummary& summary) {
  std::optional<GaugeObservables> observed;  // computed where the field was made (a random field, on the device)
  HostGauge gauge = make_gauge(cfg, geom, grid, comm, metrics, &summary.origin, &observed);
  setup.step("gauge");
  summary.plaquette = observed ? observed->plaquette : plaquette(gauge, &comm);
  summary.link_trace = observed ? observed->link_trace : link_trace(gauge, &comm);
  spdlog::info("gauge field: {}, plaquette {:.12f}, link trace {:.12f}", gauge_description(cfg), summary.plaquette,
               summary.link_trace);
  setup.step("observables");
  if (!cfg.generate.enabled) return gauge;
  GenerateTask(cfg).execute(gauge, grid, comm, &summary.origin);
  summary.plaquette = plaquette(gauge, &comm);
  summary.link_trace = link_trace(gauge, &comm);
  setup.step("generate");
  spdlog::info("gauge field solved on: {}, plaquette {:.12f}, link trace {:.12f}", summary.origin.file,
               summary.plaquette, summary.link_trace);
  return gauge;
}

// Every task not already complete in the store, each marked complete when written; true when all converged.
bool run_tasks(const Config& cfg, TaskContext& ctx, CheckpointStore& store) {
  bool all = true;
  int done = 0;
  run_test_hooks(done, ctx.comm, store.temp_path());
  for (const auto& task : make_tasks(cfg)) {
    if (const auto previous = store.resumed(task->name())) {
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
    store.mark_complete(task->name());  // flushed: a crash from here on does not lose this solve
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

}  // namespace

int execute(const Config& cfg, Communicator& comm, const ProcessGrid& grid) {
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
  Context ctx{metrics, comm, grid};
  if (cfg.metrics.peak) {
    const PeakBandwidth p = measure_peak_bandwidth();
    metrics.set_peak(p);
    spdlog::info("empirical peak bandwidth (rank 0): copy {:.1f}, triad {:.1f}, read {:.1f} GB/s; peak {:.1f} GB/s",
                 p.copy_gbs, p.triad_gbs, p.read_gbs, p.peak_gbs);
  }
  phase(times.setup);
  SetupClock setup(metrics);
  GaugeSummary summary;
  HostGauge gauge = gauge_field(cfg, geom, grid, comm, metrics, setup, summary);
  phase(times.gauge);
  const DiracParams dirac = dirac_params(cfg);

  const CheckpointOptions options = store_options(cfg, summary.plaquette);
  CheckpointStore store(comm, cfg.output.file, options);
  try {
    if (!store.resumed().empty())
      spdlog::info("resume: {} of {} solve(s) complete in {} are kept", store.resumed().size(), cfg.solves.size(),
                   store.temp_path());
    write_header(store, cfg, comm, grid, gauge, summary, options.physics_inputs);
    setup.step("header");

    const std::unique_ptr<Solver> solver = make_solver(cfg.solver.precision, ctx, geom, gauge, dirac);
    setup.step("operator");
    setup.log();
    phase(times.setup);
    TaskContext tasks{cfg, comm, grid, geom, metrics, gauge, dirac, *solver, store.file(), &times};
    const bool all_converged = run_tasks(cfg, tasks, store);

    t = std::chrono::steady_clock::now();
    const HaloStats halo = solver->halo(comm.rank());
    const RankTimes mine = rank_times(comm, metrics, halo);
    write_metrics(store.file(), metrics.table(), metrics.peak(), mine);
    write_comm_metrics(store.file(), halo.rows);
    store.commit();
    phase(times.io);
    log_summary(seconds_since(t_start), times, mine, halo, metrics, cfg.output.file);
    return all_converged ? kExitOk : kExitNotConverged;
  } catch (const Agreed&) {  // every rank alike: close the file together, its complete solves stay readable
    store.close_after_agreed_failure();
    throw;
  }
}

}  // namespace emprism::run
