// plan.hpp: what a run would do, for --dry-run: the gauge step and the solves in the order they run, each with its
// type, precision, tolerance and max_iter, its sources (1, or the 12 spin-colour columns of a propagator) and an
// estimated time. The estimate is stated with what it assumes: a CG iteration of the solver's precision (a mixed
// solve's sloppy one) moves its kernels' minimum bytes (physics/costs.hpp cg_iteration_cost, the figures the launchers
// record) through memory at the rank's bandwidth (the measured peak when metrics.peak is true, else a stated nominal
// figure for the backend); halo exchange, set-up, I/O and reliable updates are not counted; the iteration count is
// unknown before solving, so the time is given per 1000 iterations and at max_iter (the bound).
// Who may call: the driver (rank 0 prints the text; computing it is local and collective-free).
#pragma once

#include <set>
#include <string>

#include "comm/process_grid.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

// The bandwidth the estimate uses, and where it comes from ("measured: copy/triad/read peak of rank 0", ...).
struct AssumedBandwidth {
  double gbs = 0;
  std::string source;
};

// The nominal bandwidth of a rank of this build's backend, stated as an assumption (no measurement).
AssumedBandwidth nominal_bandwidth();

// The listing, several lines ending in '\n'. `complete`: names of solves a resumed run keeps (listed as skipped).
std::string solve_plan(const Config& cfg, const ProcessGrid& grid, const AssumedBandwidth& bandwidth,
                       const std::set<std::string>& complete);

}  // namespace emprism::run
