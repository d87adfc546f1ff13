// wilson_clover.hpp: per-site math of the Wilson-clover operator and the functors of its kernels.
//   H psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
//   H^dag    = the same with gamma_mu -> -gamma_mu (= g5 H g5)
// A hop crossing the global boundary forward in mu takes exp(i theta_mu), backward its conjugate.
// Kernels (one functor each; the launchers in src/dirac.cpp name them and count flops/bytes):
//   HopClover<Dag>   out = C H^(dag) in              eo_clover, eo_clover_dag
//   HopCloverXpay    out = x + b C H in, out2 = C out   oe_clover (Mhat; out2 = A_oo^-1 Mhat p feeds Mhat^dag)
//   HopXpay<Dag>     out = x + b H^(dag) in          oe_clover_dag
//   CloverXpayHop    out = C (x + b H in)            source preparation and reconstruction
//   CloverPlusHop    out = C x + b H in              the full M, one parity at a time
//   CloverOnly       out = C x
// C is the clover block (A or A^-1) of the output parity. Aliasing: out may alias x, never in.
// Who may call: the backends in kernels/backend/ through kernels/launch.hpp.
#pragma once

#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

template <typename R>
struct HoppingArg {
  LatticeArg lat;
  GaugeView<R> gauge;
  SpinorView<R> in;  // the parity opposite to out_parity
  int out_parity = 0;
  Complex<R> phase[4];  // exp(i theta_mu)
};

template <int Mu, bool Dag, typename R>
EMPRISM_HD inline void hop_direction(const HoppingArg<R>& a, const int x[4], int cb, Spinor<R>& acc) {
  constexpr int kFwd = Dag ? +1 : -1;  // (1 - gamma) forward for H, (1 + gamma) for H^dag
  bool crosses = false;
  const int yf = a.lat.neighbour(x, Mu, +1, crosses);
  HalfSpinor<R> hf = a.gauge.load(a.out_parity, cb, Mu) * project<Mu, kFwd>(a.in.load(yf));
  if (crosses) hf = a.phase[Mu] * hf;
  accumulate_reconstructed<Mu, kFwd>(acc, hf);

  const int yb = a.lat.neighbour(x, Mu, -1, crosses);
  HalfSpinor<R> hb = adj_mul(a.gauge.load(1 - a.out_parity, yb, Mu), project<Mu, -kFwd>(a.in.load(yb)));
  if (crosses) hb = conj(a.phase[Mu]) * hb;
  accumulate_reconstructed<Mu, -kFwd>(acc, hb);
}

// H psi (Dag = false) or H^dag psi (Dag = true) at checkerboard site cb of parity a.out_parity.
template <bool Dag, typename R>
EMPRISM_HD inline Spinor<R> apply_hopping(const HoppingArg<R>& a, int cb) {
  int x[4];
  a.lat.coords(cb, a.out_parity, x);
  Spinor<R> acc = zero_spinor<R>();
  hop_direction<0, Dag>(a, x, cb, acc);
  hop_direction<1, Dag>(a, x, cb, acc);
  hop_direction<2, Dag>(a, x, cb, acc);
  hop_direction<3, Dag>(a, x, cb, acc);
  return acc;
}

template <typename R>
struct DiracArg {
  HoppingArg<R> hop;
  CloverView<R> clover;  // C of the output parity
  SpinorView<R> x;       // xpay input, output parity
  SpinorView<R> out;
  SpinorView<R> out2;
  R b = 0;
};

template <typename R, bool Dag>
struct HopClover {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const {
    a.out.store(cb, clover_mul(a.clover.load(cb), apply_hopping<Dag>(a.hop, cb)));
  }
};

template <typename R>
struct HopCloverXpay {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const {
    const CloverSite<R> clover = a.clover.load(cb);
    const Spinor<R> v = a.x.load(cb) + a.b * clover_mul(clover, apply_hopping<false>(a.hop, cb));
    a.out.store(cb, v);
    a.out2.store(cb, clover_mul(clover, v));
  }
};

template <typename R, bool Dag>
struct HopXpay {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const { a.out.store(cb, a.x.load(cb) + a.b * apply_hopping<Dag>(a.hop, cb)); }
};

template <typename R>
struct CloverXpayHop {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const {
    a.out.store(cb, clover_mul(a.clover.load(cb), a.x.load(cb) + a.b * apply_hopping<false>(a.hop, cb)));
  }
};

template <typename R>
struct CloverPlusHop {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const {
    a.out.store(cb, clover_mul(a.clover.load(cb), a.x.load(cb)) + a.b * apply_hopping<false>(a.hop, cb));
  }
};

template <typename R>
struct CloverOnly {
  DiracArg<R> a;
  EMPRISM_HD void operator()(int cb) const { a.out.store(cb, clover_mul(a.clover.load(cb), a.x.load(cb))); }
};

}  // namespace emprism
