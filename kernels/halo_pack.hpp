// halo_pack.hpp: packs the faces of a spinor field of one parity into spin-projected half spinors
// (12 reals per face site instead of 24) for the halo exchange of the hopping term (wilson_clover.hpp):
//   face x_mu = 0     -> send_bwd: P_fwd psi(y)               (the backward neighbour's forward hops)
//   face x_mu = L-1   -> send_fwd: U_mu(y)^dag P_bwd psi(y)   (the forward neighbour's backward hops)
// with P_fwd = (1 - gamma_mu) for H, (1 + gamma_mu) for H^dag, and P_bwd the other one. Boundary phases are
// applied by the receiver. Index i runs over both faces: i < face_volume is face 0, the rest face L-1. Rc: the format
// of the links (kernels/link_format.hpp). HaloPack packs one direction, HaloPackAll every partitioned one at once.
// Who may call: the backends through kernels/launch.hpp.
#pragma once

#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

template <typename R>
struct HaloPackArg {
  LatticeArg lat;
  LinksRef<store_t<R>> gauge;
  SpinorView<R> in;
  int in_parity;
  HalfSpinor<real_t<R>>* send_bwd;
  HalfSpinor<real_t<R>>* send_fwd;
};

// Face site i of direction Mu (i < face_volume: face 0, else face L-1) packed into send_bwd or send_fwd.
template <typename R, bool Dag, int Mu, int Rc>
EMPRISM_HD inline void pack_face_site(const HaloPackArg<R>& a, HalfSpinor<real_t<R>>* send_bwd,
                                      HalfSpinor<real_t<R>>* send_fwd, int i) {
  constexpr int kFwd = Dag ? +1 : -1;
  const int nf = a.lat.face_volume(Mu);
  const int side = i >= nf;
  const int f = i - side * nf;
  int x[4];
  a.lat.face_coords(f, Mu, side ? a.lat.l[Mu] - 1 : 0, a.in_parity, x);
  const int cb = a.lat.cb_index(x);
  if (side == 0)
    send_bwd[f] = project<Mu, kFwd>(a.in.load(cb));
  else
    send_fwd[f] = adj_mul(a.gauge.template view<Rc>().load(a.in_parity, cb, Mu), project<Mu, -kFwd>(a.in.load(cb)));
}

// The two faces of direction Mu: 2 face_volume(Mu) sites.
template <typename R, bool Dag, int Mu, int Rc = 18>
struct HaloPack {
  HaloPackArg<R> a;
  EMPRISM_HD void operator()(int i) const { pack_face_site<R, Dag, Mu, Rc>(a, a.send_bwd, a.send_fwd, i); }
};

// The faces of every partitioned direction in one launch (the "whole" policy): index i below end[0] is direction
// 0's site i, below end[1] direction 1's site i - end[0], and so on (an unpartitioned direction's range is empty:
// its end is the previous one); end[3] sites in all. The same per-site code as HaloPack.
template <typename R, bool Dag, int Rc = 18>
struct HaloPackAll {
  HaloPackArg<R> a;  // (its send_bwd, send_fwd unused)
  HalfSpinor<real_t<R>>* send_bwd[4];
  HalfSpinor<real_t<R>>* send_fwd[4];
  int end[4];
  EMPRISM_HD void operator()(int i) const {
    if (i < end[0])
      pack_face_site<R, Dag, 0, Rc>(a, send_bwd[0], send_fwd[0], i);
    else if (i < end[1])
      pack_face_site<R, Dag, 1, Rc>(a, send_bwd[1], send_fwd[1], i - end[0]);
    else if (i < end[2])
      pack_face_site<R, Dag, 2, Rc>(a, send_bwd[2], send_fwd[2], i - end[1]);
    else
      pack_face_site<R, Dag, 3, Rc>(a, send_bwd[3], send_fwd[3], i - end[2]);
  }
};

}  // namespace emprism
