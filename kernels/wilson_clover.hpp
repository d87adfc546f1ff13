// wilson_clover.hpp: per-site math of the Wilson-clover operator and the functors of its kernels.
//   H psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
//   H^dag    = the same with gamma_mu -> -gamma_mu (= g5 H g5)
// A hop crossing the global boundary forward in mu takes exp(i theta_mu), backward its conjugate.
// Hops that leave the rank (partitioned directions) read spin-projected half spinors from halo buffers,
// indexed by face index: from the forward neighbour P psi(x+mu) (the link is applied here), from the backward
// neighbour U_mu(x-mu)^dag P psi(x-mu) (the sender applied its link; kernels/halo_pack.hpp).
// A kernel is an epilogue (what to do with acc = H in at a site) run by drivers. Every driver computes each of its
// output sites whole through one inlined function, dslash_site: acc = 0, then for mu = 0..3 the forward hop and
// then the backward hop, each from the field when it stays on the rank and from the halo buffer when it leaves it,
// then the epilogue of acc. No partial sum goes through memory, so every driver, and every halo policy
// (comm/halo_policy.hpp), gives an output site the same bits: the same operations in the same order.
//   DslashLocal  all sites, no partitioned direction: the halo reads compiled out (the operator without halos)
//   DslashHalo   with partitioned directions, one kernel launched in three modes (src/physics/dirac.hpp says when):
//     interior   all sites while the faces travel; a site with a hop leaving the rank (a boundary site) returns at
//                once (an exterior launch computes it)
//     exterior   the sites of a list, after the faces they read arrived: all boundary sites (exterior fused), or
//                those whose highest boundary direction is k, after the faces of 0..k (exterior split)
//     whole      all sites after every face arrived (no overlap, no second pass)
// With partitioned directions the result may differ from the operator without halos in the last place (the sender
// applies U^dag to the backward faces); between the drivers of one partitioned operator it does not.
// The drivers are templated on the links format Rc (18, 12, 8: kernels/link_format.hpp; the view unpacks each link as
// it is loaded), the epilogues are not.
// Epilogues (C = clover block of the output parity, A or A^-1):
//   EpiClover<Dag>   out = C acc                      eo_clover, eo_clover_dag
//   EpiCloverXpay    v = x + b C acc; out = v; out2 = C v    oe_clover (out2 = A_oo^-1 Mhat p feeds Mhat^dag);
//                    with site_norm set also site_norm[cb] = |v(cb)|^2 in double (CG's p^dag Mhat^dag Mhat p)
//   EpiXpay<Dag>     out = x + b acc                  oe_clover_dag
//   EpiCloverOfXpay  out = C (x + b acc)              source preparation and reconstruction
//   EpiCloverPlus    out = C x + b acc                the full M, one parity at a time
// Aliasing: out must not alias in or x. Who may call: the backends through kernels/launch.hpp.
#pragma once

#include "kernels/blas.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

template <typename R>
struct HoppingArg {
  LatticeArg lat;
  LinksRef<store_t<R>, real_t<R>> gauge;  // the links in the format the kernel is instantiated for
  SpinorView<R> in;                       // the parity opposite to out_parity
  int out_parity = 0;
  Complex<real_t<R>> phase[4];  // exp(i theta_mu)
  const HalfSpinor<real_t<R>>* halo_fwd[4];
  const HalfSpinor<real_t<R>>* halo_bwd[4];
};

// The hops of direction Mu at site x (checkerboard cb) added to acc: the forward hop, then the backward one, each
// read from the field when it stays on the rank and from the halo buffer when it leaves it. Partitioned = false (the
// operator without halos) compiles the halo reads out; the hops from the field keep their run-time guard there too,
// so that kernel's code is the one it had before the halo drivers shared this function.
template <int Mu, bool Dag, bool Partitioned, int Rc, typename R>
EMPRISM_HD inline void hop_direction(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  constexpr int kFwd = Dag ? +1 : -1;  // (1 - gamma) forward for H, (1 + gamma) for H^dag
  const bool fwd_off = a.lat.partitioned[Mu] && x[Mu] == a.lat.l[Mu] - 1;
  const bool bwd_off = a.lat.partitioned[Mu] && x[Mu] == 0;
  bool crosses = false;
  if (!fwd_off) {
    const int y = a.lat.neighbour(x, Mu, +1, crosses);
    HalfSpinor<real_t<R>> h = a.gauge.template view<Rc>().load(a.out_parity, cb, Mu) * project<Mu, kFwd>(a.in.load(y));
    if (crosses) h = a.phase[Mu] * h;
    accumulate_reconstructed<Mu, kFwd>(acc, h);
  } else if (Partitioned) {
    HalfSpinor<real_t<R>> h =
        a.gauge.template view<Rc>().load(a.out_parity, cb, Mu) * a.halo_fwd[Mu][a.lat.face_index(x, Mu)];
    if (a.lat.origin[Mu] + x[Mu] == a.lat.g[Mu] - 1) h = a.phase[Mu] * h;
    accumulate_reconstructed<Mu, kFwd>(acc, h);
  }
  if (!bwd_off) {
    const int y = a.lat.neighbour(x, Mu, -1, crosses);
    HalfSpinor<real_t<R>> h =
        adj_mul(a.gauge.template view<Rc>().load(1 - a.out_parity, y, Mu), project<Mu, -kFwd>(a.in.load(y)));
    if (crosses) h = conj(a.phase[Mu]) * h;
    accumulate_reconstructed<Mu, -kFwd>(acc, h);
  } else if (Partitioned) {
    HalfSpinor<real_t<R>> h = a.halo_bwd[Mu][a.lat.face_index(x, Mu)];
    if (a.lat.origin[Mu] + x[Mu] == 0) h = conj(a.phase[Mu]) * h;
    accumulate_reconstructed<Mu, -kFwd>(acc, h);
  }
}

// acc += every hop of H (Dag = false) or H^dag (Dag = true) at site x (checkerboard cb), links of format Rc, in the
// one order mu = 0..3, forward before backward.
template <bool Dag, bool Partitioned, int Rc, typename R>
EMPRISM_HD inline void apply_hopping(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  hop_direction<0, Dag, Partitioned, Rc>(a, x, cb, acc);
  hop_direction<1, Dag, Partitioned, Rc>(a, x, cb, acc);
  hop_direction<2, Dag, Partitioned, Rc>(a, x, cb, acc);
  hop_direction<3, Dag, Partitioned, Rc>(a, x, cb, acc);
}

template <typename R>
struct DiracArg {
  HoppingArg<R> hop;
  CloverView<clover_store_t<R>, real_t<R>> clover;  // C of the output parity (Half: A^-1 in 16 bits, clover_half.hpp)
  SpinorView<R> x;                                  // xpay input, output parity
  SpinorView<R> out;
  SpinorView<R> out2;
  double* site_norm = nullptr;  // EpiCloverXpay: |v|^2 per site when set
  real_t<R> b = 0;
};

template <typename R>
EMPRISM_HD inline HalfSpinor<R> acc_half(const Spinor<R>& acc, int b) {
  return chiral_half(acc, b);
}

// The epilogues work one chiral half b at a time (C is block diagonal: block b acts on spins 2b, 2b+1 only), so
// at most one 6x6 block, one half of the xpay input and one half of the result are in registers with acc; each
// half's stores precede the next half's loads (the compiler cannot hoist those loads: the fields might alias).
// EpiCloverXpay loads its clover block again for the second product rather than keeping it in registers (the
// block was just read, so the second read comes from the caches; gfx90a: 170 -> 154 VGPRs in fp64): its first read
// is load_block_kept, the second the streaming load_block. The hot epilogues read their xpay input with
// load_half_once and store their results with store_half_final (streaming: kernels/backend/defs.hpp).
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
      const HalfSpinor<real_t<R>> v =
          a.x.load_half_once(cb, b) + a.b * block_mul(a.clover.load_block_kept(cb, b), acc_half(acc, b));
      a.out.store_half_final(cb, b, v);
      a.out2.store_half_final(cb, b, block_mul(a.clover.load_block(cb, b), v));
      n = add_norm2(n, v);
    }
    if (a.site_norm) a.site_norm[cb] = n;
  }
};

template <typename R, bool Dag>
struct EpiXpay {
  static constexpr bool kDag = Dag;
  DiracArg<R> a;
  template <typename Acc>
  EMPRISM_HD void finish(int cb, const Acc& acc) const {
    EMPRISM_UNROLL
    for (int b = 0; b < 2; ++b) a.out.store_half_final(cb, b, a.x.load_half_once(cb, b) + a.b * acc_half(acc, b));
  }
};

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

// The one per-site function of every driver: the whole hop sum of output site cb, then the epilogue.
template <typename Epi, int Rc, bool Partitioned>
EMPRISM_HD inline void dslash_site(const Epi& e, int cb, const int x[4]) {
  using R = decltype(e.a.hop.phase[0].re);
  auto acc = zero_spinor<R>();
  apply_hopping<Epi::kDag, Partitioned, Rc>(e.a.hop, x, cb, acc);
  e.finish(cb, acc);
}

// The kernel without halos keeps the code it had when it was also the interior driver: the store of the hop sum at a
// boundary site cannot happen (no direction is partitioned) but stays, because without it nvcc allocates registers
// differently (sm_90, links of 8 reals: spills). Bits: those of dslash_site<..., false>.
template <typename Epi, int Rc = 18>
struct DslashLocal {
  Epi e;
  EMPRISM_HD void operator()(int cb) const {
    int x[4];
    e.a.hop.lat.coords(cb, e.a.hop.out_parity, x);
    auto acc = zero_spinor<decltype(e.a.hop.phase[0].re)>();
    apply_hopping<Epi::kDag, false, Rc>(e.a.hop, x, cb, acc);
    if (e.a.hop.lat.on_boundary(x))
      e.a.out.store(cb, acc);
    else
      e.finish(cb, acc);
  }
};

// Every driver of an operator with partitioned directions, one kernel (its modes differ only in which sites it
// computes, by values the same for every thread of a launch):
//   interior  sites = null, skip_boundary: all sites, a site with a hop leaving the rank returns at once
//   exterior  sites = a list of boundary sites, i the index into it
//   whole     sites = null, all sites
template <typename Epi, int Rc = 18>
struct DslashHalo {
  Epi e;
  const int* sites = nullptr;  // checkerboard indices of output sites, or null: site i
  bool skip_boundary = false;
  EMPRISM_HD void operator()(int i) const {
    const int cb = sites ? sites[i] : i;
    int x[4];
    e.a.hop.lat.coords(cb, e.a.hop.out_parity, x);
    if (skip_boundary && e.a.hop.lat.on_boundary(x)) return;  // an exterior launch computes it
    dslash_site<Epi, Rc, true>(e, cb, x);
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
