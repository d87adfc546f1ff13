// clover_dynamic.hpp: the fp32 operator's clover term stored compressed and inverted in the kernel ("dynamic clover",
// as QUDA's CLOVER_DYNAMIC with CLOVER_RECONSTRUCT): A is kept, A^-1 is not; a kernel that applies A^-1 factors the
// 6x6 block as it loads it (LDL^dag, no pivoting) and solves, in registers.
// Why: at 32^3x64 the fp32 hopping kernels run at 94-95% of the measured peak in their minimum bytes (BENCHMARKS), so
// only fewer bytes make them faster; the clover pair was 288 of eo_clover's 1056 bytes per site (links of 18).
// The structure used (docs/conventions.md section 4): in the chiral basis each block of A is
//   A_b = c 1 + sum_k tau_k (x) G_k     (tau_k: traceless 2x2 in the two spins of the block, G_k: 3x3 in colour)
// because sigma_{mu nu} restricted to one chirality is traceless in spin. So with P = the upper left 3x3 of A_b - c,
// the lower right 3x3 is c - P, and the lower left 3x3 Q is free (its conjugate transpose is the upper right):
//   A_b = [[c + P, Q^dag], [Q, c - P]],   P hermitian (3 + 3 complex), Q complex 3x3 (9 complex), c real
// 28 reals per block (c, diag P, lower P, Q), 112 bytes: 224 per site against 288. c is 1 in our normalisation
// (A = 1 + csw kappa ...), kept per block (it fills the 16-byte word; no assumption on the normalisation). No
// tracelessness of F is assumed (our F is the anti-hermitian part of the clover leaves, not traceless-projected).
// compress_block takes c as the mean of the six diagonal entries, P as the average of the upper left 3x3 and minus the
// lower right one (less c), and Q from the lower left 3x3 (exact for a block of this structure, up to rounding:
// tests/test_clover_dynamic.cpp checks the round trip on random SU(3) fields).
// The solve: A_b = L D L^dag with L unit lower triangular and D real (no square roots), then x = L^-dag D^-1 L^-1 y:
// about 560 flops per block against 276 for the stored inverse's mat-vec; the kernels stay bound by memory (the
// operator's flops are reported as before, kernels/launch.hpp: the flops of the operator, not of its format). A is
// positive definite for the fields and couplings used in practice (the set-up refuses a singular block: clover
// build), so no pivoting; the fp32 solve's relative error is a few fp32 epsilon times the block's condition number
// (about 1 to 2 here), the same size as the rounding of a stored fp32 inverse.
// Who may call: kernels and host code alike (through CloverView<CloverDynamic>, kernels/views.hpp).
#pragma once

#include "kernels/clover_block.hpp"

namespace emprism {

// The tag of the compressed format (a CloverField and CloverView parameter, as Half is).
struct CloverDynamic {};

// One chiral block, 28 reals: c, the diagonal of P, the lower triangle of P (tri_index order: (1,0), (2,0), (2,1)),
// and Q row by row (Q[3 i + j] = A_b(3 + i, j)).
struct CloverBlockC {
  float c;
  float p[3];
  Complex<float> poff[3];
  Complex<float> q[9];
};
struct CloverSiteC {
  CloverBlockC b[2];
};

// A block as the kernels multiply with it: the stored block and whether the view stands for A^-1 (set per launch).
struct CloverBlockDyn {
  CloverBlockC m;
  bool inverse;
};

// The compressed form of a block of A (any precision), rounded to fp32.
template <typename R>
EMPRISM_HD inline CloverBlockC compress_block(const CloverBlock<R>& a) {
  CloverBlockC out;
  R c = 0;
  EMPRISM_UNROLL
  for (int i = 0; i < 6; ++i) c += a.diag[i];
  out.c = static_cast<float>(c / 6);
  EMPRISM_UNROLL
  for (int i = 0; i < 3; ++i) out.p[i] = static_cast<float>((a.diag[i] - a.diag[i + 3]) / 2);
  EMPRISM_UNROLL
  for (int i = 1; i < 3; ++i) {
    EMPRISM_UNROLL
    for (int j = 0; j < i; ++j) {
      const Complex<R> u = a.lower[tri_index(i, j)], l = a.lower[tri_index(i + 3, j + 3)];
      out.poff[tri_index(i, j)] = {static_cast<float>((u.re - l.re) / 2), static_cast<float>((u.im - l.im) / 2)};
    }
  }
  EMPRISM_UNROLL
  for (int i = 0; i < 3; ++i) {
    EMPRISM_UNROLL
    for (int j = 0; j < 3; ++j) {
      const Complex<R> v = a.lower[tri_index(i + 3, j)];
      out.q[3 * i + j] = {static_cast<float>(v.re), static_cast<float>(v.im)};
    }
  }
  return out;
}

// The 6x6 block of A a compressed block stands for.
EMPRISM_HD inline CloverBlock<float> expand_block(const CloverBlockC& m) {
  CloverBlock<float> a;
  EMPRISM_UNROLL
  for (int i = 0; i < 3; ++i) {
    a.diag[i] = m.c + m.p[i];
    a.diag[i + 3] = m.c - m.p[i];
  }
  EMPRISM_UNROLL
  for (int i = 1; i < 3; ++i) {
    EMPRISM_UNROLL
    for (int j = 0; j < i; ++j) {
      a.lower[tri_index(i, j)] = m.poff[tri_index(i, j)];
      a.lower[tri_index(i + 3, j + 3)] = -m.poff[tri_index(i, j)];
    }
  }
  EMPRISM_UNROLL
  for (int i = 0; i < 3; ++i) {
    EMPRISM_UNROLL
    for (int j = 0; j < 3; ++j) a.lower[tri_index(i + 3, j)] = m.q[3 * i + j];
  }
  return a;
}

// A block ready for products: A itself (inverse false: f holds A as stored in a CloverBlock), or the L D L^dag
// factors of A (inverse true: f.lower holds the strictly lower part of V = L D in tri_index order, L unit lower
// triangular, f.diag holds 1 / D). Made once per block: oe_clover's epilogue multiplies with it twice.
struct CloverBlockReady {
  CloverBlock<float> f;
  bool inverse;
};

// The factors of a hermitian positive definite block a (no pivoting), column by column: V_ij = a_ij - sum_k<j V_ik
// conj(L_jk) and d_j = a_jj - sum_k<j Re(V_jk conj(L_jk)), with conj(L_jk) = conj(V_jk) / d_k made once per (j, k).
// V instead of L saves scaling each entry by 1 / d_j (30 multiplies per block); the solve scales where it needs L
// (sm_90: fp32 eo_clover with links of 8 3176 -> 3128 instructions, 95.3-95.4 -> 95.5-95.6% of an H100's peak,
// 2026-12-02, BENCHMARKS.md). Every product is a chain of multiply-adds (add_product, kernels/complex.hpp).
// 1 / D by fast_rcp (kernels/backend/defs.hpp: on NVIDIA GPUs the special function unit's reciprocal, within 1 ulp,
// without IEEE division's extra instructions and slow path; D is about 1 here): fp32's oe_clover, which factors each
// block once for two solves, 88 -> 91.5% of the peak with links of 8, 94 -> 95.5% with 12 (H200, 2026-11-29,
// BENCHMARKS.md); the iterations of the mixed solves unchanged.
EMPRISM_HD inline CloverBlock<float> ldl_factor(const CloverBlock<float>& a) {
  CloverBlock<float> f;
  EMPRISM_UNROLL
  for (int j = 0; j < 6; ++j) {
    Complex<float> w[6];  // conj(L_jk), k < j
    float dj = a.diag[j];
    EMPRISM_UNROLL
    for (int k = 0; k < j; ++k) {
      const Complex<float> v = f.lower[tri_index(j, k)];
      w[k] = f.diag[k] * conj(v);
      dj = dj - v.re * w[k].re;  // - Re(V_jk conj(L_jk)) = - d_k |L_jk|^2, in two multiply-adds
      dj = dj + v.im * w[k].im;
    }
    f.diag[j] = fast_rcp(dj);
    EMPRISM_UNROLL
    for (int i = j + 1; i < 6; ++i) {
      Complex<float> s = a.lower[tri_index(i, j)];
      EMPRISM_UNROLL
      for (int k = 0; k < j; ++k) s = add_product<false, kChainedProducts>(s, -f.lower[tri_index(i, k)], w[k]);
      f.lower[tri_index(i, j)] = s;
    }
  }
  return f;
}

// x = A^-1 y from the factors of A: forward substitution with L and D^-1 together (u = D^-1 L^-1 y: z_i = y_i -
// sum_j<i V_ij u_j, u_i = z_i / d_i), then back substitution with L^dag (x_i = u_i - (sum_j>i conj(V_ji) x_j) / d_i).
// Component i of a half spinor: h[i / 3].c[i % 3].
EMPRISM_HD inline HalfSpinor<float> ldl_solve(const CloverBlock<float>& f, const HalfSpinor<float>& y) {
  Complex<float> u[6];
  EMPRISM_UNROLL
  for (int i = 0; i < 6; ++i) {
    Complex<float> s = y.h[i / 3].c[i % 3];
    EMPRISM_UNROLL
    for (int j = 0; j < i; ++j) s = add_product<false, kChainedProducts>(s, -f.lower[tri_index(i, j)], u[j]);
    u[i] = f.diag[i] * s;
  }
  HalfSpinor<float> x;
  EMPRISM_UNROLL
  for (int i = 5; i >= 0; --i) {
    if (i < 5) {
      Complex<float> t = conj_mul(f.lower[tri_index(i + 1, i)], u[i + 1]);
      EMPRISM_UNROLL
      for (int j = i + 2; j < 6; ++j) t = add_product<true, kChainedProducts>(t, f.lower[tri_index(j, i)], u[j]);
      u[i] = Complex<float>{u[i].re - f.diag[i] * t.re, u[i].im - f.diag[i] * t.im};
    }
    x.h[i / 3].c[i % 3] = u[i];
  }
  return x;
}

// The block as a view of CloverView<CloverDynamic> loaded it, ready for products: A expanded, or its factors.
EMPRISM_HD inline CloverBlockReady ready_block(const CloverBlockDyn& m) {
  const CloverBlock<float> a = expand_block(m.m);
  return CloverBlockReady{m.inverse ? ldl_factor(a) : a, m.inverse};
}

EMPRISM_HD inline HalfSpinor<float> block_mul(const CloverBlockReady& m, const HalfSpinor<float>& x) {
  return m.inverse ? ldl_solve(m.f, x) : block_mul(m.f, x);
}

// y = C x for a block as a view of CloverView<CloverDynamic> loads it: C = A^-1 (a solve) or A (the mat-vec of
// clover_block.hpp), as the view was made for.
EMPRISM_HD inline HalfSpinor<float> block_mul(const CloverBlockDyn& m, const HalfSpinor<float>& x) {
  return block_mul(ready_block(m), x);
}

}  // namespace emprism
