// clover_block.hpp: the clover term A(x) (or its inverse) of one site as two hermitian 6x6 blocks,
// block 0 acting on spins 0,1 and block 1 on spins 2,3 (A commutes with gamma_5 in the chiral basis).
// Packing of one block, 36 reals: diag[i] (real), and the strictly lower triangle lower[k] = M(i, j), i > j,
// k = i (i - 1) / 2 + j; the upper triangle is its conjugate. Component index within a block: 3 * spin' + colour,
// spin' = spin - 2 * block.
// Who may call: kernels and host code alike.
#pragma once

#include "kernels/spinor.hpp"

namespace emprism {

template <typename R>
struct CloverBlock {
  R diag[6];
  Complex<R> lower[15];
};

template <typename R>
struct CloverSite {
  CloverBlock<R> b[2];
};

EMPRISM_HD constexpr int tri_index(int i, int j) { return i * (i - 1) / 2 + j; }  // i > j

// y = M x for one hermitian 6x6 block.
template <typename R>
EMPRISM_HD inline void block_mul(const CloverBlock<R>& m, const Complex<R> (&x)[6], Complex<R> (&y)[6]) {
  for (int i = 0; i < 6; ++i) {
    Complex<R> acc = m.diag[i] * x[i];
    for (int j = 0; j < i; ++j) acc += m.lower[tri_index(i, j)] * x[j];
    for (int j = i + 1; j < 6; ++j) acc += conj_mul(m.lower[tri_index(j, i)], x[j]);
    y[i] = acc;
  }
}

// A psi for one site.
template <typename R>
EMPRISM_HD inline Spinor<R> clover_mul(const CloverSite<R>& a, const Spinor<R>& psi) {
  Spinor<R> out;
  for (int b = 0; b < 2; ++b) {
    Complex<R> x[6], y[6];
    for (int s = 0; s < 2; ++s)
      for (int c = 0; c < 3; ++c) x[3 * s + c] = psi.s[2 * b + s].c[c];
    block_mul(a.b[b], x, y);
    for (int s = 0; s < 2; ++s)
      for (int c = 0; c < 3; ++c) out.s[2 * b + s].c[c] = y[3 * s + c];
  }
  return out;
}

}  // namespace emprism
