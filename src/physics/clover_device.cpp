// clover_device.cpp: launchers of the operator's set-up kernels (see clover_device.hpp). Flops per site of the
// clover build: 6 planes x (16 SU(3) products of 198 flops + 72) for F, 2 x (LDL^dag 6x6 + 6 columns) ~ 2 x 1000;
// minimum bytes: the 4 links of a site read once (double), A and A^-1 written (72 R each).
#include "src/physics/clover_device.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/clover_build.hpp"
#include "kernels/errors.hpp"
#include "kernels/launch.hpp"
#include "src/physics/clover.hpp"

namespace emprism {

namespace {

constexpr double kCloverBuildFlops = 6 * (16 * 198 + 72) + 2 * 1000;

ExtGaugeView ext_view(const Buffer<SU3<double>>& links, const Geometry& g) {
  ExtGaugeView v;
  v.u = links.data();
  for (int k = 0; k < 4; ++k) v.e[k] = g.local()[k] + 2;
  return v;
}

// The links packed to the field's format, row "setup_gauge_links": the double links read, Rc reals of R written.
template <int Rc, typename R>
void links_of_format(Context& ctx, const Geometry& g, const ExtGaugeView& ext, GaugeField<R>& gauge) {
  const double vol = static_cast<double>(g.local_volume());
  launch(ctx.metrics, {"setup_gauge_links", 0, vol * 4 * (18 * 8 + Rc * sizeof(R))}, g.local_volume(),
         GaugeFromExtended<R, Rc>{g.arg(), ext, gauge.template view<Rc>()});
}

template <int Rc, typename R, typename Ro>
void convert_of_format(Context& ctx, const Geometry& g, const GaugeField<Ro>& gauge, const CloverField<Ro> a[2],
                       const CloverField<Ro> a_inv[2], GaugeField<R>& gauge_out, CloverField<R> a_out[2],
                       CloverField<R> a_inv_out[2]) {
  ConvertOperatorFields<R, Ro, Rc> f;
  f.vh = g.half_volume();
  f.gin = gauge.template view<Rc>();
  f.gout = gauge_out.template view<Rc>();
  for (int p = 0; p < 2; ++p) {
    f.ain[p] = a[p].view();
    f.ain_inv[p] = a_inv[p].view();
    f.aout[p] = a_out[p].view();
    f.aout_inv[p] = a_inv_out[p].view();
  }
  const double vol = static_cast<double>(g.local_volume());
  launch(ctx.metrics, {"setup_convert", 0, vol * (4 * Rc + 2 * 72) * (sizeof(R) + sizeof(Ro))}, g.local_volume(), f);
}

template <int Rc>
void convert_half_of_format(Context& ctx, const Geometry& g, const GaugeField<double>& gauge,
                            const CloverField<double> a_inv[2], GaugeField<float>& gauge_out,
                            CloverField<Half> a_inv_out[2]) {
  ConvertHalfOperatorFields<double, Rc> f;
  f.vh = g.half_volume();
  f.gin = gauge.template view<Rc>();
  f.gout = gauge_out.template view<Rc>();
  for (int p = 0; p < 2; ++p) {
    f.ain_inv[p] = a_inv[p].view();
    f.aout_inv[p] = a_inv_out[p].view();
  }
  const double vol = static_cast<double>(g.local_volume());
  const double clover_bytes = 72 * sizeof(double) + 2 * (sizeof(CloverBlock16) + sizeof(float));
  launch(ctx.metrics, {"setup_convert", 0, vol * (4 * Rc * (sizeof(float) + sizeof(double)) + clover_bytes)},
         g.local_volume(), f);
}

// max |unpack(pack(u)) - u| over the entries, in double; NaN when an unpacked entry is not finite (8 reals at
// |U10| = 1).
template <int Rc>
double round_trip_deviation(const SU3<double>& u) {
  const SU3<double> r = unpack_link(pack_link<Rc>(u));
  double dev = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double d = std::sqrt(norm2(r.e[a][b] - u.e[a][b]));
      if (!(d <= dev)) dev = d;  // (keeps a NaN)
    }
  return dev;
}

}  // namespace

template <typename R>
void build_operator_fields(Context& ctx, const DeviceGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]) {
  const Geometry& g = u.geometry();
  const ExtGaugeView ext = ext_view(u.buffer(), g);
  switch (gauge.reconstruct()) {
    case 12:
      links_of_format<12>(ctx, g, ext, gauge);
      break;
    case 8:
      links_of_format<8>(ctx, g, ext, gauge);
      break;
    default:
      links_of_format<18>(ctx, g, ext, gauge);
      break;
  }
  CloverBuild<R> f;
  f.lat = g.arg();
  f.u = ext;
  f.with_field = csw != 0.0;
  clover_plane_coefficients(kappa, csw, f.plane, f.coef);
  double singular = 0;
  for (int p = 0; p < 2; ++p) {
    f.parity = p;
    f.a = a[p].view();
    f.a_inv = a_inv[p].view();
    const double n = g.half_volume();
    singular +=
        launch_reduce<1>(ctx.metrics, {"setup_clover", n * kCloverBuildFlops, n * (4 * 18 * 8 + 2 * 72 * sizeof(R))},
                         2 * std::int64_t{g.half_volume()}, f)
            .v[0];
  }
  if (singular > 0) {  // names the first singular site (throws): the host's make_clover on a host copy (rare)
    HostGauge host(g, HostGauge::Uninitialised{});
    u.buffer().copy_to_host(host.storage().data());
    make_clover(host, kappa, csw);
  }
}

template <typename R>
void build_operator_fields(Context& ctx, const HostGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]) {
  const auto& host = u.storage();
  const auto t0 = std::chrono::steady_clock::now();
  DeviceGauge links(u.geometry());
  links.buffer().copy_from_host(host.data());
  ctx.metrics.record("setup_gauge_copy", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                     0, static_cast<double>(links.bytes()));
  build_operator_fields(ctx, static_cast<const DeviceGauge&>(links), kappa, csw, gauge, a, a_inv);
}

template <typename R, typename Ro>
void convert_operator_fields(Context& ctx, const Geometry& g, const GaugeField<Ro>& gauge, const CloverField<Ro> a[2],
                             const CloverField<Ro> a_inv[2], GaugeField<R>& gauge_out, CloverField<R> a_out[2],
                             CloverField<R> a_inv_out[2]) {
  switch (gauge.reconstruct()) {
    case 12:
      convert_of_format<12>(ctx, g, gauge, a, a_inv, gauge_out, a_out, a_inv_out);
      break;
    case 8:
      convert_of_format<8>(ctx, g, gauge, a, a_inv, gauge_out, a_out, a_inv_out);
      break;
    default:
      convert_of_format<18>(ctx, g, gauge, a, a_inv, gauge_out, a_out, a_inv_out);
      break;
  }
}

void convert_half_operator_fields(Context& ctx, const Geometry& g, const GaugeField<double>& gauge,
                                  const CloverField<double> a_inv[2], GaugeField<float>& gauge_out,
                                  CloverField<Half> a_inv_out[2]) {
  if (gauge.reconstruct() == 12)
    convert_half_of_format<12>(ctx, g, gauge, a_inv, gauge_out, a_inv_out);
  else if (gauge.reconstruct() == 18)
    convert_half_of_format<18>(ctx, g, gauge, a_inv, gauge_out, a_inv_out);
  else  // (the input refuses it: dirac.reconstruct)
    throw std::logic_error("convert_half_operator_fields: the half operator has links of 18 or 12 reals");
}

void check_link_format(const HostGauge& u, int reconstruct, double tol) {
  if (reconstruct == 18) return;
  const Geometry& g = u.geometry();
  std::int64_t first = g.local_volume() * 4;  // the first bad link, lex * 4 + mu
#pragma omp parallel for schedule(static) reduction(min : first)
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      if (!(link_format_deviation(u.at(x, mu), reconstruct) <= tol)) first = std::min(first, lex * 4 + mu);
  }
  if (first == g.local_volume() * 4) return;
  int x[4];
  g.local_coords(first / 4, x);
  const int mu = static_cast<int>(first % 4);
  const Extents& o = g.origin();
  char dev[32];
  std::snprintf(dev, sizeof dev, "%.3g", link_format_deviation(u.at(x, mu), reconstruct));
  char bound[16];
  std::snprintf(bound, sizeof bound, "%.0e", tol);
  throw InputError(std::string("links of ") + std::to_string(reconstruct) +
                   " reals need a gauge field in SU(3), but the link U_" + "xyzt"[mu] + " at site (x, y, z, t) = (" +
                   std::to_string(o[0] + x[0]) + ", " + std::to_string(o[1] + x[1]) + ", " +
                   std::to_string(o[2] + x[2]) + ", " + std::to_string(o[3] + x[3]) + ") deviates by " + dev + " > " +
                   bound + " (max of |U U^dag - 1|, |det U - 1| and the error of its unpacked form); use 18");
}

double link_format_deviation(const SU3<double>& u, int reconstruct) {
  const double su3 = unitarity_deviation(u);
  if (!(su3 <= 1.0)) return su3;  // not finite, or far from SU(3): the unpacked form means nothing
  const double trip = reconstruct == 12 ? round_trip_deviation<12>(u) : round_trip_deviation<8>(u);
  return trip <= su3 ? su3 : trip;  // (keeps a NaN)
}

void compress_clover(Context& ctx, const CloverField<float>& a, CloverField<CloverDynamic>& out) {
  const int vh = out.sites();
  const double n = vh;
  launch(ctx.metrics, {"setup_clover_compress", 0, n * (72 * sizeof(float) + sizeof(CloverSiteC))}, vh,
         CompressClover{a.view(), out.view(false)});
}

template void convert_operator_fields<float, double>(Context&, const Geometry&, const GaugeField<double>&,
                                                     const CloverField<double>[2], const CloverField<double>[2],
                                                     GaugeField<float>&, CloverField<float>[2], CloverField<float>[2]);
// (widening, exact: the fp64 operator on the fields of an fp32 one, the tests' reference for the fp32/fp64 operator)
template void convert_operator_fields<double, float>(Context&, const Geometry&, const GaugeField<float>&,
                                                     const CloverField<float>[2], const CloverField<float>[2],
                                                     GaugeField<double>&, CloverField<double>[2],
                                                     CloverField<double>[2]);

template void build_operator_fields<float>(Context&, const HostGauge&, double, double, GaugeField<float>&,
                                           CloverField<float>[2], CloverField<float>[2]);
template void build_operator_fields<double>(Context&, const HostGauge&, double, double, GaugeField<double>&,
                                            CloverField<double>[2], CloverField<double>[2]);
template void build_operator_fields<float>(Context&, const DeviceGauge&, double, double, GaugeField<float>&,
                                           CloverField<float>[2], CloverField<float>[2]);
template void build_operator_fields<double>(Context&, const DeviceGauge&, double, double, GaugeField<double>&,
                                            CloverField<double>[2], CloverField<double>[2]);

}  // namespace emprism
