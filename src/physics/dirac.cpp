// dirac.cpp: launchers of the Wilson-clover kernels (see dirac.hpp). Flops and minimum bytes per output
// site, with S = 24 R (spinor), G = 18 R (link), C = 72 R (clover block pair), R = sizeof(real):
//   hopping 1320 flops, 8 G + S (each input spinor counted once, reused by neighbours)
//   clover mat-vec 552 flops, C;  xpay 48 flops, S
#include "src/physics/dirac.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "kernels/halo_pack.hpp"
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
      tmp_o_(geom),
      halo_(ctx.grid) {
  if (clover.kappa != params.kappa || clover.csw != params.csw)  // kappa and csw reach the operator once
    throw std::invalid_argument("WilsonClover: the clover term was built with other kappa, csw than the operator's");
  upload_gauge(gauge, gauge_);
  for (int p = 0; p < 2; ++p) {
    upload_clover(clover.a[p], a_[p]);
    upload_clover(clover.a_inv[p], a_inv_[p]);
  }
  for (int mu = 0; mu < 4; ++mu) phase_[mu] = {R(std::cos(params.theta[mu])), R(std::sin(params.theta[mu]))};
  staged_ = !backend::device_is_host() && !params.gpu_aware_mpi;
  for (int mu = 0; mu < 4; ++mu) {
    if (!geom.partitioned(mu)) continue;
    const auto n = static_cast<std::size_t>(geom.arg().face_volume(mu));
    send_bwd_[mu] = Buffer<HalfSpinor<R>>(n);
    send_fwd_[mu] = Buffer<HalfSpinor<R>>(n);
    recv_fwd_[mu] = Buffer<HalfSpinor<R>>(n);
    recv_bwd_[mu] = Buffer<HalfSpinor<R>>(n);
    if (staged_) {
      for (Pinned* h : {&host_send_bwd_[mu], &host_send_fwd_[mu], &host_recv_fwd_[mu], &host_recv_bwd_[mu]})
        h->p = backend::host_alloc_pinned(send_bwd_[mu].bytes());
    }
  }
  for (int p = 0; p < 2; ++p) {
    const std::vector<int> sites = geom.boundary_sites(p);
    boundary_[p] = Buffer<int>(sites.size());
    boundary_[p].from_host(sites);  // (an empty list allocates nothing)
  }
}

template <typename R>
void WilsonClover<R>::pack_and_start(const SpinorView<R>& in, int in_parity, bool dag) {
  HaloPackArg<R> a{geom_.arg(), gauge_.view(), in, in_parity, nullptr, nullptr};
  std::array<const void*, 4> sb{}, sf{};
  std::array<void*, 4> rf{}, rb{};
  std::array<std::size_t, 4> bytes{};
  for (int mu = 0; mu < 4; ++mu) {
    if (!geom_.partitioned(mu)) continue;
    a.send_bwd = send_bwd_[mu].data();
    a.send_fwd = send_fwd_[mu].data();
    const int n = 2 * geom_.arg().face_volume(mu);
    switch (mu * 2 + (dag ? 1 : 0)) {
      case 0:
        run_kernel(n, HaloPack<R, false, 0>{a});
        break;
      case 1:
        run_kernel(n, HaloPack<R, true, 0>{a});
        break;
      case 2:
        run_kernel(n, HaloPack<R, false, 1>{a});
        break;
      case 3:
        run_kernel(n, HaloPack<R, true, 1>{a});
        break;
      case 4:
        run_kernel(n, HaloPack<R, false, 2>{a});
        break;
      case 5:
        run_kernel(n, HaloPack<R, true, 2>{a});
        break;
      case 6:
        run_kernel(n, HaloPack<R, false, 3>{a});
        break;
      default:
        run_kernel(n, HaloPack<R, true, 3>{a});
        break;
    }
    bytes[mu] = send_bwd_[mu].bytes();
    if (staged_) {
      send_bwd_[mu].copy_to_host(host_send_bwd_[mu].p);
      send_fwd_[mu].copy_to_host(host_send_fwd_[mu].p);
      sb[mu] = host_send_bwd_[mu].p;
      sf[mu] = host_send_fwd_[mu].p;
      rf[mu] = host_recv_fwd_[mu].p;
      rb[mu] = host_recv_bwd_[mu].p;
    } else {
      sb[mu] = send_bwd_[mu].data();
      sf[mu] = send_fwd_[mu].data();
      rf[mu] = recv_fwd_[mu].data();
      rb[mu] = recv_bwd_[mu].data();
    }
  }
  halo_.start(sb, sf, rf, rb, bytes);
}

template <typename R>
void WilsonClover<R>::finish_exchange() {
  halo_.wait();
  if (!staged_) return;
  for (int mu = 0; mu < 4; ++mu) {
    if (!geom_.partitioned(mu)) continue;
    recv_fwd_[mu].copy_from_host(host_recv_fwd_[mu].p);
    recv_bwd_[mu].copy_from_host(host_recv_bwd_[mu].p);
  }
}

template <typename R>
DiracArg<R> WilsonClover<R>::make_arg(int out_parity, const ParitySpinor<R>& in) const {
  DiracArg<R> a{};
  a.hop.lat = geom_.arg();
  a.hop.gauge = gauge_.view();
  a.hop.in = in.view();
  a.hop.out_parity = out_parity;
  for (int mu = 0; mu < 4; ++mu) {
    a.hop.phase[mu] = phase_[mu];
    a.hop.halo_fwd[mu] = recv_fwd_[mu].data();
    a.hop.halo_bwd[mu] = recv_bwd_[mu].data();
  }
  return a;
}

template <typename R>
template <typename Epi>
void WilsonClover<R>::dslash(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi) {
  const double n = geom_.half_volume();
  const LaunchCost cost{name, flops_per_site * n, bytes_per_site * sizeof(R) * n};
  if (!geom_.any_partitioned()) {
    launch(ctx_.metrics, cost, geom_.half_volume(), DslashInterior<Epi>{epi});
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const int out_parity = epi.a.hop.out_parity;
  pack_and_start(epi.a.hop.in, 1 - out_parity, Epi::kDag);
  run_kernel(geom_.half_volume(), DslashInterior<Epi>{epi});
  // While the device computes the interior, keep the MPI transfers moving (most MPI libraries progress only
  // inside MPI calls); what remains after the interior is done is the exposed halo time.
  backend::record_marker();
  while (!backend::marker_done())
    if (halo_.test()) break;
  finish_exchange();
  run_kernel(static_cast<std::int64_t>(boundary_[out_parity].size()),
             DslashExterior<Epi>{epi, boundary_[out_parity].data()});
  backend::synchronize();
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  ctx_.metrics.record(name, dt.count(), cost.flops, cost.bytes);
}

template <typename R>
void WilsonClover<R>::apply_m(SpinorField<R>& out, const SpinorField<R>& in) {
  for (int p = 0; p < 2; ++p) {
    DiracArg<R> a = make_arg(p, in.parity(1 - p));
    a.clover = a_[p].view();
    a.x = in.parity(p).view();
    a.out = out.parity(p).view();
    a.b = R(-params_.kappa);
    dslash("wilson_clover", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, EpiCloverPlus<R>{a});
  }
}

template <typename R>
void WilsonClover<R>::apply_clover(ParitySpinor<R>& out, const ParitySpinor<R>& in, int parity, bool inverse) {
  DiracArg<R> a{};
  a.clover = inverse ? a_inv_[parity].view() : a_[parity].view();
  a.x = in.view();
  a.out = out.view();
  const double n = geom_.half_volume();
  launch(ctx_.metrics, {"clover", kCloverFlops * n, (24 + 72 + 24) * sizeof(R) * n}, geom_.half_volume(),
         CloverOnly<R>{a});
}

template <typename R>
void WilsonClover<R>::eo_clover(ParitySpinor<R>& out_e, const ParitySpinor<R>& in_o, bool dag) {
  DiracArg<R> a = make_arg(0, in_o);
  a.clover = a_inv_[0].view();
  a.out = out_e.view();
  if (dag)
    dslash("eo_clover_dag", kHopFlops + kCloverFlops, 8 * 18 + 24 + 72 + 24, EpiClover<R, true>{a});
  else
    dslash("eo_clover", kHopFlops + kCloverFlops, 8 * 18 + 24 + 72 + 24, EpiClover<R, false>{a});
}

template <typename R>
void WilsonClover<R>::oe_clover(ParitySpinor<R>& out, ParitySpinor<R>& out2, const ParitySpinor<R>& t_e,
                                const ParitySpinor<R>& x) {
  DiracArg<R> b = make_arg(1, t_e);
  b.clover = a_inv_[1].view();
  b.x = x.view();
  b.out = out.view();
  b.out2 = out2.view();
  b.b = R(-params_.kappa * params_.kappa);
  dslash("oe_clover", kHopFlops + 2 * kCloverFlops + kXpayFlops, 8 * 18 + 24 + 72 + 24 + 24 + 24, EpiCloverXpay<R>{b});
}

template <typename R>
void WilsonClover<R>::oe_clover_dag(ParitySpinor<R>& out, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x) {
  DiracArg<R> b = make_arg(1, t_e);
  b.x = x.view();
  b.out = out.view();
  b.b = R(-params_.kappa * params_.kappa);
  dslash("oe_clover_dag", kHopFlops + kXpayFlops, 8 * 18 + 24 + 24 + 24, EpiXpay<R, true>{b});
}

template <typename R>
void WilsonClover<R>::apply_mhat(ParitySpinor<R>& out, const ParitySpinor<R>& in) {
  eo_clover(tmp_e_, in, false);
  oe_clover(out, tmp_o_, tmp_e_, in);  // tmp_o_ receives A_oo^-1 out (used by apply_mdagm)
}

template <typename R>
void WilsonClover<R>::apply_mhat_dag(ParitySpinor<R>& out, const ParitySpinor<R>& in) {
  apply_clover(tmp_o_, in, 1, true);
  eo_clover(tmp_e_, tmp_o_, true);
  oe_clover_dag(out, tmp_e_, in);
}

template <typename R>
void WilsonClover<R>::apply_mdagm(ParitySpinor<R>& out, ParitySpinor<R>& v, const ParitySpinor<R>& in) {
  apply_mhat(v, in);  // leaves A_oo^-1 v in tmp_o_
  eo_clover(tmp_e_, tmp_o_, true);
  oe_clover_dag(out, tmp_e_, v);
}

template <typename R>
void WilsonClover<R>::prepare_source(ParitySpinor<R>& bhat, const SpinorField<R>& b) {
  apply_clover(tmp_e2_, b.even, 0, true);
  DiracArg<R> a = make_arg(1, tmp_e2_);
  a.clover = a_inv_[1].view();
  a.x = b.odd.view();
  a.out = bhat.view();
  a.b = R(params_.kappa);
  dslash("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, EpiCloverOfXpay<R>{a});
}

template <typename R>
void WilsonClover<R>::reconstruct(SpinorField<R>& x, const SpinorField<R>& b) {
  DiracArg<R> a = make_arg(0, x.odd);
  a.clover = a_inv_[0].view();
  a.x = b.even.view();
  a.out = x.even.view();
  a.b = R(params_.kappa);
  dslash("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 8 * 18 + 24 + 24 + 72 + 24, EpiCloverOfXpay<R>{a});
}

template class WilsonClover<float>;
template class WilsonClover<double>;

}  // namespace emprism
