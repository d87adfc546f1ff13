// dirac_impl.hpp: the template definitions of WilsonClover (dirac.hpp), the launchers of the Wilson-clover kernels.
// Their flops and minimum bytes per output site are those of src/physics/costs.hpp.
// Included only by the sources that instantiate one precision each (dirac.cpp: double, dirac_float.cpp, dirac_half.cpp,
// dirac_f32d.cpp), so that the GPU compilers build the precisions in parallel.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/halo_pack.hpp"
#include "kernels/launch.hpp"
#include "src/physics/costs.hpp"
#include "src/physics/dirac.hpp"

namespace emprism {

namespace {

template <typename R>
std::array<std::size_t, 4> face_bytes(const Geometry& g) {
  std::array<std::size_t, 4> b{};
  for (int mu = 0; mu < 4; ++mu)
    if (g.partitioned(mu)) b[mu] = static_cast<std::size_t>(g.arg().face_volume(mu)) * sizeof(HalfSpinor<real_t<R>>);
  return b;
}

// The operator's storage of A (inverse false) or A^-1 of one parity: Half keeps A^-1 only (in 16 bits).
template <typename R>
CloverField<clover_store_t<R>> clover_storage(const Geometry& g, bool inverse) {
  if constexpr (std::is_same_v<R, Half>) {
    return inverse ? CloverField<Half>(g) : CloverField<Half>();
  } else {
    return CloverField<store_t<R>>(g);
  }
}

constexpr int kTuneRepetitions = 3;  // timed applications per candidate policy (after one untimed)

// The hot kernels (every CG iteration: eo_clover, eo_clover_dag, oe_clover, oe_clover_dag) are tuned launches whose
// variant the context's Tuner picks (kernels/tune.hpp; their outputs never alias their inputs, so timing runs are
// safe); the other operators keep the default launch (one compiled variant each).
template <typename Epi>
constexpr bool kTunedEpi = false;
template <typename R, bool Dag>
constexpr bool kTunedEpi<EpiClover<R, Dag>> = true;
template <typename R>
constexpr bool kTunedEpi<EpiCloverXpay<R>> = true;
template <typename R>
constexpr bool kTunedEpi<EpiXpay<R, true>> = true;
template <typename R>
constexpr bool kTunedEpi<EpiXpayUpdate<R>> = true;

// Epilogues that update their output in place (EpiXpayUpdate: the CG's residual): not safe to run again, so the tuner
// times the kernel on a copy of the output (its out2) instead; with partitioned directions only once the operator's
// halo policy is chosen (timing the policies would apply the kernel again).
template <typename Epi>
constexpr bool kInPlaceEpi = false;
template <typename R>
constexpr bool kInPlaceEpi<EpiXpayUpdate<R>> = true;

// The tuner's form of an in-place epilogue: the same kernel on out2, which copy_output fills from out.
template <typename Epi>
Epi trial_of(const Epi& epi) {
  Epi trial = epi;
  trial.a.out = epi.a.out2;
  return trial;
}
template <typename R, typename Epi>
void copy_output(std::int64_t sites, const Epi& epi) {
  run_kernel(sites, ConvertFunctor<R, R>{epi.a.out2, epi.a.out});
}

}  // namespace

template <typename R>
WilsonClover<R>::WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const HostClover& clover,
                              const DiracParams& params)
    : WilsonClover(ctx, geom, params) {
  if (clover.kappa != params.kappa || clover.csw != params.csw)  // kappa and csw reach the operator once
    throw std::invalid_argument("WilsonClover: the clover term was built with other kappa, csw than the operator's");
  if (params.reconstruct != 18) throw std::invalid_argument("WilsonClover: the host reference path has links of 18");
  upload_gauge(gauge, gauge_);
  for (int p = 0; p < 2; ++p) {
    upload_clover(clover.a[p], a_[p]);
    upload_clover(clover.a_inv[p], a_inv_[p]);
  }
  compress_clover_term();
}

template <typename R>
WilsonClover<R>::WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const DiracParams& params)
    : WilsonClover(ctx, geom, params) {
  build_operator_fields(ctx, gauge, params.kappa, params.csw, gauge_, a_, a_inv_);
  compress_clover_term();
}

template <typename R>
WilsonClover<R>::WilsonClover(Context& ctx, const Geometry& geom, const DeviceGauge& gauge, const DiracParams& params)
    : WilsonClover(ctx, geom, params) {
  build_operator_fields(ctx, gauge, params.kappa, params.csw, gauge_, a_, a_inv_);
  compress_clover_term();
}

template <typename R>
template <typename Ro>
WilsonClover<R>::WilsonClover(Context& ctx, const WilsonClover<Ro>& other)
    : WilsonClover(ctx, other.geometry(), other.params()) {
  if constexpr (std::is_same_v<R, Half>) {
    static_assert(std::is_same_v<Ro, double>, "the half operator is built from the double operator");
    convert_half_operator_fields(ctx, geom_, other.links(), other.clover(true), gauge_, a_inv_);
  } else {
    convert_operator_fields(ctx, geom_, other.links(), other.clover(false), other.clover(true), gauge_, a_, a_inv_);
  }
  compress_clover_term();
}

template <typename R>
WilsonClover<R>::WilsonClover(Context& ctx, const Geometry& geom, const DiracParams& params)
    : ctx_(ctx),
      geom_(geom),
      params_(params),
      gauge_(geom, params.reconstruct),
      a_{clover_storage<R>(geom, false), clover_storage<R>(geom, false)},
      a_inv_{clover_storage<R>(geom, true), clover_storage<R>(geom, true)},
      tmp_e_(geom),
      tmp_e2_(geom),
      tmp_o_(geom),
      transport_(ctx.grid, face_bytes<R>(geom), params.transport),
      site_norm_(static_cast<std::size_t>(geom.half_volume())) {
  using T = real_t<R>;
  for (int mu = 0; mu < 4; ++mu) phase_[mu] = {T(std::cos(params.theta[mu])), T(std::sin(params.theta[mu]))};
  std::size_t most = 0;
  for (int p = 0; p < 2; ++p) {
    const std::vector<int> sites = geom.boundary_sites(p);
    most = std::max(most, sites.size());
    boundary_[p] = Buffer<int>(sites.size());
    boundary_[p].from_host(sites);  // (an empty list allocates nothing)
    for (int mu = 0; mu < 4; ++mu) {
      if (!geom.partitioned(mu)) continue;
      std::vector<int> face;  // (cb, boundary index) of the sites on the boundary of mu
      for (std::size_t k = 0; k < sites.size(); ++k) {
        int x[4];
        geom.arg().coords(sites[k], p, x);
        if (x[mu] == 0 || x[mu] == geom.local()[mu] - 1) face.insert(face.end(), {sites[k], static_cast<int>(k)});
      }
      face_sites_[p][mu] = Buffer<int>(face.size());
      face_sites_[p][mu].from_host(face);
    }
  }
  halo_sums_ = Buffer<Spinor<real_t<R>>>(geom.any_partitioned() ? tiled_sites(most) : 0);
}

template <typename R>
template <int Rc>
void WilsonClover<R>::pack_all(const HaloPackArg<R>& a, bool dag) {
  const auto run = [&](auto f) {  // f: HaloPackAll of the right Dag; its targets and ranges filled here
    using H = HalfSpinor<real_t<R>>;
    int n = 0;
    for (int mu = 0; mu < 4; ++mu) {
      if (geom_.partitioned(mu)) {
        const HaloTransport::PackTarget t = transport_.pack_target(mu);
        f.send_bwd[mu] = static_cast<H*>(t.to_bwd);
        f.send_fwd[mu] = static_cast<H*>(t.to_fwd);
        n += 2 * geom_.arg().face_volume(mu);
      }
      f.end[mu] = n;
    }
    run_kernel(n, f);  // the compute stream (a whole policy's pack_target stream)
  };
  if (dag)
    run(HaloPackAll<R, true, Rc>{a, {}, {}, {}});
  else
    run(HaloPackAll<R, false, Rc>{a, {}, {}, {}});
  for (int mu = 0; mu < 4; ++mu)
    if (geom_.partitioned(mu)) transport_.packed(mu);
}

template <typename R>
template <int Rc>
void WilsonClover<R>::pack(const SpinorView<R>& in, int in_parity, bool dag) {
  HaloPackArg<R> a{geom_.arg(), gauge_.links(), in, in_parity, nullptr, nullptr};
  if (transport_.policy().whole) {  // one launch on the compute stream packs every direction
    pack_all<Rc>(a, dag);
    return;
  }
  for (int mu = 0; mu < 4; ++mu) {
    if (!geom_.partitioned(mu)) continue;
    const HaloTransport::PackTarget t = transport_.pack_target(mu);
    a.send_bwd = static_cast<HalfSpinor<real_t<R>>*>(t.to_bwd);
    a.send_fwd = static_cast<HalfSpinor<real_t<R>>*>(t.to_fwd);
    const int n = 2 * geom_.arg().face_volume(mu);
    switch (mu * 2 + (dag ? 1 : 0)) {
      case 0:
        run_kernel(n, HaloPack<R, false, 0, Rc>{a}, t.stream);
        break;
      case 1:
        run_kernel(n, HaloPack<R, true, 0, Rc>{a}, t.stream);
        break;
      case 2:
        run_kernel(n, HaloPack<R, false, 1, Rc>{a}, t.stream);
        break;
      case 3:
        run_kernel(n, HaloPack<R, true, 1, Rc>{a}, t.stream);
        break;
      case 4:
        run_kernel(n, HaloPack<R, false, 2, Rc>{a}, t.stream);
        break;
      case 5:
        run_kernel(n, HaloPack<R, true, 2, Rc>{a}, t.stream);
        break;
      case 6:
        run_kernel(n, HaloPack<R, false, 3, Rc>{a}, t.stream);
        break;
      default:
        run_kernel(n, HaloPack<R, true, 3, Rc>{a}, t.stream);
        break;
    }
    transport_.packed(mu);
  }
}

template <typename R>
DiracArg<R> WilsonClover<R>::make_arg(int out_parity, const ParitySpinor<R>& in) const {
  DiracArg<R> a{};
  a.hop.lat = geom_.arg();
  a.hop.gauge = gauge_.links();
  a.hop.in = in.view();
  a.hop.out_parity = out_parity;
  for (int mu = 0; mu < 4; ++mu) a.hop.phase[mu] = phase_[mu];
  return a;
}

template <typename R>
template <int Rc, typename Epi>
void WilsonClover<R>::exchange_and_apply(Epi epi, const std::string& key) {
  const int out_parity = epi.a.hop.out_parity;
  transport_.begin();
  pack<Rc>(epi.a.hop.in, 1 - out_parity, Epi::kDag);
  for (int mu = 0; mu < 4; ++mu) {
    if (!geom_.partitioned(mu)) continue;
    epi.a.hop.halo_fwd[mu] = static_cast<const HalfSpinor<real_t<R>>*>(transport_.from_fwd(mu));
    epi.a.hop.halo_bwd[mu] = static_cast<const HalfSpinor<real_t<R>>*>(transport_.from_bwd(mu));
  }
  if (transport_.policy().whole) {  // no overlap: one kernel over all sites once every face is in place
    for (int mu = 0; mu < 4; ++mu)
      if (geom_.partitioned(mu)) transport_.wait(mu);
    if constexpr (kTunedEpi<Epi>)
      run_tuned(ctx_.tuner, key, geom_.half_volume(), DslashWhole<Epi, Rc>{epi});
    else
      run_kernel(geom_.half_volume(), DslashWhole<Epi, Rc>{epi});
    transport_.end();
    return;
  }
  if constexpr (kTunedEpi<Epi>)
    run_tuned(ctx_.tuner, key, geom_.half_volume(), DslashInterior<Epi, Rc>{epi});
  else
    run_kernel(geom_.half_volume(), DslashInterior<Epi, Rc>{epi});
  if (transport_.policy().split_exterior) {
    for (int mu = 0; mu < 4; ++mu) {  // in order: the partial sums add up as in the fused kernel
      if (!geom_.partitioned(mu)) continue;
      transport_.wait(mu);
      const Buffer<int>& sites = face_sites_[out_parity][mu];
      using T = real_t<R>;
      const SpinorView<T> halo{BlockedArray<Spinor<T>>::of(halo_sums_.data(), static_cast<int>(halo_sums_.size()))};
      run_kernel(static_cast<std::int64_t>(sites.size() / 2), DslashExteriorDir<Epi, Rc>{epi, sites.data(), halo, mu});
    }
  } else {
    for (int mu = 0; mu < 4; ++mu)
      if (geom_.partitioned(mu)) transport_.wait(mu);
    run_kernel(static_cast<std::int64_t>(boundary_[out_parity].size()),
               DslashExterior<Epi, Rc>{epi, boundary_[out_parity].data()});
  }
  transport_.end();
}

template <typename R>
template <int Rc, typename Epi>
void WilsonClover<R>::tune(const Epi& epi, const std::string& key) {
  const std::vector<HaloPolicy>& candidates = transport_.candidates();
  std::vector<double> seconds(candidates.size(), 0.0);
  if (candidates.size() > 1) {
    transport_.set_recording(false);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      transport_.set_policy(candidates[i]);
      exchange_and_apply<Rc>(epi, key);  // first use of buffers and mappings, untimed
      backend::synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < kTuneRepetitions; ++r) exchange_and_apply<Rc>(epi, key);
      backend::synchronize();
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kTuneRepetitions;
    }
    transport_.set_recording(true);
  }
  const std::size_t best = transport_.agree(seconds);
  transport_.set_policy(candidates[best]);
  if (params_.report) {
    std::string msg = std::string("halo policy (") + PrecisionTraits<R>::name +
                      " operator): " + candidates[best].describe(transport_.partitioned());
    if (candidates.size() > 1) {
      msg += "; tuned over " + std::to_string(candidates.size()) + " candidates, slowest-rank ms per application:";
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), " %.3f", 1e3 * seconds[i]);
        msg += buf;
      }
    }
    params_.report(msg);
  }
}

template <typename R>
std::string WilsonClover<R>::halo_policy() const {
  return transport_.has_policy() ? transport_.policy().describe(transport_.partitioned()) : std::string();
}

template <typename R>
template <typename Epi>
void WilsonClover<R>::dslash(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi) {
  switch (gauge_.reconstruct()) {
    case 12:
      dslash_of<12>(name, flops_per_site, bytes_per_site, epi);
      break;
    case 8:
      if constexpr (std::is_same_v<R, Half> || std::is_same_v<R, Fp32Fp64>) {  // (the sloppy operators: 18 or 12)
        throw std::logic_error(std::string("WilsonClover<") + PrecisionTraits<R>::name + ">: links of 8 reals");
      } else {
        dslash_of<8>(name, flops_per_site, bytes_per_site, epi);
      }
      break;
    default:
      dslash_of<18>(name, flops_per_site, bytes_per_site, epi);
      break;
  }
}

template <typename R>
template <int Rc, typename Epi>
void WilsonClover<R>::dslash_of(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi) {
  const double n = geom_.half_volume();
  const std::string row = std::string(name) + PrecisionTraits<R>::row_suffix;
  const LaunchCost cost{row.c_str(), flops_per_site * n, (link_bytes<R>(Rc) + bytes_per_site) * n};
  // Partitioned, the interior kernel skips the hops that leave the rank and the whole kernel reads them from the halo
  // buffers: keys of their own. A whole policy is the only candidate of its list (comm/halo_policy.hpp), so the first
  // candidate says which kernel every application launches.
  const char* part = !geom_.any_partitioned() ? "" : transport_.candidates().front().whole ? ".whole" : ".interior";
  const std::string key =
      kTunedEpi<Epi> ? tune_key(row + part, PrecisionTraits<R>::name, Rc, geom_.half_volume()) : std::string();
  const std::int64_t sites = geom_.half_volume();
  if (!geom_.any_partitioned()) {
    if constexpr (kInPlaceEpi<Epi>)
      launch_tuned(ctx_.metrics, ctx_.tuner, key, cost, sites, DslashInterior<Epi, Rc>{epi},
                   DslashInterior<Epi, Rc>{trial_of(epi)}, [&] { copy_output<R>(sites, epi); });
    else if constexpr (kTunedEpi<Epi>)
      launch_tuned(ctx_.metrics, ctx_.tuner, key, cost, sites, DslashInterior<Epi, Rc>{epi});
    else
      launch(ctx_.metrics, cost, sites, DslashInterior<Epi, Rc>{epi});
    return;
  }
  if constexpr (kInPlaceEpi<Epi>) {  // the kernel's variant still to tune: on the trial form
    if (!transport_.has_policy())    // (the policy is timed on the kernels of apply_mdagm_head, which come first)
      throw std::logic_error(row + ": in place before the operator's halo policy is chosen");
    if (tunes_now(ctx_.tuner, key)) {
      copy_output<R>(sites, epi);
      exchange_and_apply<Rc>(trial_of(epi), key);
    }
  } else if (!transport_.has_policy()) {
    tune<Rc>(epi, key);
  }
  const backend::Stream compute = backend::compute_stream();
  const int t = ctx_.metrics.start_timing(compute);
  exchange_and_apply<Rc>(epi, key);
  ctx_.metrics.stop_timing(t, compute, cost.name, cost.flops, cost.bytes);
}

template <typename R>
void WilsonClover<R>::compress_clover_term() {
  if constexpr (kCloverDynamic<R>) {
    for (int p = 0; p < 2; ++p) {
      dyn_[p] = CloverField<CloverDynamic>(geom_);
      compress_clover(ctx_, a_[p], dyn_[p]);
    }
  }
}

template <typename R>
clover_view_t<R> WilsonClover<R>::clover_arg(int parity, bool inverse) const {
  if constexpr (kCloverDynamic<R>)
    return dyn_[parity].view(inverse);
  else
    return (inverse ? a_inv_ : a_)[parity].template view<real_t<R>>();
}

template <typename R>
void WilsonClover<R>::apply_m(SpinorField<R>& out, const SpinorField<R>& in) {
  for (int p = 0; p < 2; ++p) {
    DiracArg<R> a = make_arg(p, in.parity(1 - p));
    a.clover = clover_arg(p, false);
    a.x = in.parity(p).view();
    a.out = out.parity(p).view();
    a.b = real_t<R>(-params_.kappa);
    dslash("wilson_clover", kHopFlops + kCloverFlops + kXpayFlops, 3 * kS<R> + kC<R>, EpiCloverPlus<R>{a});
  }
}

template <typename R>
void WilsonClover<R>::apply_clover(ParitySpinor<R>& out, const ParitySpinor<R>& in, int parity, bool inverse) {
  DiracArg<R> a{};
  a.clover = clover_arg(parity, inverse);
  a.x = in.view();
  a.out = out.view();
  const double n = geom_.half_volume();
  const std::string row = std::string("clover") + PrecisionTraits<R>::row_suffix;
  launch(ctx_.metrics, {row.c_str(), kCloverFlops * n, n * (2 * kS<R> + kC<R>)}, geom_.half_volume(), CloverOnly<R>{a});
}

template <typename R>
void WilsonClover<R>::eo_clover(ParitySpinor<R>& out_e, const ParitySpinor<R>& in_o, bool dag) {
  DiracArg<R> a = make_arg(0, in_o);
  a.clover = clover_arg(0, true);
  a.out = out_e.view();
  constexpr SiteCost c = kEoCloverCost<R>;
  if (dag)
    dslash("eo_clover_dag", c.flops, c.bytes, EpiClover<R, true>{a});
  else
    dslash("eo_clover", c.flops, c.bytes, EpiClover<R, false>{a});
}

template <typename R>
void WilsonClover<R>::oe_clover(ParitySpinor<R>& out, ParitySpinor<R>& out2, const ParitySpinor<R>& t_e,
                                const ParitySpinor<R>& x, double* site_norm) {
  DiracArg<R> b = make_arg(1, t_e);
  b.clover = clover_arg(1, true);
  b.x = x.view();
  b.out = out.view();
  b.out2 = out2.view();
  b.site_norm = site_norm;
  b.b = real_t<R>(-params_.kappa * params_.kappa);
  const SiteCost c = site_norm ? kOeCloverCost<R> + kSiteNormCost : kOeCloverCost<R>;
  dslash("oe_clover", c.flops, c.bytes, EpiCloverXpay<R>{b});
}

template <typename R>
void WilsonClover<R>::oe_clover_dag(ParitySpinor<R>& out, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x) {
  constexpr SiteCost c = kOeCloverDagCost<R>;
  dslash("oe_clover_dag", c.flops, c.bytes, EpiXpay<R, true>{oe_clover_dag_arg(out, t_e, x)});
}

template <typename R>
DiracArg<R> WilsonClover<R>::oe_clover_dag_arg(ParitySpinor<R>& out, const ParitySpinor<R>& t_e,
                                               const ParitySpinor<R>& x) const {
  DiracArg<R> b = make_arg(1, t_e);
  b.x = x.view();
  b.out = out.view();
  b.b = real_t<R>(-params_.kappa * params_.kappa);
  return b;
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
void WilsonClover<R>::apply_mdagm(ParitySpinor<R>& out, ParitySpinor<R>& v, const ParitySpinor<R>& in,
                                  backend::PendingSums* v_norm2) {
  apply_mdagm_head(v, in, v_norm2);
  oe_clover_dag(out, tmp_e_, v);
}

template <typename R>
void WilsonClover<R>::apply_mdagm_head(ParitySpinor<R>& v, const ParitySpinor<R>& in, backend::PendingSums* v_norm2) {
  eo_clover(tmp_e_, in, false);
  oe_clover(v, tmp_o_, tmp_e_, in, v_norm2 ? site_norm_.data() : nullptr);  // v = Mhat in, tmp_o_ = A_oo^-1 v
  if (v_norm2) *v_norm2 = sum_site_norms("oe_clover_norm");  // on the device while the host goes on with Mhat^dag
  eo_clover(tmp_e_, tmp_o_, true);
}

template <typename R>
void WilsonClover<R>::apply_mdagm_update(ParitySpinor<R>& r, const ParitySpinor<R>& v, double alpha,
                                         ParitySpinor<R>& scratch, backend::PendingSums* r_norm2) {
  DiracArg<R> b = oe_clover_dag_arg(r, tmp_e_, v);
  b.out2 = scratch.view();
  b.site_norm = site_norm_.data();
  b.alpha = real_t<R>(alpha);
  constexpr SiteCost c = kOeCloverDagUpdateCost<R>;
  dslash("oe_clover_dag_update", c.flops, c.bytes, EpiXpayUpdate<R>{b, tmp_o_.view()});  // (tmp_o_: read by now)
  *r_norm2 = sum_site_norms("oe_clover_dag_update_norm");
}

template <typename R>
backend::PendingSums WilsonClover<R>::sum_site_norms(const char* name) {
  const double n = geom_.half_volume();
  const std::string row = name + std::string(PrecisionTraits<R>::row_suffix);
  return launch_reduce_async<1>(ctx_.metrics, {row.c_str(), kSiteSumCost.flops * n, kSiteSumCost.bytes * n},
                                geom_.half_volume(), SiteSumFunctor{site_norm_.data()});
}

template <typename R>
void WilsonClover<R>::prepare_source(ParitySpinor<R>& bhat, const SpinorField<R>& b) {
  apply_clover(tmp_e2_, b.even, 0, true);
  DiracArg<R> a = make_arg(1, tmp_e2_);
  a.clover = clover_arg(1, true);
  a.x = b.odd.view();
  a.out = bhat.view();
  a.b = real_t<R>(params_.kappa);
  dslash("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 3 * kS<R> + kC<R>, EpiCloverOfXpay<R>{a});
}

template <typename R>
void WilsonClover<R>::reconstruct(SpinorField<R>& x, const SpinorField<R>& b) {
  DiracArg<R> a = make_arg(0, x.odd);
  a.clover = clover_arg(0, true);
  a.x = b.even.view();
  a.out = x.even.view();
  a.b = real_t<R>(params_.kappa);
  dslash("clover_xpay_hop", kHopFlops + kCloverFlops + kXpayFlops, 3 * kS<R> + kC<R>, EpiCloverOfXpay<R>{a});
}

}  // namespace emprism
