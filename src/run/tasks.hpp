// tasks.hpp: the work of a run, one task per [[solve]] table: a point, random or plane-wave solve, or a propagator
// (12 solves and its meson correlators). A task is built from the checked configuration, executes on the run's
// solver and writes its own groups through the output schema (/solves/<name>, and /correlators/<name> for a
// propagator); the driver marks it complete in the checkpoint store afterwards, or skips it when a resumed run
// already holds it. The gauge generation of [generate] is the task that runs before the solves (gauge_setup.hpp).
// Who may call: execute() is collective over all ranks (solves, reductions, the output file).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "io/h5/file.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/dirac.hpp"
#include "src/run/config.hpp"
#include "src/run/gauge_setup.hpp"
#include "src/run/solver.hpp"

namespace emprism::run {

// Wall-clock seconds of the phases of a run on this rank, for the timing summary: the set-up and the gauge field by
// execute(), the rest added by the tasks as they work.
struct PhaseTimes {
  double setup = 0;         // peak measurement, clover term, solver, output file and header
  double gauge = 0;         // the gauge field: read, generated or thermalised, and [generate]
  double sources = 0;       // sources made and smeared (link smearing included)
  double solves = 0;        // the CG solves
  double contractions = 0;  // meson correlators
  double io = 0;            // the tasks' output writes, the metrics and the commit
};

// What a task may use.
struct TaskContext {
  const Config& cfg;
  Communicator& comm;
  const ProcessGrid& grid;
  const Geometry& geom;
  MetricsRegistry& metrics;
  RunGauge& gauge;           // the field solved on (halo filled), where it was made (gauge_setup.hpp)
  const DiracParams& dirac;  // of the solver's operator (the boundary phases of plane-wave sources)
  Solver& solver;
  io::h5::File& file;           // the checkpoint store's partial file
  PhaseTimes* times = nullptr;  // where the tasks add their times (null: not timed)
};

class Task {
 public:
  explicit Task(const SolveConfig& solve) : solve_(solve) {}
  virtual ~Task() = default;
  const std::string& name() const { return solve_.name; }
  const SolveConfig& config() const { return solve_; }
  // Bytes of host memory per rank the task holds besides the solver (for --dry-run).
  virtual double host_bytes(std::int64_t local_volume) const = 0;
  // Bytes of device memory per rank the task holds besides the solver (a propagator's columns).
  virtual double device_bytes(std::int64_t) const { return 0; }
  // Runs the task and writes its groups (not marked complete); true when every solve converged. Collective.
  virtual bool execute(TaskContext& ctx) const = 0;

 protected:
  const SolveConfig& solve_;
};

// The tasks of the run's [[solve]] tables, in order; they refer to cfg, which must outlive them.
std::vector<std::unique_ptr<Task>> make_tasks(const Config& cfg);

// Adds the seconds from `since` to now to ctx.times->*phase (when timed) and sets `since` to now.
void add_time(TaskContext& ctx, double PhaseTimes::*phase, std::chrono::steady_clock::time_point& since);

// CG parameters of a solve: its tolerance and iteration limit (the solve's own or [solver]'s), progress lines.
CgParams cg_params(const Config& cfg, const SolveConfig& solve);

}  // namespace emprism::run
