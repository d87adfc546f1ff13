// meson_contract.hpp: the per-site meson contraction and its per-plane sums, as kernels on the 12 propagator columns
// kept on the device (src/physics/contractions.hpp has the conventions; src/physics/contraction_device.cpp launches):
//   MesonSites   thread = local natural site: the channel values tr[Gsnk S Gsrc g5 S^dag g5] averaged over each
//                channel's (sink, source) pairs, into vals[site * nch + k]
//   MesonPlanes  thread = (local (t, z) plane, channel, momentum): the sum over the plane's sites, y outer and x inner,
//                of exp(-i p.(x - x0)) vals, into partial[plane][channel][momentum]
// The arithmetic and its order are those of the host's contractions.cpp (each plane summed site by site in natural
// order), so on the CPU backend the plane sums have the host's bits; on a GPU they agree to rounding (contracted
// multiply-adds). No atomics: the result does not depend on the launch.
// Who may call: src/physics/contraction_device.cpp (and the tests that compare it with the host).
#pragma once

#include <cstdint>

#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

// One (Gsnk, Gsrc) pair: (G psi)_row = phase[row] psi[col[row]] for each of the two spin matrices.
struct MesonPair {
  int snk_col[4], src_col[4];
  Complex<double> snk_phase[4], src_phase[4];
};

// The 12 columns of a propagator (column k = 3 * source spin + source colour), each as its two parities.
struct PropagatorViews {
  SpinorView<double> col[12][2];
};

struct MesonSites {
  LatticeArg lat;
  PropagatorViews s;
  const MesonPair* pairs;  // pairs of channel k: [first[k], first[k + 1])
  const int* first;
  int nch;
  Complex<double>* vals;  // [local natural site][channel]

  // S[sink][source] of the site.
  EMPRISM_HD void load(std::int64_t lex, Complex<double> (&sm)[12][12]) const {
    int x[4];
    std::int64_t r = lex;
    for (int mu = 0; mu < 4; ++mu) {
      x[mu] = static_cast<int>(r % lat.l[mu]);
      r /= lat.l[mu];
    }
    const int parity = (x[0] + x[1] + x[2] + x[3] + lat.origin_parity()) & 1;
    const int cb = lat.cb_index(x);
    for (int src = 0; src < 12; ++src) {
      const Spinor<double> column = s.col[src][parity].load(cb);
      for (int snk = 0; snk < 12; ++snk) sm[snk][src] = column.s[snk / 3].c[snk % 3];
    }
  }

  // tr[Gsnk S Gsrc g5 S^dag g5] with B = conj(g5 S g5) elementwise, B[a][b] = g5(a) g5(b) conj(S[a][b]), read from S
  // (the host's contractions.cpp stores B; the values are the same).
  EMPRISM_HD static Complex<double> trace(const MesonPair& p, const Complex<double> (&sm)[12][12]) {
    Complex<double> total{0.0, 0.0};
    for (int sa = 0; sa < 4; ++sa) {
      const int row_s = 3 * p.snk_col[sa], row_b = 3 * sa;
      for (int sg = 0; sg < 4; ++sg) {
        const int col_s = 3 * sg, col_b = 3 * p.src_col[sg];
        const bool same = (sa < 2) == (p.src_col[sg] < 2);  // g5(a) g5(b) = +1
        Complex<double> block{0.0, 0.0};
        for (int ca = 0; ca < 3; ++ca)
          for (int cg = 0; cg < 3; ++cg) {
            const Complex<double> c = sm[row_b + ca][col_b + cg];
            const Complex<double> b = same ? Complex<double>{c.re, -c.im} : Complex<double>{-c.re, c.im};
            block += sm[row_s + ca][col_s + cg] * b;
          }
        total += (p.snk_phase[sa] * p.src_phase[sg]) * block;
      }
    }
    return total;
  }

  EMPRISM_HD void operator()(std::int64_t lex) const {
    Complex<double> sm[12][12];
    load(lex, sm);
    for (int k = 0; k < nch; ++k) {
      Complex<double> v{0.0, 0.0};
      for (int p = first[k]; p < first[k + 1]; ++p) v += trace(pairs[p], sm);
      const double n = static_cast<double>(first[k + 1] - first[k]);
      vals[lex * nch + k] = Complex<double>{v.re / n, v.im / n};
    }
  }
};

struct MesonPlanes {
  int l[4];
  int k0[3];  // (origin - source site) mod L in x, y, z: k = (k0 + x) mod L
  int gl[3];
  int nch, nmom, lmax;
  const Complex<double>* vals;   // [local natural site][channel]
  const Complex<double>* phase;  // [(momentum * 3 + d) * lmax + k] = exp(-2 pi i (n_d k mod L_d) / L_d)
  Complex<double>* partial;      // [plane][channel][momentum]

  EMPRISM_HD void operator()(std::int64_t i) const {
    const std::int64_t stride = static_cast<std::int64_t>(nch) * nmom;
    const std::int64_t plane = i / stride;
    const int km = static_cast<int>(i % stride), k = km / nmom, m = km % nmom;
    const int z = static_cast<int>(plane % l[2]);
    const Complex<double>* ph = phase + static_cast<std::int64_t>(m) * 3 * lmax;
    const int kz = (k0[2] + z) % gl[2];
    const std::int64_t base = plane * l[1] * l[0];
    Complex<double> acc{0.0, 0.0};
    for (int y = 0; y < l[1]; ++y) {
      const int ky = (k0[1] + y) % gl[1];
      for (int x = 0; x < l[0]; ++x) {
        const int kx = (k0[0] + x) % gl[0];
        const Complex<double> e = ph[kx] * ph[lmax + ky] * ph[2 * lmax + kz];
        acc += e * vals[(base + static_cast<std::int64_t>(y) * l[0] + x) * nch + k];
      }
    }
    partial[i] = acc;
  }
};

}  // namespace emprism
