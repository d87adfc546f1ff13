// solve_task.cpp: the task of a point, random or plane-wave [[solve]] (one CG solve of its source, written to
// /solves/<name>), the CG parameters of a solve, and make_tasks (the task of each [[solve]] table).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "kernels/backend/runtime.hpp"
#include "src/lattice/field_io.hpp"
#include "src/physics/sources_device.hpp"
#include "src/run/parameters.hpp"
#include "src/run/progress.hpp"
#include "src/run/schema.hpp"
#include "src/run/tasks.hpp"

namespace emprism::run {

std::unique_ptr<Task> make_propagator_task(const SolveConfig& solve);  // propagator_task.cpp

namespace {

SourceParams source_params(const SolveConfig& sc) {
  SourceParams p;
  p.kind = sc.kind == SolveKind::Random      ? SourceKind::Random
           : sc.kind == SolveKind::PlaneWave ? SourceKind::PlaneWave
                                             : SourceKind::Point;
  p.site = sc.site;
  p.spin = sc.spin;
  p.colour = sc.colour;
  p.seed = sc.seed;
  p.noise = sc.noise;
  p.momentum = sc.momentum;
  p.spinor = sc.spinor;
  return p;
}

// Test hook (tests only): EMPRISM_TEST_NAN_SOURCE=<solve name> puts a NaN into that solve's source on every rank
// (the non-finite path of the solver, end to end; no valid input reaches it), through a host copy.
void poison_for_test(const std::string& name, SpinorField<double>& source) {
  const char* v = std::getenv("EMPRISM_TEST_NAN_SOURCE");
  if (v == nullptr || name != v) return;
  std::vector<Spinor<double>> sites = source.parity(0).download();
  if (sites.empty()) return;
  sites[0].s[0].c[0] = {std::nan(""), 0.0};
  source.parity(0).upload(sites);
}

class SolveTask final : public Task {
 public:
  using Task::Task;
  double host_bytes(std::int64_t) const override { return 0; }
  // The source and the solution in fp64 on the device (the host copies only when output.fields).
  double device_bytes(std::int64_t local_volume) const override {
    return 2.0 * static_cast<double>(local_volume) * sizeof(Spinor<double>);
  }
  bool execute(TaskContext& ctx) const override;
};

bool SolveTask::execute(TaskContext& ctx) const {
  const SolveConfig& sc = solve_;
  auto t = std::chrono::steady_clock::now();
  SpinorField<double> source(ctx.geom), solution(ctx.geom);
  make_source_device(ctx.metrics, ctx.geom, source_params(sc), ctx.dirac.theta, source);
  poison_for_test(sc.name, source);
  backend::synchronize();  // the source's time is not the solve's
  // The ranks start the CG together: a rank still building its source would otherwise show up in the others' first
  // global sum and in the solve's seconds (seen on 2 H200: the same policy timed 17 and 34 ms per iteration).
  ctx.comm.barrier();
  add_time(ctx, &PhaseTimes::sources, t);
  CgParams cp = cg_params(ctx.cfg, sc);
  cp.progress = [&](int it, double rel, double secs) {
    spdlog::info("solve '{}': iteration {:6d}  residual {:.3e}  {}", sc.name, it, rel,
                 cg_progress_text(it, rel, secs, cp.tol));
  };
  spdlog::info("solve '{}': {} source, tol {:.1e}, max_iter {}", sc.name, choice_name(sc.kind), cp.tol, cp.max_iter);
  SolveRecord rec;
  const bool fields = ctx.cfg.output.fields;
  const CgResult r = ctx.solver.solve_device(source, cp, solution);
  add_time(ctx, &PhaseTimes::solves, t);
  rec.name = sc.name;
  rec.source_kind = choice_name(sc.kind);
  rec.single_precision = ctx.cfg.solver.precision == Precision::Single;
  rec.write_fields = fields;
  if (fields) {
    rec.solution = spinor_to_natural(ctx.geom, solution);
    rec.source = spinor_to_natural(ctx.geom, source);
  }
  rec.residual_history = r.history;
  rec.iterations = r.iterations;
  rec.true_residual = r.true_residual;
  rec.converged = r.converged;
  rec.seconds = r.seconds;
  rec.restarts = r.reliable_updates;
  rec.inputs = solve_attributes(ctx.cfg, sc);
  if (r.converged) {
    spdlog::info("solve '{}': converged in {} iterations ({} reliable updates), true residual {:.3e}, {:.3f} s",
                 sc.name, r.iterations, r.reliable_updates, r.true_residual, r.seconds);
  } else {
    spdlog::warn("solve '{}': NOT converged after {} iterations: true residual {:.3e} > tol {:.1e}{}", sc.name,
                 r.iterations, r.true_residual, cp.tol,
                 r.stagnated ? " (the residual stagnates at the precision's limit; use solver.precision = \"mixed\" "
                               "or \"double\")"
                             : "");
  }
  write_solve(ctx.file, rec, BlockLayout{ctx.geom.global(), ctx.geom.local(), ctx.geom.origin()});
  add_time(ctx, &PhaseTimes::io, t);
  return r.converged;
}

}  // namespace

void add_time(TaskContext& ctx, double PhaseTimes::*phase, std::chrono::steady_clock::time_point& since) {
  const auto now = std::chrono::steady_clock::now();
  if (ctx.times) ctx.times->*phase += std::chrono::duration<double>(now - since).count();
  since = now;
}

CgParams cg_params(const Config& cfg, const SolveConfig& solve) {
  CgParams cp;
  cp.tol = solve.tol.value_or(cfg.solver.tol);
  cp.max_iter = solve.max_iter.value_or(cfg.solver.max_iter);
  cp.reliable_delta = cfg.solver.reliable_delta;
  cp.stop = cfg.solver.stop == Stop::Normal ? CgStop::Normal : CgStop::Full;
  cp.progress_every = cfg.log.progress_every;
  return cp;
}

std::vector<std::unique_ptr<Task>> make_tasks(const Config& cfg) {
  std::vector<std::unique_ptr<Task>> tasks;
  for (const SolveConfig& sc : cfg.solves) {
    if (sc.kind == SolveKind::Propagator) {
      tasks.push_back(make_propagator_task(sc));
    } else {
      tasks.push_back(std::make_unique<SolveTask>(sc));
    }
  }
  return tasks;
}

}  // namespace emprism::run
