// operator_fixture.hpp: test helpers that build the production operator from natural-order arrays
// (the layout of tests/reference), so both can be applied to the same fields and compared.
// Who may call: tests only.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "kernels/errors.hpp"
#include "reference/reference.hpp"
#include "src/lattice/field_io.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/blas.hpp"
#include "src/physics/clover.hpp"
#include "src/physics/clover_device.hpp"
#include "src/physics/dirac.hpp"
#include "src/physics/sources.hpp"

namespace emprism::test {

using Cd = std::complex<double>;

// Relative difference |a - b| / |b|.
inline double rel_diff(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

// Relative difference |got - want| / |want| of two parity fields (downloaded; summed in double).
template <typename R>
double rel_diff(const ParitySpinor<R>& got, const ParitySpinor<R>& want) {
  const auto g = got.download(), w = want.download();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    for (int s = 0; s < 4; ++s)
      for (int c = 0; c < 3; ++c) {
        const Complex<R> x = g[i].s[s].c[c], y = w[i].s[s].c[c];
        num += std::pow(double(x.re) - y.re, 2) + std::pow(double(x.im) - y.im, 2);
        den += double(y.re) * y.re + double(y.im) * y.im;
      }
  return std::sqrt(num / den);
}

// The tolerance of a comparison in precision R: a few hundred ulps of accumulated rounding.
template <typename R>
double tolerance() {
  return std::is_same_v<R, double> ? 1e-12 : 1e-5;
}

inline std::array<double, 4> theta_radians(double tx, double ty, double tz, double tt) { return {tx, ty, tz, tt}; }

template <typename R>
struct OperatorSetup {
  // force_halo: directions whose hops go through the MPI halo exchange with this (single) rank itself.
  // reconstruct: 0 = the host clover term uploaded (the reference path, links of 18 reals); 18, 12 or 8 = the fields
  // built on the device with links of that many reals (dirac.reconstruct).
  OperatorSetup(const Extents& extents, const std::vector<Cd>& links, double kappa, double csw,
                const std::array<double, 4>& theta, const std::array<bool, 4>& force_halo = {}, int reconstruct = 0,
                const TransportRequest& transport = {})
      : geom(extents, extents, {0, 0, 0, 0}, force_halo), ctx{metrics, comm, self_grid(force_halo)}, gauge(geom) {
    gauge_from_natural(links, gauge);
    clover = make_clover(gauge, kappa, csw);
    DiracParams p;
    p.kappa = kappa;
    p.csw = csw;
    p.theta = theta;
    p.reconstruct = reconstruct == 0 ? 18 : reconstruct;
    p.transport = transport;
    if (reconstruct == 0)
      op = std::make_unique<WilsonClover<R>>(ctx, geom, gauge, clover, p);
    else
      op = std::make_unique<WilsonClover<R>>(ctx, geom, gauge, p);
  }
  SpinorField<R> field(const std::vector<Cd>& nat) {
    SpinorField<R> f(geom);
    spinor_from_natural(geom, nat, f);
    return f;
  }
  std::vector<Cd> natural(const SpinorField<R>& f) { return spinor_to_natural(geom, f); }
  // M psi with the production operator, natural order in and out.
  std::vector<Cd> apply_m(const std::vector<Cd>& psi) {
    SpinorField<R> in = field(psi), out(geom);
    op->apply_m(out, in);
    return natural(out);
  }

  static ProcessGrid self_grid(const std::array<bool, 4>& force_halo) {
    ProcessGrid g;
    g.partitioned = force_halo;
    g.cart = MPI_COMM_WORLD;
    return g;
  }

  Geometry geom;
  MetricsRegistry metrics;
  Communicator comm;
  Context ctx;
  HostGauge gauge;
  HostClover clover;
  std::unique_ptr<WilsonClover<R>> op;
};

// The operator's links and clover term built by the set-up kernels (build_operator_fields) from a random gauge field
// of one rank, beside the host reference make_clover of the same field.
template <typename R>
struct DeviceFieldsSetup {
  DeviceFieldsSetup(const Extents& extents, std::uint64_t seed, double width, double kappa, double csw)
      : geom(extents, extents, {0, 0, 0, 0}, {}),
        ctx{metrics, comm},
        gauge(make_random_gauge(geom, seed, width)),
        links(geom),
        a{CloverField<R>(geom), CloverField<R>(geom)},
        a_inv{CloverField<R>(geom), CloverField<R>(geom)} {
    gauge.fill_halo();
    host = make_clover(gauge, kappa, csw);
    build_operator_fields(ctx, gauge, kappa, csw, links, a, a_inv);
  }

  Geometry geom;
  MetricsRegistry metrics;
  Communicator comm;
  Context ctx;
  HostGauge gauge;
  HostClover host;
  GaugeField<R> links;
  CloverField<R> a[2], a_inv[2];
};

}  // namespace emprism::test
