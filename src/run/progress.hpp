// progress.hpp: the words of the live progress lines rank 0 logs while it works (heatbath sweeps, propagator
// columns, CG iterations): durations, estimated times to completion, and the CG's rate and ETA. The lines are logged
// through spdlog at info level, each flushed as it is written (io/logging.hpp), so a Slurm log shows them as they
// happen. Who may call: the run layer; pure (no MPI, no logging).
#pragma once

#include <string>

namespace emprism::run {

// "0.84 s", "2 min 05 s", "1 h 07 min".
std::string duration_text(double seconds);

// "ETA 2 min 05 s": the rest of `total` units of work after `done` took `elapsed` seconds, at that rate
// ("ETA unknown" before the first unit).
std::string eta_text(double elapsed, double done, double total);

// "(41.3 it/s, ETA 3.2 s to tol 1.0e-08)": the CG's rate so far and the time to reach tol if the relative residual
// keeps falling geometrically as it has since the start (residual 1 at iteration 0); "ETA unknown" while it has not
// fallen.
std::string cg_progress_text(int iterations, double residual, double seconds, double tol);

}  // namespace emprism::run
