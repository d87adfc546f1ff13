// input_limits.cpp: the checks of the input that involve several keys (see input.hpp, check_input_limits): sizes in
// checked 64-bit arithmetic, and values that would overflow in the chosen precision (so that an accepted input
// cannot reach the solver as NaN or Inf).
// Limits (R: the float type the CG runs in: float for "single" and "mixed", double for "double"; max = its largest
// finite value): dirac.kappa <= max^(1/8) (the even-odd normal operator holds kappa^4, its norms kappa^8);
// plane-wave spinor entries <= max^(1/4) (the source's norm squared, times the operator); the worst-case growth of a
// quark smearing, (1 + 6 w)^steps for Jacobi and 6 w for Wuppertal, <= max^(1/2) (the source and the smeared sink
// are both multiplied by it); |dirac.theta_over_pi| <= 1e6 (the boundary phase exp(i pi theta / L) is periodic; far
// beyond a period it keeps no digit of precision). Whatever still overflows at run time ends with exit code 3.
// Also the combinations of keys that have no meaning: solver.sloppy = "half" or "single_fp64" outside mixed
// precision or with links of 8. Who may call: parse_config (local, no MPI).
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>

#include "io/toml_reader.hpp"
#include "src/run/input.hpp"
#include "src/run/parameters.hpp"

namespace emprism::run {

namespace {

double largest(Precision p) { return p == Precision::Double ? DBL_MAX : FLT_MAX; }

std::string in_precision(Precision p) { return " in " + choice_name(p) + " precision (solver.precision)"; }

void check_kappa(const Config& cfg) {
  const double limit = std::pow(largest(cfg.solver.precision), 0.125);
  if (!(cfg.dirac.kappa <= limit))
    io::fail("dirac.kappa", io::format_double(cfg.dirac.kappa) + " overflows" + in_precision(cfg.solver.precision) +
                                "; it must be <= " + io::format_double(std::floor(limit)));
  if (!(std::fabs(cfg.dirac.csw) <= limit))
    io::fail("dirac.csw", io::format_double(cfg.dirac.csw) + " overflows" + in_precision(cfg.solver.precision) +
                              "; |csw| must be <= " + io::format_double(std::floor(limit)));
  for (int mu = 0; mu < 4; ++mu)
    if (!(std::fabs(cfg.dirac.theta_over_pi[mu]) <= 1e6))
      io::fail("dirac.theta_over_pi", io::format_double(cfg.dirac.theta_over_pi[mu]) +
                                          " is out of range: the boundary phase is periodic (period 2); give "
                                          "|theta_over_pi| <= 1e6");
}

// solver.sloppy = "half" or "single_fp64": the sloppy CG of mixed precision, whose operator has links of 18 or 12
// reals.
void check_sloppy(const Config& cfg) {
  if (cfg.solver.sloppy == Sloppy::Single) return;
  const std::string name = "\"" + choice_name(cfg.solver.sloppy) + "\"";
  if (cfg.solver.precision != Precision::Mixed)
    io::fail("solver.sloppy",
             name + " needs solver.precision = \"mixed\" (got \"" + choice_name(cfg.solver.precision) + "\")");
  if (cfg.dirac.reconstruct == 8) io::fail("solver.sloppy", name + " needs dirac.reconstruct = 18 or 12 (got 8)");
}

void check_solve(const Config& cfg, const SolveConfig& s, std::size_t i) {
  const std::string path = io::element_path("solve", i);
  const Precision prec = cfg.solver.precision;
  if (s.kind == SolveKind::PlaneWave) {
    const double limit = std::pow(largest(prec), 0.25);
    for (const std::complex<double>& z : s.spinor)
      if (!(std::fabs(z.real()) <= limit && std::fabs(z.imag()) <= limit))
        io::fail(path + ".spinor", "entry " + io::format_double(std::abs(z)) + " overflows" + in_precision(prec) +
                                       "; |re| and |im| must be <= " + io::format_double(std::floor(limit)));
  }
  const SmearingParams& sm = s.smearing;
  if (s.kind == SolveKind::Propagator && sm.kind != QuarkSmearingKind::None) {
    const double log_limit = 0.5 * std::log(largest(prec));
    const double log_growth =
        sm.kind == QuarkSmearingKind::Jacobi ? sm.steps * std::log1p(6.0 * sm.weight) : std::log(6.0 * sm.weight);
    if (!(log_growth <= log_limit))
      io::fail(path + ".smearing_weight",
               io::format_double(sm.weight) + " with " + std::to_string(sm.steps) + " steps overflows" +
                   in_precision(prec) + ": the smeared source may grow by up to e^" +
                   io::format_double(std::round(log_growth)) + " > e^" + io::format_double(std::floor(log_limit)));
  }
}

}  // namespace

// The global volume in checked 64-bit arithmetic: at most 2^53 sites (exact in a double, and every byte count of a
// field fits in 64 bits).
void check_volume(const Config& cfg) {
  const auto& e = cfg.lattice.extents;
  constexpr std::int64_t kMaxSites = std::int64_t(1) << 53;
  std::int64_t volume = 1;
  for (int mu = 0; mu < 4; ++mu) {
    if (e[mu] <= 0) return;  // refused by the key's own rule
    if (volume > kMaxSites / e[mu])
      io::fail("lattice.extents", "[" + std::to_string(e[0]) + ", " + std::to_string(e[1]) + ", " +
                                      std::to_string(e[2]) + ", " + std::to_string(e[3]) +
                                      "] has more than 2^53 sites; no run of this size can be held in memory");
    volume *= e[mu];
  }
}

void check_input_limits(const Config& cfg) {
  check_volume(cfg);
  check_kappa(cfg);
  check_sloppy(cfg);
  for (std::size_t i = 0; i < cfg.solves.size(); ++i) check_solve(cfg, cfg.solves[i], i);
}

}  // namespace emprism::run
