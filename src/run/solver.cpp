// solver.cpp: the solver of solver.hpp for the five precision pairs (outer, inner): (double, double),
// (float, float), (double, float), (double, Half) and (double, Fp32Fp64), the inner operator being the outer one when
// the precisions agree.
#include "src/run/solver.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "comm/halo_policy.hpp"
#include "kernels/errors.hpp"
#include "src/lattice/field_io.hpp"
#include "src/physics/blas.hpp"

namespace emprism::run {

namespace {

template <typename R>
void add_halo_stats(WilsonClover<R>& op, int rank, HaloStats& halo) {
  for (const auto& d : op.halo_stats()) {
    CommRow row;
    row.rank = rank;
    row.precision_bits = std::is_same_v<R, Half> ? 16 : 8 * static_cast<int>(sizeof(store_t<R>));  // (stored)
    row.direction = d.mu;
    row.transport = transport_name(d.transport);
    row.exterior = d.exterior;
    row.calls = d.calls;
    row.bytes_per_call = d.bytes_per_call;
    row.exchange_s = d.exchange_s;
    row.exposed_s = d.exposed_s;
    row.hidden_fraction = d.exchange_s > 0 ? std::max(0.0, 1.0 - d.exposed_s / d.exchange_s) : 1.0;
    halo.rows.push_back(row);
    halo.wait_s += d.exposed_s;
    halo.exchange_s += d.exchange_s;
  }
}

template <typename Ro, typename Ri>
class SolverOf final : public Solver {
 public:
  template <typename Gauge>  // HostGauge or DeviceGauge
  SolverOf(Context& ctx, const Geometry& geom, const Gauge& gauge, const DiracParams& params)
      : ctx_(ctx), geom_(geom), outer_(ctx, geom, gauge, params) {
    if constexpr (!std::is_same_v<Ro, Ri>) inner_ = std::make_unique<WilsonClover<Ri>>(ctx, outer_);  // rounded
  }

  CgResult solve(const std::vector<std::complex<double>>& source, const CgParams& params,
                 std::vector<std::complex<double>>* solution) override {
    SpinorField<Ro> b(geom_), x(geom_);
    spinor_from_natural(geom_, source, b);
    const CgResult r = checked(solve_eo_cg(outer_, inner(), b, x, params));
    if (solution) *solution = spinor_to_natural(geom_, x);
    return r;
  }

  CgResult solve_device(const SpinorField<double>& b, const CgParams& params, SpinorField<double>& x) override {
    if constexpr (std::is_same_v<Ro, double>) {
      return checked(solve_eo_cg(outer_, inner(), b, x, params));
    } else {
      SpinorField<Ro> bo(geom_), xo(geom_);
      for (int p = 0; p < 2; ++p) blas::convert(ctx_, bo.parity(p), b.parity(p));
      const CgResult r = checked(solve_eo_cg(outer_, inner(), bo, xo, params));
      for (int p = 0; p < 2; ++p) blas::convert(ctx_, x.parity(p), xo.parity(p));
      return r;
    }
  }

  HaloStats halo(int rank) override {
    HaloStats h;
    add_halo_stats(outer_, rank, h);
    if constexpr (!std::is_same_v<Ro, Ri>) add_halo_stats(*inner_, rank, h);
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

  static CgResult checked(CgResult r) {
    if (r.nonfinite)
      throw NonFiniteError("the CG residual is not finite (" + std::to_string(r.true_residual) + ") after " +
                           std::to_string(r.iterations) +
                           " iteration(s): the operator or the source holds values out of the range of the "
                           "precision (check dirac.kappa, dirac.csw, the gauge field and the source)");
    return r;
  }

  Context& ctx_;
  const Geometry& geom_;
  WilsonClover<Ro> outer_;
  std::unique_ptr<WilsonClover<Ri>> inner_;  // mixed precision only
};

}  // namespace

TransportRequest transport_request(const CommConfig& c) {
  TransportRequest r;
  switch (c.transport) {
    case CommConfig::Transport::Staged:
      r.choice = TransportRequest::Choice::Staged;
      break;
    case CommConfig::Transport::GpuAware:
      r.choice = TransportRequest::Choice::GpuAware;
      break;
    case CommConfig::Transport::Peer:
      r.choice = TransportRequest::Choice::Peer;
      break;
    case CommConfig::Transport::Auto:
      r.choice = TransportRequest::Choice::Auto;
      break;
  }
  r.gpu_aware_in_auto = c.gpu_aware_in_auto;
  r.key = c.transport_key;
  return r;
}

namespace {

template <typename Gauge>
std::unique_ptr<Solver> solver_of(Precision precision, Sloppy sloppy, Context& ctx, const Geometry& geom,
                                  const Gauge& gauge, const DiracParams& params) {
  switch (precision) {
    case Precision::Double:
      return std::make_unique<SolverOf<double, double>>(ctx, geom, gauge, params);
    case Precision::Single:
      return std::make_unique<SolverOf<float, float>>(ctx, geom, gauge, params);
    case Precision::Mixed:
      break;
  }
  if (sloppy == Sloppy::Half) return std::make_unique<SolverOf<double, Half>>(ctx, geom, gauge, params);
  if (sloppy == Sloppy::SingleFp64) return std::make_unique<SolverOf<double, Fp32Fp64>>(ctx, geom, gauge, params);
  return std::make_unique<SolverOf<double, float>>(ctx, geom, gauge, params);
}

}  // namespace

std::unique_ptr<Solver> make_solver(Precision precision, Sloppy sloppy, Context& ctx, const Geometry& geom,
                                    const HostGauge& gauge, const DiracParams& params) {
  return solver_of(precision, sloppy, ctx, geom, gauge, params);
}

std::unique_ptr<Solver> make_solver(Precision precision, Sloppy sloppy, Context& ctx, const Geometry& geom,
                                    const DeviceGauge& gauge, const DiracParams& params) {
  return solver_of(precision, sloppy, ctx, geom, gauge, params);
}

}  // namespace emprism::run
