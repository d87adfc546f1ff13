// quark_smearing.hpp: the Wuppertal/Jacobi smearing step of src/physics/smearing.hpp on one timeslice, per site, for
// the host's SourceSmearer and the device's SourceSmearing alike (the same functor, so the CPU backend gives the
// host's bits). Fields of the slice live in its box with a one-site halo (comm/host_halo.hpp's HaloBox with dims 3:
// x fastest, index (x + 1) + (Lx + 2) ((y + 1) + (Ly + 2) (z + 1))), one Spinor<double> or 3 SU3<double> (V_x, V_y,
// V_z) per box site, array of structures.
//   QuarkSmearStep  thread = interior site of the slice (natural order): out = wuppertal (psi + alpha H psi) /
//                   (1 + 6 alpha), or jacobi psi0 + kappa_s H psi, H psi(x) = sum_i V_i(x) psi(x+i) + V_i(x-i)^dag
//                   psi(x-i) (psi's halo filled)
//   SliceHaloWrap   thread = box site: a halo site takes the value of its periodic image (no spatial partitioning);
//                   SliceHaloWrapOf<SU3<double>, 3> does the same for the slice links
//   SliceTransfer   thread = interior site: timeslice t of a parity-split spinor field to the box, or back
//   PointSource     thread = site of one parity: 1 at (site, spin, colour), 0 elsewhere (sources.hpp's point source)
// Who may call: src/physics/smearing.cpp, src/physics/smearing_device.cpp and kernels/link_smearing.hpp.
#pragma once

#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

struct SliceBoxArg {
  int l[3];  // local x, y, z extents
  EMPRISM_HD int index(const int x[3]) const {
    return (x[0] + 1) + (l[0] + 2) * ((x[1] + 1) + (l[1] + 2) * (x[2] + 1));
  }
  EMPRISM_HD void interior(int k, int x[3]) const {
    x[0] = k % l[0];
    x[1] = (k / l[0]) % l[1];
    x[2] = k / (l[0] * l[1]);
  }
  EMPRISM_HD int sites() const { return (l[0] + 2) * (l[1] + 2) * (l[2] + 2); }
};

struct QuarkSmearStep {
  SliceBoxArg box;
  const SU3<double>* links;  // [box site * 3 + i]
  const Spinor<double>* psi;
  const Spinor<double>* psi0;
  Spinor<double>* out;
  int wuppertal;  // 1: wuppertal, 0: jacobi
  Complex<double> weight, norm;

  EMPRISM_HD void operator()(int k) const {
    int x[3];
    box.interior(k, x);
    Spinor<double> h = zero_spinor<double>();
    for (int i = 0; i < 3; ++i) {
      int xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
      ++xp[i];
      --xm[i];
      const SU3<double> uf = links[box.index(x) * 3 + i];
      const SU3<double> ub = links[box.index(xm) * 3 + i];
      const Spinor<double> pf = psi[box.index(xp)];
      const Spinor<double> pb = psi[box.index(xm)];
      for (int s = 0; s < 4; ++s) h.s[s] = h.s[s] + uf * pf.s[s] + adj_mul(ub, pb.s[s]);
    }
    const int sx = box.index(x);
    Spinor<double> o;
    for (int s = 0; s < 4; ++s)
      o.s[s] = wuppertal ? norm * (psi[sx].s[s] + weight * h.s[s]) : psi0[sx].s[s] + weight * h.s[s];
    out[sx] = o;
  }
};

// N elements of T per box site (N = 1: a spinor; T = SU3<double>, N = 3: the slice links).
template <typename T, int N>
struct SliceHaloWrapOf {
  SliceBoxArg box;
  T* f;
  EMPRISM_HD void operator()(int i) const {
    int x[3], r = i;
    bool halo = false;
    for (int k = 0; k < 3; ++k) {
      const int e = box.l[k] + 2;
      x[k] = r % e - 1;
      r /= e;
      if (x[k] < 0 || x[k] >= box.l[k]) {
        halo = true;
        x[k] = (x[k] + box.l[k]) % box.l[k];
      }
    }
    if (halo)
      for (int c = 0; c < N; ++c) f[i * N + c] = f[box.index(x) * N + c];
  }
};
using SliceHaloWrap = SliceHaloWrapOf<Spinor<double>, 1>;

struct SliceTransfer {
  LatticeArg lat;
  SliceBoxArg box;
  int t;  // local timeslice
  SpinorView<double> field[2];
  Spinor<double>* slice;
  int to_box;  // 1: field -> box, 0: box -> field
  EMPRISM_HD void operator()(int k) const {
    int x[4];
    box.interior(k, x);
    x[3] = t;
    const int parity = (x[0] + x[1] + x[2] + x[3] + lat.origin_parity()) & 1;
    const int cb = lat.cb_index(x);
    if (to_box) {
      slice[box.index(x)] = field[parity].load(cb);
    } else {
      field[parity].store(cb, slice[box.index(x)]);
    }
  }
};

struct PointSource {
  LatticeArg lat;
  int parity;
  int x[4];       // local coordinates of the source site (any value where it is not on this rank)
  int here;       // 1 when this rank holds the site
  int component;  // 3 * spin + colour
  SpinorView<double> f;
  EMPRISM_HD void operator()(int cb) const {
    Spinor<double> s = zero_spinor<double>();
    const int site_parity = (x[0] + x[1] + x[2] + x[3] + lat.origin_parity()) & 1;
    if (here && site_parity == parity && lat.cb_index(x) == cb) s.s[component / 3].c[component % 3] = {1.0, 0.0};
    f.store(cb, s);
  }
};

}  // namespace emprism
