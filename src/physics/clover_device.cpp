// clover_device.cpp: launchers of the operator's set-up kernels (see clover_device.hpp). Flops per site of the
// clover build: 6 planes x (16 SU(3) products of 198 flops + 72) for F, 2 x (LDL^dag 6x6 + 6 columns) ~ 2 x 1000;
// minimum bytes: the 4 links of a site read once (double), A and A^-1 written (72 R each).
#include "src/physics/clover_device.hpp"

#include <chrono>

#include "kernels/clover_build.hpp"
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

}  // namespace

template <typename R>
void build_operator_fields(Context& ctx, const HostGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]) {
  const Geometry& g = u.geometry();
  const auto& host = u.storage();
  const auto t0 = std::chrono::steady_clock::now();
  Buffer<SU3<double>> links(host.size());
  links.copy_from_host(host.data());
  ctx.metrics.record("setup_gauge_copy", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                     0, static_cast<double>(links.bytes()));
  const ExtGaugeView ext = ext_view(links, g);
  const double vol = static_cast<double>(g.local_volume());
  launch(ctx.metrics, {"setup_gauge_links", 0, vol * 4 * 18 * (8 + sizeof(R))}, g.local_volume(),
         GaugeFromExtended<R>{g.arg(), ext, gauge.view()});
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
  if (singular > 0) make_clover(u, kappa, csw);  // names the first singular site (throws)
}

template <typename R, typename Ro>
void convert_operator_fields(Context& ctx, const Geometry& g, const GaugeField<Ro>& gauge, const CloverField<Ro> a[2],
                             const CloverField<Ro> a_inv[2], GaugeField<R>& gauge_out, CloverField<R> a_out[2],
                             CloverField<R> a_inv_out[2]) {
  ConvertOperatorFields<R, Ro> f;
  f.vh = g.half_volume();
  f.gin = gauge.view();
  f.gout = gauge_out.view();
  for (int p = 0; p < 2; ++p) {
    f.ain[p] = a[p].view();
    f.ain_inv[p] = a_inv[p].view();
    f.aout[p] = a_out[p].view();
    f.aout_inv[p] = a_inv_out[p].view();
  }
  const double vol = static_cast<double>(g.local_volume());
  launch(ctx.metrics, {"setup_convert", 0, vol * (4 * 18 + 2 * 72) * (sizeof(R) + sizeof(Ro))}, g.local_volume(), f);
}

template void convert_operator_fields<float, double>(Context&, const Geometry&, const GaugeField<double>&,
                                                     const CloverField<double>[2], const CloverField<double>[2],
                                                     GaugeField<float>&, CloverField<float>[2], CloverField<float>[2]);

template void build_operator_fields<float>(Context&, const HostGauge&, double, double, GaugeField<float>&,
                                           CloverField<float>[2], CloverField<float>[2]);
template void build_operator_fields<double>(Context&, const HostGauge&, double, double, GaugeField<double>&,
                                            CloverField<double>[2], CloverField<double>[2]);

}  // namespace emprism
