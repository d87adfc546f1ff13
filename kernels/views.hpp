// views.hpp: non-owning, trivially-copyable views of field memory with load/store per site. The layout
// is a property of the view; kernels only call load/store. This is the site-major (array of structures)
// layout used by the CPU backend:
//   spinor of one parity: [cb][spin][colour] complex
//   gauge, both parities: [parity][cb][mu][row][col] complex (U_mu(x) at the site x)
//   clover of one parity: [cb][block] CloverBlock (72 reals per site)
// Who may call: kernels and host code that owns the memory.
#pragma once

#include "kernels/clover_block.hpp"

namespace emprism {

template <typename R>
struct SpinorView {
  Spinor<R>* data = nullptr;
  EMPRISM_HD Spinor<R> load(int cb) const { return data[cb]; }
  EMPRISM_HD void store(int cb, const Spinor<R>& v) const { data[cb] = v; }
};

template <typename R>
struct GaugeView {
  SU3<R>* data = nullptr;
  int vh = 0;
  EMPRISM_HD SU3<R> load(int parity, int cb, int mu) const { return data[(parity * vh + cb) * 4 + mu]; }
  EMPRISM_HD void store(int parity, int cb, int mu, const SU3<R>& u) const { data[(parity * vh + cb) * 4 + mu] = u; }
};

template <typename R>
struct CloverView {
  CloverSite<R>* data = nullptr;
  EMPRISM_HD CloverSite<R> load(int cb) const { return data[cb]; }
  EMPRISM_HD void store(int cb, const CloverSite<R>& a) const { data[cb] = a; }
};

}  // namespace emprism
