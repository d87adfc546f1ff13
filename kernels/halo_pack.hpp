// halo_pack.hpp: packs the faces of a spinor field of one parity into spin-projected half spinors
// (12 reals per face site instead of 24) for the halo exchange of the hopping term (wilson_clover.hpp):
//   face x_mu = 0     -> send_bwd: P_fwd psi(y)               (the backward neighbour's forward hops)
//   face x_mu = L-1   -> send_fwd: U_mu(y)^dag P_bwd psi(y)   (the forward neighbour's backward hops)
// with P_fwd = (1 - gamma_mu) for H, (1 + gamma_mu) for H^dag, and P_bwd the other one. Boundary phases are
// applied by the receiver. Index i runs over both faces: i < face_volume is face 0, the rest face L-1. Rc: the format
// of the links (kernels/link_format.hpp).
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

template <typename R, bool Dag, int Mu, int Rc = 18>
struct HaloPack {
  HaloPackArg<R> a;
  EMPRISM_HD void operator()(int i) const {
    constexpr int kFwd = Dag ? +1 : -1;
    const int nf = a.lat.face_volume(Mu);
    const int side = i >= nf;
    const int f = i - side * nf;
    int x[4];
    a.lat.face_coords(f, Mu, side ? a.lat.l[Mu] - 1 : 0, a.in_parity, x);
    const int cb = a.lat.cb_index(x);
    if (side == 0)
      a.send_bwd[f] = project<Mu, kFwd>(a.in.load(cb));
    else
      a.send_fwd[f] = adj_mul(a.gauge.template view<Rc>().load(a.in_parity, cb, Mu), project<Mu, -kFwd>(a.in.load(cb)));
  }
};

}  // namespace emprism
