// dirac.cpp: launchers of the Wilson-clover kernels (see dirac.hpp). Flops and minimum bytes per output
// site, with S = 24 R (spinor), G = 18 R (link), C = 72 R (clover block pair), R = sizeof(real):
//   hopping 1320 flops, 8 G + S (each input spinor counted once, reused by neighbours)
//   clover mat-vec 552 flops, C;  xpay 48 flops, S
#include "src/dirac.hpp"

#include <cmath>

#include "kernels/launch.hpp"

namespace emprism {

namespace {
constexpr double kHopFlops = 1320, kCloverFlops = 552, kXpayFlops = 48;
}

template <typename R>
WilsonClover<R>::WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const HostClover& clover,
                              const DiracParams& params)
    : ctx_(ctx),
      geom_(geom),
      params_(params),
      gauge_(geom),
      a_{CloverField<R>(geom), CloverField<R>(geom)},
      a_inv_{CloverField<R>(geom), CloverField<R>(geom)},
      tmp_e_(geom),
      tmp_e2_(geom),
      tmp_o_(geom) {
  upload_gauge(gauge, gauge_);
  for (int p = 0; p < 2; ++p) {
    upload_clover(clover.a[p], a_[p]);
    upload_clover(clover.a_inv[p], a_inv_[p]);
  }
  for (int mu = 0; mu < 4; ++mu) phase_[mu] = {R(std::cos(params.theta[mu])), R(std::sin(params.theta[mu]))};
}

template <typename R>
DiracArg<R> WilsonClover<R>::make_arg(int out_parity, const ParitySpinor<R>& in) const {
  DiracArg<R> a{};
  a.hop.lat = geom_.arg();
  a.hop.gauge = gauge_.view();
  a.hop.in = in.view();
  a.hop.out_parity = out_parity;
  for (int mu = 0; mu < 4; ++mu) a.hop.phase[mu] = phase_[mu];
  return a;
}

template <typename R>
template <typename F>
void WilsonClover<R>::run(const char* name, double flops_per_site, double bytes_per_site, const F& f) {
  const double n = geom_.half_volume();
  launch(ctx_.metrics, {name, flops_per_site * n, bytes_per_site * sizeof(R) * n}, geom_.half_volume(), f);
}

template <typename R>
void WilsonClover<R>::apply_m(SpinorField<R>& out, const SpinorField<R>& in) {
  for (int p = 0; p < 2; ++p) {
    DiracArg<R> a = make_arg(p, in.parity(1 - p));
    a.clover = a_[p].view();
    a.x = in.parity(p).view();
    a.out = out.parity(p).view();
    a.b = R(-params_.kappa);
    run("wilson_clover", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, CloverPlusHop<R>{a});
  }
}

template <typename R>
void WilsonClover<R>::apply_clover(ParitySpinor<R>& out, const ParitySpinor<R>& in, int parity, bool inverse) {
  DiracArg<R> a{};
  a.clover = inverse ? a_inv_[parity].view() : a_[parity].view();
  a.x = in.view();
  a.out = out.view();
  run("clover", kCloverFlops, 24 + 72 + 24, CloverOnly<R>{a});
}

template <typename R>
void WilsonClover<R>::apply_mhat(ParitySpinor<R>& out, const ParitySpinor<R>& in) {
  // t_e = A_ee^-1 H_eo in ; out = in - kappa^2 A_oo^-1 H_oe t_e  (tmp_o receives A_oo^-1 out, unused here)
  DiracArg<R> a = make_arg(0, in);
  a.clover = a_inv_[0].view();
  a.out = tmp_e_.view();
  run("eo_clover", kHopFlops + kCloverFlops, 8 * 18 + 24 + 72 + 24, HopClover<R, false>{a});
  DiracArg<R> b = make_arg(1, tmp_e_);
  b.clover = a_inv_[1].view();
  b.x = in.view();
  b.out = out.view();
  b.out2 = tmp_o_.view();
  b.b = R(-params_.kappa * params_.kappa);
  run("oe_clover", kHopFlops + 2 * kCloverFlops + kXpayFlops, 8 * 18 + 24 + 72 + 24 + 24 + 24, HopCloverXpay<R>{b});
}

template <typename R>
void WilsonClover<R>::apply_mhat_dag(ParitySpinor<R>& out, const ParitySpinor<R>& in) {
  apply_clover(tmp_o_, in, 1, true);
  DiracArg<R> a = make_arg(0, tmp_o_);
  a.clover = a_inv_[0].view();
  a.out = tmp_e_.view();
  run("eo_clover_dag", kHopFlops + kCloverFlops, 8 * 18 + 24 + 72 + 24, HopClover<R, true>{a});
  DiracArg<R> b = make_arg(1, tmp_e_);
  b.x = in.view();
  b.out = out.view();
  b.b = R(-params_.kappa * params_.kappa);
  run("oe_clover_dag", kHopFlops + kXpayFlops, 8 * 18 + 24 + 24 + 24, HopXpay<R, true>{b});
}

template <typename R>
void WilsonClover<R>::apply_mdagm(ParitySpinor<R>& out, ParitySpinor<R>& v, const ParitySpinor<R>& in) {
  apply_mhat(v, in);  // leaves A_oo^-1 v in tmp_o_
  DiracArg<R> a = make_arg(0, tmp_o_);
  a.clover = a_inv_[0].view();
  a.out = tmp_e_.view();
  run("eo_clover_dag", kHopFlops + kCloverFlops, 8 * 18 + 24 + 72 + 24, HopClover<R, true>{a});
  DiracArg<R> b = make_arg(1, tmp_e_);
  b.x = v.view();
  b.out = out.view();
  b.b = R(-params_.kappa * params_.kappa);
  run("oe_clover_dag", kHopFlops + kXpayFlops, 8 * 18 + 24 + 24 + 24, HopXpay<R, true>{b});
}

template <typename R>
void WilsonClover<R>::prepare_source(ParitySpinor<R>& bhat, const SpinorField<R>& b) {
  apply_clover(tmp_e2_, b.even, 0, true);
  DiracArg<R> a = make_arg(1, tmp_e2_);
  a.clover = a_inv_[1].view();
  a.x = b.odd.view();
  a.out = bhat.view();
  a.b = R(params_.kappa);
  run("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, CloverXpayHop<R>{a});
}

template <typename R>
void WilsonClover<R>::reconstruct(SpinorField<R>& x, const SpinorField<R>& b) {
  DiracArg<R> a = make_arg(0, x.odd);
  a.clover = a_inv_[0].view();
  a.x = b.even.view();
  a.out = x.even.view();
  a.b = R(params_.kappa);
  run("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, CloverXpayHop<R>{a});
}

template class WilsonClover<float>;
template class WilsonClover<double>;

}  // namespace emprism
