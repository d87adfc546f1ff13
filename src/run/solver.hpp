// solver.hpp: the Dirac solves of a run behind one interface, whatever the precision: the even-odd Wilson-clover
// operator(s) of the configured precision (single, double, or double outer / single inner for mixed), built once
// from the gauge field and the clover term, and the CG of src/physics/cg.hpp. Sources and solutions are this rank's
// block in local natural order (src/lattice/field_io.hpp), so tasks do not depend on the precision.
// Who may call: solve() is collective over the process grid (halo exchanges, reductions).
#pragma once

#include <complex>
#include <memory>
#include <vector>

#include "src/lattice/context.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/clover.hpp"
#include "src/physics/dirac.hpp"
#include "src/run/config.hpp"
#include "src/run/schema.hpp"

namespace emprism::run {

// The halo exchanges of the operators: totals for /metrics/ranks (exposed: the compute stream waiting for faces;
// exchange: start to faces in place) and one /metrics/comm row per partitioned direction and operator.
struct HaloStats {
  double wait_s = 0, exchange_s = 0;
  std::vector<CommRow> rows;
};

// The halo exchange's transport the input asks for (comm.transport or the older comm.gpu_aware).
TransportRequest transport_request(const CommConfig& comm);

class Solver {
 public:
  virtual ~Solver() = default;
  // Solves M x = b for b = source; `solution` (when not null) receives x. Collective.
  virtual CgResult solve(const std::vector<std::complex<double>>& source, const CgParams& params,
                         std::vector<std::complex<double>>* solution) = 0;
  // The same with the source and the solution as double-precision fields on the device (a propagator's columns stay
  // there): b is rounded to the outer precision, the solution comes back in double. Collective.
  virtual CgResult solve_device(const SpinorField<double>& b, const CgParams& params, SpinorField<double>& x) = 0;
  // The halo statistics of this rank's operators (rows labelled with `rank`).
  virtual HaloStats halo(int rank) = 0;
};

// The solver of `precision` on this rank's block; its operators build their links and clover term on the device.
// sloppy: the fields of mixed precision's sloppy CG (ignored for the other precisions).
std::unique_ptr<Solver> make_solver(Precision precision, Sloppy sloppy, Context& ctx, const Geometry& geom,
                                    const HostGauge& gauge, const DiracParams& params);
// The same from a field already on the device (no host copy of it; the same bits).
std::unique_ptr<Solver> make_solver(Precision precision, Sloppy sloppy, Context& ctx, const Geometry& geom,
                                    const DeviceGauge& gauge, const DiracParams& params);

}  // namespace emprism::run
