// spinor.hpp: Dirac spinors (4 spins x 3 colours), half spinors, and the spin projections
// (1 + s gamma_mu) in the chiral basis of docs/conventions.md section 3:
//   gamma_mu = [[0, B_mu], [B_mu^dag, 0]],  B_k = -i sigma_k (mu = 0,1,2),  B_3 = 1,  gamma_5 = diag(1,1,-1,-1).
// For psi = (u, l) (upper spins 0,1; lower spins 2,3):
//   (1 + s gamma_mu) psi = (h, s B_mu^dag h)  with  h = u + s B_mu l,
// so a hop needs only the half spinor h (2 spins x 3 colours): project, multiply by the link, reconstruct.
// Who may call: kernels and host code alike.
#pragma once

#include "kernels/su3.hpp"

namespace emprism {

template <typename R>
struct Spinor {
  ColorVec<R> s[4];
};

template <typename R>
struct HalfSpinor {
  ColorVec<R> h[2];
};

template <typename R>
EMPRISM_HD inline Spinor<R> zero_spinor() {
  Spinor<R> r;
  for (int s = 0; s < 4; ++s) r.s[s] = zero_color<R>();
  return r;
}
template <typename R>
EMPRISM_HD inline Spinor<R> operator+(const Spinor<R>& a, const Spinor<R>& b) {
  Spinor<R> r;
  for (int s = 0; s < 4; ++s) r.s[s] = a.s[s] + b.s[s];
  return r;
}
template <typename R>
EMPRISM_HD inline Spinor<R> operator-(const Spinor<R>& a, const Spinor<R>& b) {
  Spinor<R> r;
  for (int s = 0; s < 4; ++s) r.s[s] = a.s[s] - b.s[s];
  return r;
}
template <typename R>
EMPRISM_HD inline Spinor<R> operator*(R a, const Spinor<R>& b) {
  Spinor<R> r;
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c) r.s[s].c[c] = a * b.s[s].c[c];
  return r;
}
template <typename R>
EMPRISM_HD inline Spinor<R> gamma5(const Spinor<R>& a) {
  Spinor<R> r = a;
  r.s[2] = -a.s[2];
  r.s[3] = -a.s[3];
  return r;
}

// B_mu l for the lower two spins l = (l0, l1).
template <int Mu, typename R>
EMPRISM_HD inline void mul_b(const ColorVec<R>& l0, const ColorVec<R>& l1, ColorVec<R>& r0, ColorVec<R>& r1) {
  static_assert(Mu >= 0 && Mu < 4, "direction");
  if constexpr (Mu == 0) {  // -i sigma_1 = [[0,-i],[-i,0]]
    r0 = -times_i(l1);
    r1 = -times_i(l0);
  } else if constexpr (Mu == 1) {  // -i sigma_2 = [[0,-1],[1,0]]
    r0 = -l1;
    r1 = l0;
  } else if constexpr (Mu == 2) {  // -i sigma_3 = [[-i,0],[0,i]]
    r0 = -times_i(l0);
    r1 = times_i(l1);
  } else {  // 1
    r0 = l0;
    r1 = l1;
  }
}
// B_mu^dag h.
template <int Mu, typename R>
EMPRISM_HD inline void mul_bdag(const ColorVec<R>& h0, const ColorVec<R>& h1, ColorVec<R>& r0, ColorVec<R>& r1) {
  if constexpr (Mu == 0) {  // [[0,i],[i,0]]
    r0 = times_i(h1);
    r1 = times_i(h0);
  } else if constexpr (Mu == 1) {  // [[0,1],[-1,0]]
    r0 = h1;
    r1 = -h0;
  } else if constexpr (Mu == 2) {  // [[i,0],[0,-i]]
    r0 = times_i(h0);
    r1 = -times_i(h1);
  } else {
    r0 = h0;
    r1 = h1;
  }
}

// h = upper half of (1 + Sign gamma_mu) psi.
template <int Mu, int Sign, typename R>
EMPRISM_HD inline HalfSpinor<R> project(const Spinor<R>& psi) {
  ColorVec<R> b0, b1;
  mul_b<Mu>(psi.s[2], psi.s[3], b0, b1);
  HalfSpinor<R> h;
  if constexpr (Sign > 0) {
    h.h[0] = psi.s[0] + b0;
    h.h[1] = psi.s[1] + b1;
  } else {
    h.h[0] = psi.s[0] - b0;
    h.h[1] = psi.s[1] - b1;
  }
  return h;
}

// acc += (h, Sign B_mu^dag h), the full spinor (1 + Sign gamma_mu) psi rebuilt from its half.
template <int Mu, int Sign, typename R>
EMPRISM_HD inline void accumulate_reconstructed(Spinor<R>& acc, const HalfSpinor<R>& h) {
  ColorVec<R> l0, l1;
  mul_bdag<Mu>(h.h[0], h.h[1], l0, l1);
  acc.s[0] = acc.s[0] + h.h[0];
  acc.s[1] = acc.s[1] + h.h[1];
  if constexpr (Sign > 0) {
    acc.s[2] = acc.s[2] + l0;
    acc.s[3] = acc.s[3] + l1;
  } else {
    acc.s[2] = acc.s[2] - l0;
    acc.s[3] = acc.s[3] - l1;
  }
}

// U h and U^dag h: a link in L on a half spinor in R, the arithmetic in R (kernels/su3.hpp; mul<false>: the products
// summed separately).
template <bool Chained = kChainedProducts, typename L, typename R>
EMPRISM_HD inline HalfSpinor<R> mul(const SU3<L>& u, const HalfSpinor<R>& h) {
  return HalfSpinor<R>{{mul<Chained>(u, h.h[0]), mul<Chained>(u, h.h[1])}};
}
template <typename L, typename R>
EMPRISM_HD inline HalfSpinor<R> operator*(const SU3<L>& u, const HalfSpinor<R>& h) {
  return mul(u, h);
}
template <typename L, typename R>
EMPRISM_HD inline HalfSpinor<R> adj_mul(const SU3<L>& u, const HalfSpinor<R>& h) {
  return HalfSpinor<R>{{adj_mul(u, h.h[0]), adj_mul(u, h.h[1])}};
}
template <typename R>
EMPRISM_HD inline HalfSpinor<R> operator*(Complex<R> z, const HalfSpinor<R>& h) {
  return HalfSpinor<R>{{z * h.h[0], z * h.h[1]}};
}
template <typename R>
EMPRISM_HD inline HalfSpinor<R> operator*(R a, const HalfSpinor<R>& h) {
  HalfSpinor<R> r;
  for (int s = 0; s < 2; ++s)
    for (int c = 0; c < 3; ++c) r.h[s].c[c] = a * h.h[s].c[c];
  return r;
}
template <typename R>
EMPRISM_HD inline HalfSpinor<R> operator+(const HalfSpinor<R>& a, const HalfSpinor<R>& b) {
  return HalfSpinor<R>{{a.h[0] + b.h[0], a.h[1] + b.h[1]}};
}
template <typename R>
EMPRISM_HD inline HalfSpinor<R> operator-(const HalfSpinor<R>& a, const HalfSpinor<R>& b) {
  return HalfSpinor<R>{{a.h[0] - b.h[0], a.h[1] - b.h[1]}};
}

}  // namespace emprism
