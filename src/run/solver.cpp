// solver.cpp: the solver of solver.hpp for the three precision pairs (outer, inner): (double, double),
// (float, float) and (double, float), the inner operator being the outer one when the precisions agree.
#include "src/run/solver.hpp"

#include <type_traits>

#include "src/lattice/field_io.hpp"

namespace emprism::run {

namespace {

template <typename Ro, typename Ri>
class SolverOf final : public Solver {
 public:
  SolverOf(Context& ctx, const Geometry& geom, const HostGauge& gauge, const HostClover& clover,
           const DiracParams& params)
      : geom_(geom), outer_(ctx, geom, gauge, clover, params) {
    if constexpr (!std::is_same_v<Ro, Ri>)
      inner_ = std::make_unique<WilsonClover<Ri>>(ctx, geom, gauge, clover, params);
  }

  CgResult solve(const std::vector<std::complex<double>>& source, const CgParams& params,
                 std::vector<std::complex<double>>* solution) override {
    SpinorField<Ro> b(geom_), x(geom_);
    spinor_from_natural(geom_, source, b);
    const CgResult r = solve_eo_cg(outer_, inner(), b, x, params);
    if (solution) *solution = spinor_to_natural(geom_, x);
    return r;
  }

  HaloStats halo() const override {
    HaloStats h{outer_.halo().wait_seconds(), outer_.halo().exchange_seconds()};
    if constexpr (!std::is_same_v<Ro, Ri>) {
      h.wait_s += inner_->halo().wait_seconds();
      h.exchange_s += inner_->halo().exchange_seconds();
    }
    return h;
  }

 private:
  WilsonClover<Ri>& inner() {
    if constexpr (std::is_same_v<Ro, Ri>) {
      return outer_;
    } else {
      return *inner_;
    }
  }

  const Geometry& geom_;
  WilsonClover<Ro> outer_;
  std::unique_ptr<WilsonClover<Ri>> inner_;  // mixed precision only
};

}  // namespace

std::unique_ptr<Solver> make_solver(Precision precision, Context& ctx, const Geometry& geom, const HostGauge& gauge,
                                    const HostClover& clover, const DiracParams& params) {
  switch (precision) {
    case Precision::Double:
      return std::make_unique<SolverOf<double, double>>(ctx, geom, gauge, clover, params);
    case Precision::Single:
      return std::make_unique<SolverOf<float, float>>(ctx, geom, gauge, clover, params);
    case Precision::Mixed:
      break;
  }
  return std::make_unique<SolverOf<double, float>>(ctx, geom, gauge, clover, params);
}

}  // namespace emprism::run
