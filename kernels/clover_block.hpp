// clover_block.hpp: the clover term A(x) (or its inverse) of one site as two hermitian 6x6 blocks,
// block 0 acting on spins 0,1 and block 1 on spins 2,3 (A commutes with gamma_5 in the chiral basis).
// Packing of one block, 36 reals: diag[i] (real), and the strictly lower triangle lower[k] = M(i, j), i > j,
// k = i (i - 1) / 2 + j; the upper triangle is its conjugate. Component index within a block: 3 * spin' + colour,
// spin' = spin - 2 * block, i.e. component i of block b is HalfSpinor h[i / 3].c[i % 3] of the chiral half b.
// Who may call: kernels and host code alike.
#pragma once

#include <type_traits>

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

// Whether block_mul sums its products as multiply-add chains (add_product, kernels/complex.hpp): in fp32 where U v does
// (kChainedProducts). Not in fp64: nvcc (sm_90) then took the fp32/fp64 operator's oe_clover kernels from 128 to
// 134-138 registers and fp64's exterior eo_clover with links of 18 to 130 (kernels/register_budgets.txt).
template <typename R>
constexpr bool kChainedBlock = kChainedProducts&& std::is_same_v<R, float>;

// y = M x for one hermitian 6x6 block, row by row (x and y are the chiral halves the block acts on).
template <typename R>
EMPRISM_HD inline HalfSpinor<R> block_mul(const CloverBlock<R>& m, const HalfSpinor<R>& x) {
  HalfSpinor<R> y;
  EMPRISM_UNROLL
  for (int i = 0; i < 6; ++i) {
    Complex<R> acc = m.diag[i] * x.h[i / 3].c[i % 3];
    EMPRISM_UNROLL
    for (int j = 0; j < i; ++j)
      acc = add_product<false, kChainedBlock<R>>(acc, m.lower[tri_index(i, j)], x.h[j / 3].c[j % 3]);
    EMPRISM_UNROLL
    for (int j = i + 1; j < 6; ++j)
      acc = add_product<true, kChainedBlock<R>>(acc, m.lower[tri_index(j, i)], x.h[j / 3].c[j % 3]);
    y.h[i / 3].c[i % 3] = acc;
  }
  return y;
}

// The chiral half b (spins 2b, 2b+1) of a spinor, and a spinor from its two halves.
template <typename R>
EMPRISM_HD inline HalfSpinor<R> chiral_half(const Spinor<R>& psi, int b) {
  return HalfSpinor<R>{{psi.s[2 * b], psi.s[2 * b + 1]}};
}

// A psi for one site, block by block.
template <typename R>
EMPRISM_HD inline Spinor<R> clover_mul(const CloverSite<R>& a, const Spinor<R>& psi) {
  const HalfSpinor<R> u = block_mul(a.b[0], chiral_half(psi, 0)), l = block_mul(a.b[1], chiral_half(psi, 1));
  return Spinor<R>{{u.h[0], u.h[1], l.h[0], l.h[1]}};
}

}  // namespace emprism
