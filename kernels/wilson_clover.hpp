// wilson_clover.hpp: per-site math of the Wilson-clover operator and the functors of its kernels.
//   H psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
//   H^dag    = the same with gamma_mu -> -gamma_mu (= g5 H g5)
// A hop crossing the global boundary forward in mu takes exp(i theta_mu), backward its conjugate.
// Hops that leave the rank (partitioned directions) read spin-projected half spinors from halo buffers,
// indexed by face index: from the forward neighbour P psi(x+mu) (the link is applied here), from the backward
// neighbour U_mu(x-mu)^dag P psi(x-mu) (the sender applied its link; kernels/halo_pack.hpp). The hops themselves:
// kernels/hopping.hpp.
// A kernel is an epilogue (what to do with acc = H in at a site) run by drivers:
//   DslashInterior     all sites, hops that stay on the rank; boundary sites store the partial acc in out, or where
//                      the epilogue updates out in place in a field of its own (partial_of; the fp32 and fp64
//                      oe_clover load each hop's link and neighbour one hop ahead: kHopsAhead; the fp32/fp64
//                      operator's kernels with links of 12 stage the next hop in shared memory: kStagedHops; the
//                      same bits)
//   DslashExterior     boundary sites only, after the halos arrived: h = the halo hops (mu = 0..3), then the
//                      epilogue of acc = partial + h
//   DslashExteriorDir  the boundary sites of one direction mu, as its halo arrives: h (kept per boundary site in
//                      a scratch field between launches; zero at the site's first boundary direction) += the
//                      halo hops of mu; the site's last boundary direction runs the epilogue of partial + h.
//                      Launched for mu = 0..3 in order, it adds in the order of DslashExterior (h is stored in R
//                      exactly), so both give the same bits.
//   DslashWhole        all sites after every halo arrived (no overlap): every hop in the order of the kernel
//                      without halos (one pass), or the interior's hops then the halo hops into the same sum (two
//                      passes: AMD GPUs, Fp32Fp64), then the epilogue. Its bits may differ from the interior/exterior
//                      pair's (the hops summed in another order), never between runs of one build.
// Without partitioned directions the interior driver is the whole kernel. The drivers are templated on the links
// format Rc (18, 12, 8: kernels/link_format.hpp; the view unpacks each link as it is loaded), the epilogues are not.
// Epilogues (C = clover block of the output parity, A or A^-1):
//   EpiClover<Dag>   out = C acc                      eo_clover, eo_clover_dag
//   EpiCloverXpay    v = x + b C acc; out = v; out2 = C v    oe_clover (out2 = A_oo^-1 Mhat p feeds Mhat^dag);
//                    with site_norm set also site_norm[cb] = |v(cb)|^2 in double (CG's p^dag Mhat^dag Mhat p)
//   EpiXpay<Dag>     out = x + b acc                  oe_clover_dag
//   EpiXpayUpdate    out -= alpha (x + b acc), in place; site_norm[cb] = |out(cb)|^2   oe_clover_dag_update (the CG's
//                    residual update; boundary sites' partial sums in its field partial)
//   EpiCloverOfXpay  out = C (x + b acc)              source preparation and reconstruction
//   EpiCloverPlus    out = C x + b acc                the full M, one parity at a time
// Aliasing: out must not alias in or x. Who may call: the backends through kernels/launch.hpp.
#pragma once

#include <type_traits>
#include <utility>

#include "kernels/blas.hpp"
#include "kernels/hopping.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/launch_groups.hpp"
#include "kernels/views.hpp"

namespace emprism {

// The clover term as the kernels of precision R read it: the fp32 operator's A compressed, A^-1 solved for in the
// kernel (kernels/clover_dynamic.hpp; where EMPRISM_CLOVER_DYNAMIC: not on AMD GPUs yet, kernels/backend/defs.hpp); the
// others' stored A or A^-1 in clover_store_t<R> (Half: A^-1 in 16 bits, kernels/clover_half.hpp).
template <typename R>
constexpr bool kCloverDynamic = std::is_same_v<R, float>&& EMPRISM_CLOVER_DYNAMIC;
template <typename R>
using clover_view_t =
    std::conditional_t<kCloverDynamic<R>, CloverView<CloverDynamic, float>, CloverView<clover_store_t<R>, real_t<R>>>;

template <typename R>
struct DiracArg {
  using precision = R;
  HoppingArg<R> hop;
  clover_view_t<R> clover;  // C of the output parity, A or A^-1
  SpinorView<R> x;          // xpay input, output parity
  SpinorView<R> out;
  SpinorView<R> out2;
  double* site_norm = nullptr;  // EpiCloverXpay: |v|^2 per site when set; EpiXpayUpdate: |r|^2 per site
  real_t<R> b = 0;
  real_t<R> alpha = 0;  // EpiXpayUpdate: the CG's step
};

// The hop sum an epilogue receives: a Spinor at an interior site; at a boundary site the halo hops h plus the
// interior's partial sum stored in out, whose half b is loaded when the epilogue asks for it (partial + h: the bits
// of the whole-spinor sum). An epilogue reads half b of acc before it stores half b of out.
template <typename R, typename View>
struct PartialPlus {
  const Spinor<R>& h;
  View partial;
  int cb;
};
template <typename R>
EMPRISM_HD inline HalfSpinor<R> acc_half(const Spinor<R>& acc, int b) {
  return chiral_half(acc, b);
}
template <typename R, typename View>
EMPRISM_HD inline HalfSpinor<R> acc_half(const PartialPlus<R, View>& acc, int b) {
  return acc.partial.load_half(acc.cb, b) + chiral_half(acc.h, b);
}

// The epilogues work one chiral half b at a time (C is block diagonal: block b acts on spins 2b, 2b+1 only), so
// at most one 6x6 block, one half of the xpay input and one half of the result are in registers with acc; each
// half's stores precede the next half's loads (the compiler cannot hoist those loads: the fields might alias).
// EpiCloverXpay loads its clover block again for the second product rather than keeping it in registers (the
// block was just read, so the second read comes from the caches; gfx90a: 170 -> 154 VGPRs in fp64): its first read
// is load_block_kept, the second the streaming load_block. With the fp32 operator's compressed clover term it keeps
// the factors of the block instead (read once, streaming; factored once for both solves). The hot epilogues read their
// xpay input with load_half_once and store their results with store_half_final (streaming: kernels/backend/defs.hpp).
// Measured on an H200 (BENCHMARKS.md, 2026-12-02), not kept: both halves' inputs loaded before the first store (fp32
// with links of 8 eo_clover 87 -> 81%, eo_clover_f32d 86 -> 78%, fp64 oe_clover 98 -> 94%); the halves in a loop not
// unrolled (oe_clover_half 86.5 -> 83.4%); the second half's inputs asked for in L2 or L1 at the epilogue's start (2-3
// points lost); a block's epilogue inputs copied into shared memory when it starts (sm_90 bulk copies on an mbarrier,
// 13-29 KB per block: oe_clover_half 86.5 -> 80%, eo_clover_half 92.5 -> 85.5%, fp32 eo_clover with links of 8
// 87 -> 82.5%; the shared memory alone, never used, cost much of that: it comes out of L1). In oe_clover_half the
// epilogue takes 48% of ncu's stall samples, in seven rounds of loads.
template <typename R, bool Dag>
struct EpiClover {
  static constexpr bool kDag = Dag;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) a.out.store_half_final(cb, b, block_mul(a.clover.load_block(cb, b), acc_half(acc, b)));
  }
};

template <typename R>
struct EpiCloverXpay {
  static constexpr bool kDag = false;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    double n = 0;  // |v|^2, summed half by half in the order of site_norm2 (the same bits)
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) {
      HalfSpinor<real_t<R>> v;
      if constexpr (kCloverDynamic<R>) {  // A^-1 factored once for both products (kernels/clover_dynamic.hpp)
        const CloverBlockReady c = ready_block(a.clover.load_block(cb, b));
        v = a.x.load_half_once(cb, b) + a.b * block_mul(c, acc_half(acc, b));
        a.out.store_half_final(cb, b, v);
        a.out2.store_half_final(cb, b, block_mul(c, v));
      } else {
        v = a.x.load_half_once(cb, b) + a.b * block_mul(a.clover.load_block_kept(cb, b), acc_half(acc, b));
        a.out.store_half_final(cb, b, v);
        a.out2.store_half_final(cb, b, block_mul(a.clover.load_block(cb, b), v));
      }
      n = add_norm2(n, v);
    }
    if (a.site_norm) a.site_norm[cb] = n;
  }
};

// Half b of x + b acc at site cb: what EpiXpay stores and EpiXpayUpdate applies (one expression, so both round alike).
template <typename R, typename Acc>
EMPRISM_HD inline HalfSpinor<real_t<R>> xpay_half(const DiracArg<R>& a, int cb, int b, const Acc& acc) {
  return a.x.load_half_once(cb, b) + a.b * acc_half(acc, b);
}

template <typename R, bool Dag>
struct EpiXpay {
  static constexpr bool kDag = Dag;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) a.out.store_half_final(cb, b, xpay_half(a, cb, b, acc));
  }
};

// oe_clover_dag with the CG's residual update (physics/cg.hpp): w = x + b acc (the xpay of EpiXpay<R, true>,
// w = Mhat^dag Mhat p), then out = out - alpha w in place (out is the residual r; each thread reads and writes its own
// site) and site_norm[cb] = |r|^2 of the new r, summed half by half in the order of site_norm2. w is never stored:
// the update reads r and writes it instead of writing w and reading both (two spinor transfers fewer per iteration),
// and the sloppy operators apply it to w unrounded (half: not quantised to 16 bits; fp32/fp64: in fp64). With
// partitioned directions the interior kernel leaves a boundary site's partial sum in partial, not in out (which holds
// r until the exterior kernel updates it); partial aliases none of out, x, the input.
template <typename R>
struct EpiXpayUpdate {
  static constexpr bool kDag = true;
  DiracArg<R> a;
  SpinorView<R> partial;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    double n = 0;
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) {
      const HalfSpinor<real_t<R>> r = a.out.load_half_once(cb, b) - a.alpha * xpay_half(a, cb, b, acc);
      a.out.store_half_final(cb, b, r);
      n = add_norm2(n, r);
    }
    a.site_norm[cb] = n;
  }
};

// Where the interior kernel leaves a boundary site's partial sum for the exterior kernels: the epilogue's output, but
// for an epilogue that updates its output in place.
template <typename Epi>
EMPRISM_HD inline auto partial_of(const Epi& e) {
  return e.a.out;
}
template <typename R>
EMPRISM_HD inline SpinorView<R> partial_of(const EpiXpayUpdate<R>& e) {
  return e.partial;
}

template <typename R>
struct EpiCloverOfXpay {
  static constexpr bool kDag = false;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b)
      a.out.store_half(cb, b, block_mul(a.clover.load_block(cb, b), a.x.load_half(cb, b) + a.b * acc_half(acc, b)));
  }
};

template <typename R>
struct EpiCloverPlus {
  static constexpr bool kDag = false;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b)
      a.out.store_half(cb, b, block_mul(a.clover.load_block(cb, b), a.x.load_half(cb, b)) + a.b * acc_half(acc, b));
  }
};

// The fp32 and half operators' tuned kernels are also compiled with the tuner's launch-bounds variant of their group
// (a register cap, kernels/launch_groups.hpp: kBoundFp32, CMake's EMPRISM_TUNE_BOUNDED; kBoundHalf,
// EMPRISM_TUNE_BOUNDED_HALF); fp64 and fp32/fp64 ones are not (sm_90: they spill under a cap that would pay). Half
// (H200, 2026-11-28, BENCHMARKS.md): 64 registers instead of 72, the tuner chose it for all four kernels with links of
// 12, +1 to +2 points of the peak; fp32 (H200, 2026-11-29): 72 registers instead of 80, chosen for eo_clover with
// links of 8, 12 and 18 and eo_clover_dag with 8, +1 to +2 points with 8. fp64 kernels have their 128-register form in
// the candidates anyway (blocks of 512).
template <typename Epi>
constexpr int kLaunchBoundHop = std::is_same_v<typename decltype(Epi::a)::precision, float>  ? kBoundFp32
                                : std::is_same_v<typename decltype(Epi::a)::precision, Half> ? kBoundHalf
                                                                                             : kBoundNone;

// Whether the hopping kernels compute their site's coordinates by FastDiv (kernels/lattice_arg.hpp): all but fp64's.
// H200, 2026-12-02 (BENCHMARKS.md), against the integer divisions: the half kernels and fp32's with links of 8 gained
// 1-4 points of the peak with FastDiv, but fp64's eo_clover, eo_clover_dag and fused update lost 0.9-1.4 points with
// links of 18 and 3.0-3.5 with 12 (the double solve with links of 12 3% slower); with the divisions kept in fp64's
// kernels 0.2-0.6 and 1.2-1.8.
template <typename Epi>
constexpr bool kFastCoords = !std::is_same_v<typename decltype(Epi::a)::precision, double>;

// Which interior kernels ask for their site's four forward links in L2 before the hops (prefetch_l2). In the
// untiled layout (AMD GPUs, where nothing is measured): the EpiXpay ones (the *_dag kernels of oe_clover, no clover
// term: the fewest bytes per site to cover the arithmetic's latency) with links of 8 in every precision and with links
// of 12 in the fp32/fp64 operator, as measured in that layout on NVIDIA GPUs (BENCHMARKS.md, 2026-11-28: on an H100
// +1.1 to +2.4 points of the peak for oe_clover_dag_f32d; on an H200 with links of 8 +0.5 to +1 point in fp64, +0.1
// to +0.5 in fp32; with links of 18 or in the kernels with a clover term up to 2 points lost). In the fields' tiled
// layout (kernels/views.hpp; H200, 2026-11-29, BENCHMARKS.md) only fp64's fused update and oe_clover with links of 8
// (oe_clover_dag_update 88.3 -> 91.7%, 158 registers; oe_clover 89.8-89.9 -> 92.2-92.7%, 214 registers as without
// it): without the prefetch there oe_clover_dag_update_f32d with links of 12 went from 77 to 84% (nvcc: 128 registers
// instead of 155) and fp32's oe_clover_dag_update with links of 8 from 88.5-89.2 to 91.0-91.5% (the tuner then chose
// the 128/7 launch bound), fp64's plain EpiXpay kernel with links of 8 measured the same either way (ptxas spilt 32
// bytes with it), and fp32's oe_clover with links of 8 lost 0.2-0.7 points with it. Asked for the same way (H200,
// 2026-11-29, not kept): the compressed clover site in fp32 eo_clover and eo_clover_dag with links of 8 (within the
// noise), and the t+ neighbour spinor, each input spinor's first read, from memory, in every interior kernel (up to 1.5
// points lost, fp64 up to 3).
template <typename Epi>
struct IsXpayEpilogue : std::false_type {};
template <typename P, bool Dag>
struct IsXpayEpilogue<EpiXpay<P, Dag>> : std::true_type {};
template <typename P>
struct IsXpayEpilogue<EpiXpayUpdate<P>> : std::true_type {};
template <typename Epi, int Rc>
constexpr bool kPrefetchLinks =
    kTiledLayout ? Rc == 8 && (std::is_same_v<Epi, EpiXpayUpdate<double>> || std::is_same_v<Epi, EpiCloverXpay<double>>)
                 : IsXpayEpilogue<Epi>::value &&
                       (Rc == 8 || (Rc == 12 && std::is_same_v<typename decltype(Epi::a)::precision, Fp32Fp64>));

// The fp32 and fp64 operators' oe_clover interior kernels (EpiCloverXpay<float / double>) take their hops one hop ahead
// (apply_interior_hops_ahead) on NVIDIA GPUs and the CPU (where the tests run that path). Measured on an H200
// (BENCHMARKS.md, 2026-11-28), unit-gauge solves, % of the peak of oe_clover: mixed (fp32 and a few fp64 calls) links
// 18 / 12 / 8 +1.2 / +1.3 / +1.7 points, fp64 +4.6 / +1.0 / +2.2 to +3.1, the same bits (fp32 stays at 128 registers;
// fp64 138 / 172 / 166 -> 238 / 226 / 214). The other three kernels lost 1-5 points with links of 8, as they did with
// only the next link loaded ahead, so they do not. The half and fp32/fp64 operators keep apply_hopping: loaded ahead
// (ptxas: half 72-80 -> 128 registers, fp32/fp64 128 -> 168-208) oe_clover_half lost 2-4 points with links of 18 and
// 12, oe_clover_f32d 12.6 points with links of 18 (and gained 1.5 with 12). So do AMD GPUs (not measured; their
// registers are the scarcer resource). The next hop copied into shared memory with cp.async instead (H200,
// 2026-11-29, fp32 links of 8 and 12): 96-104 registers, 2-5 points lost but in oe_clover (+0.8), so not kept.
// oe_clover_half loaded ahead with the neighbour kept as stored (int16 and norms) until its hop, under a 96-register
// bound (H200, 2026-12-02): +1.1 points with links of 12, but that bound replaces the half group's 64-register one,
// which the other three half kernels need (1-3 points lost), and the solve was no faster; not kept.
template <typename Epi>
struct IsCloverXpayEpilogue : std::false_type {};
template <typename P>
struct IsCloverXpayEpilogue<EpiCloverXpay<P>>
    : std::bool_constant<std::is_same_v<P, float> || std::is_same_v<P, double>> {};
template <typename Epi>
constexpr bool kHopsAhead = IsCloverXpayEpilogue<Epi>::value && !EMPRISM_AMDGPU;

// Which interior kernels stage their hops (apply_staged_hops, kernels/hopping.hpp): the fp32/fp64 operator's with links
// of 12, on NVIDIA GPUs and the CPU. They are the launch-bounds group kBoundF32d (CMake's EMPRISM_TUNE_BOUNDED_F32D,
// 128/4 with nvcc: 128 registers): staged, oe_clover_f32d takes 130 unbounded (12 warps per SM instead of 16) and lost
// 4.5 points of the peak; under the cap the tuner chose it and it gained 2.8-3.3 (H200, 2026-12-03, BENCHMARKS.md).
template <typename Epi, int Rc>
constexpr bool kStagedHops =
    !EMPRISM_AMDGPU && Rc == 12 && std::is_same_v<typename decltype(Epi::a)::precision, Fp32Fp64>;
template <typename Epi, int Rc>
constexpr int kLaunchBoundInterior = kStagedHops<Epi, Rc> ? kBoundF32d : kLaunchBoundHop<Epi>;

// Block: the launch's threads per block (kernels/backend/gpu.hpp: for_site; 1 on the CPU). The staged hops are
// compiled for blocks that fit their buffer only, so the larger blocks' kernels neither hold its shared memory nor
// pay its registers (oe_clover_f32d: 130 staged, its unstaged form's 128 kept for blocks of 256 and 512).
template <typename Epi, int Rc = 18>
struct DslashInterior {
  static constexpr int kLaunchBound = kLaunchBoundInterior<Epi, Rc>;
  static constexpr bool kTakesBlock = kStagedHops<Epi, Rc>;
  Epi e;
  template <int Block = 1>
  EMPRISM_HD void operator()(int cb) const {
    const auto& hop = e.a.hop;
    int x[4];
    hop.lat.template coords<kFastCoords<Epi>>(cb, hop.out_parity, x);
    if constexpr (kPrefetchLinks<Epi, Rc>)
      for (int mu = 0; mu < 4; ++mu) hop.gauge.template view<Rc>().sub(hop.out_parity, mu).prefetch(cb);
    auto acc = zero_spinor<decltype(hop.phase[0].re)>();
    if constexpr (kHopsAhead<Epi>)
      apply_interior_hops_ahead<Epi::kDag, Rc>(hop, x, cb, acc);
    else if constexpr (kStagedHops<Epi, Rc> && Block <= kStageBlock)
      apply_staged_hops<Epi::kDag, Rc>(hop, x, cb, acc);
    else
      apply_hopping<Epi::kDag, HopPart::Interior, Rc>(hop, x, cb, acc);
    if (hop.lat.on_boundary(x))
      partial_of(e).store(cb, acc);  // DslashExterior finishes this site
    else
      e.finish(cb, acc);
  }
};

// Every site once the halos are in place (the "whole" halo policy, comm/halo_policy.hpp), in one of two forms:
//   one pass   each hop from the field or the halo buffer, in the order of the kernel without halos: on the CPU and
//              NVIDIA GPUs (sm_90: the kernel without halos' time and registers);
//   two passes the interior's hops, then the halo hops into the same sum: on AMD GPUs (gfx90a: 78-84 VGPRs in fp32
//              where one pass took 130-160) and for the fp32/fp64 operator (sm_90: one pass spilt 16 bytes).
template <typename P>
constexpr bool kWholeOnePass = !EMPRISM_AMDGPU && !std::is_same_v<P, Fp32Fp64>;

template <typename Epi, int Rc = 18>
struct DslashWhole {
  static constexpr int kLaunchBound = kLaunchBoundHop<Epi>;
  Epi e;
  EMPRISM_HD void operator()(int cb) const {
    const auto& hop = e.a.hop;
    int x[4];
    hop.lat.template coords<kFastCoords<Epi>>(cb, hop.out_parity, x);
    auto acc = zero_spinor<decltype(hop.phase[0].re)>();
    if constexpr (kWholeOnePass<typename decltype(e.a)::precision>) {
      apply_hopping<Epi::kDag, HopPart::Whole, Rc>(hop, x, cb, acc);
    } else {
      apply_hopping<Epi::kDag, HopPart::Interior, Rc>(hop, x, cb, acc);
      apply_hopping<Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
    }
    e.finish(cb, acc);
  }
};

template <typename Epi, int Rc = 18>
struct DslashExterior {
  using R = decltype(std::declval<Epi>().a.hop.phase[0].re);
  Epi e;
  const int* sites;  // checkerboard indices of the boundary sites of the output parity
  EMPRISM_HD void operator()(int i) const {
    const auto& hop = e.a.hop;
    const int cb = sites[i];
    int x[4];
    hop.lat.template coords<kFastCoords<Epi>>(cb, hop.out_parity, x);
    auto acc = zero_spinor<R>();
    apply_hopping<Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
    e.finish(cb, PartialPlus<R, decltype(e.a.out)>{acc, partial_of(e), cb});  // the interior's partial joins last
  }
};

template <typename Epi, int Rc = 18>
struct DslashExteriorDir {
  using R = decltype(std::declval<Epi>().a.hop.phase[0].re);
  Epi e;
  const int* sites;    // pairs (checkerboard index, boundary index) of the sites on the boundary of mu
  SpinorView<R> halo;  // h of each boundary site, by boundary index
  int mu;
  EMPRISM_HD void operator()(int i) const {
    const auto& hop = e.a.hop;
    const int cb = sites[2 * i], k = sites[2 * i + 1];
    int x[4];
    hop.lat.template coords<kFastCoords<Epi>>(cb, hop.out_parity, x);
    const int mask = hop.lat.boundary_mask(x);
    auto acc = (mask & ((1 << mu) - 1)) == 0 ? zero_spinor<R>() : halo.load(k);
    switch (mu) {
      case 0:
        hop_direction<0, Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
        break;
      case 1:
        hop_direction<1, Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
        break;
      case 2:
        hop_direction<2, Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
        break;
      default:
        hop_direction<3, Epi::kDag, HopPart::Exterior, Rc>(hop, x, cb, acc);
        break;
    }
    if ((mask >> (mu + 1)) == 0)
      e.finish(cb, PartialPlus<R, decltype(e.a.out)>{acc, partial_of(e), cb});
    else
      halo.store(k, acc);
  }
};

template <typename R>
struct CloverOnly {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) a.out.store_half(cb, b, block_mul(a.clover.load_block(cb, b), a.x.load_half(cb, b)));
  }
};

}  // namespace emprism
