// heatbath.hpp: the per-link updates of the quenched heatbath (src/physics/heatbath.hpp states the action, the
// (mu, parity) blocks and the RNG counters, which are normative) as host-and-device code: the host's OpenMP loops
// (src/physics/heatbath.cpp) and the device's launches (src/physics/heatbath_device.cpp) call these functors, so
// there is one implementation. The update functors take the links through a view (at, store, local): on the host
// ExtLinks, the host field's extended layout (src/lattice/gauge.hpp: the local block with its one-site halo,
// [box site][mu], x fastest); on the device SoaLinks, a blocked structure of arrays, even-odd ordered, that wraps
// the directions not split over ranks periodically (no halo copies) and keeps a halo layer only for split ones.
//   HeatbathLinks     thread = cb of one parity: U_mu(x) <- Cabibbo-Marinari heatbath in the subgroups (0,1), (1,2),
//                     (0,2), Kennedy-Pendleton draws (Haar draw + accept/reject below alpha = 1.5), at most 65535
//                     attempts per subgroup (the link is left as it is in that subgroup if all are rejected)
//   OverrelaxLinks    thread = cb of one parity: U_mu(x) <- microcanonical overrelaxation in the same subgroups
//   ReunitariseLinks  thread = local lex: the four links of the site projected to SU(3) (gauge.hpp's projection)
//   LinksToSoa        thread = site of the extended box: its links into SoaLinks (upload), LinksFromSoa back
//                     (download: the halo copies of unsplit directions are the periodic images)
//   SoaPlaquetteSites thread = local lex: the per-site plaquette term of the host's plaquette() on SoaLinks
//   LinkSlabPack      thread = slab site of a split direction k: U_mu on the slabs x[k] = 0 and l[k] - 1 into two
//                     face buffers, and LinkSlabUnpack the received faces into the halo layers x[k] = l[k] and -1
// Work per updated link (the metrics rows of heatbath_device.cpp): the staple, 3 directions nu x 2 terms x 2 SU(3)
// products (198 flops each) and 6 sums of 18 = 2484 flops; per subgroup the 2x2 block of U A (4 x 22 + 8), its norm
// (~10), the SU(2) draw (~50, one accept/reject attempt counted), the SU(2) product (56) and its application to two
// rows (84): 3 x 290 = 870 for the heatbath; 3 x 250 = 750 for the overrelaxation (no draw).
// Minimum bytes (docs/conventions.md section 11, each input once): the links of the other three directions at x and
// at its neighbour of the other parity (3 x 2: the block holds half the sites), U_mu of the other parity, and U_mu(x)
// read and written: 9 x 144 B = 1296 B per updated link.
// Who may call: src/physics/heatbath.cpp and src/physics/heatbath_device.cpp.
#pragma once

#include <cstdint>

#include "kernels/gauge_generate.hpp"
#include "kernels/gauge_observables.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/philox.hpp"
#include "kernels/su3.hpp"

namespace emprism {

// RNG streams of the heatbath: kHeatbathStreamBase | sweep index (src/physics/heatbath.hpp).
constexpr std::uint32_t kHeatbathStreamBase = 0x80000000u;

constexpr double kHeatbathStapleFlops = 2484, kHeatbathLinkFlops = kHeatbathStapleFlops + 870,
                 kOverrelaxLinkFlops = kHeatbathStapleFlops + 750;
constexpr double kHeatbathLinkBytes = 9 * sizeof(SU3<double>);

namespace hb {

using C = Complex<double>;
using M3 = SU3<double>;

constexpr double kTwoPi = 6.283185307179586476925286766559;
// Below this SU(2) coupling alpha the polar component is drawn from the Haar measure and accepted with
// exp(alpha (x0 - 1)) (acceptance > e^-2alpha); above it by Kennedy-Pendleton (acceptance > ~0.6). Both are exact.
constexpr double kKpMinAlpha = 1.5;
constexpr std::uint32_t kMaxAttempts = 0xffffu;

// a * b^dag
EMPRISM_HD inline M3 mul_adj(const M3& a, const M3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.e[i][j] = a.e[i][0] * conj(b.e[j][0]) + a.e[i][1] * conj(b.e[j][1]) + a.e[i][2] * conj(b.e[j][2]);
  return r;
}

// a^dag * b
EMPRISM_HD inline M3 adj_mul(const M3& a, const M3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.e[i][j] = conj_mul(a.e[0][i], b.e[0][j]) + conj_mul(a.e[1][i], b.e[1][j]) + conj_mul(a.e[2][i], b.e[2][j]);
  return r;
}

// sum += a * b^dag, entry by entry: each entry gets sum + (a * b^dag) as sum + mul_adj(a, b) would (the same bits),
// without a second 3x3 temporary.
EMPRISM_HD inline void add_mul_adj(M3& sum, const M3& a, const M3& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      sum.e[i][j] =
          sum.e[i][j] + (a.e[i][0] * conj(b.e[j][0]) + a.e[i][1] * conj(b.e[j][1]) + a.e[i][2] * conj(b.e[j][2]));
}

// sum += a^dag * b, as sum + adj_mul(a, b).
EMPRISM_HD inline void add_adj_mul(M3& sum, const M3& a, const M3& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      sum.e[i][j] = sum.e[i][j] +
                    (conj_mul(a.e[0][i], b.e[0][j]) + conj_mul(a.e[1][i], b.e[1][j]) + conj_mul(a.e[2][i], b.e[2][j]));
}

// 2x2 complex matrix of the quaternion q: q0 + i q.sigma = [[q0 + i q3, q2 + i q1], [-q2 + i q1, q0 - i q3]].
struct M2 {
  C e[2][2];
};

EMPRISM_HD inline M2 su2_of(const double q[4]) {
  M2 m;
  m.e[0][0] = {q[0], q[3]};
  m.e[0][1] = {q[2], q[1]};
  m.e[1][0] = {-q[2], q[1]};
  m.e[1][1] = {q[0], -q[3]};
  return m;
}

EMPRISM_HD inline M2 mul2(const M2& a, const M2& b) {
  M2 r;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) r.e[i][j] = a.e[i][0] * b.e[0][j] + a.e[i][1] * b.e[1][j];
  return r;
}

// U <- R U with R the embedding of r in rows/columns (i, j).
EMPRISM_HD inline void apply_left(M3& u, int i, int j, const M2& r) {
  for (int c = 0; c < 3; ++c) {
    const C ui = u.e[i][c], uj = u.e[j][c];
    u.e[i][c] = r.e[0][0] * ui + r.e[0][1] * uj;
    u.e[j][c] = r.e[1][0] * ui + r.e[1][1] * uj;
  }
}

// The quaternion b of the (i, j) block w of W = U A, defined by Re tr(M(a) w) = 2 a.b for every quaternion a.
EMPRISM_HD inline void block_quaternion(const M3& u, const M3& a, int i, int j, double b[4]) {
  auto w = [&](int r, int c) { return u.e[r][0] * a.e[0][c] + u.e[r][1] * a.e[1][c] + u.e[r][2] * a.e[2][c]; };
  const C wii = w(i, i), wij = w(i, j), wji = w(j, i), wjj = w(j, j);
  b[0] = 0.5 * (wii.re + wjj.re);
  b[1] = -0.5 * (wij.im + wji.im);
  b[2] = 0.5 * (wji.re - wij.re);
  b[3] = 0.5 * (wjj.im - wii.im);
}

// The SU(2) subgroups (rows/columns i, j): s = 0: (0, 1), 1: (1, 2), 2: (0, 2).
EMPRISM_HD inline int sub_i(int s) { return s == 1 ? 1 : 0; }
EMPRISM_HD inline int sub_j(int s) { return s == 0 ? 1 : 2; }

EMPRISM_HD inline std::uint32_t rng_index(int mu, int subgroup, std::uint32_t attempt) {
  return (static_cast<std::uint32_t>(mu) << 20) | (static_cast<std::uint32_t>(subgroup) << 16) | attempt;
}

}  // namespace hb

// The staple sum A of U_mu(x) (src/physics/heatbath.hpp) for any links with at(const int y[4], int nu) reaching
// x +- one step: the host's HostGauge and the kernels' ExtLinks.
template <typename Links>
EMPRISM_HD SU3<double> wilson_staple_of(const Links& u, const int x[4], int mu) {
  SU3<double> sum{};
  EMPRISM_UNROLL
  for (int nu = 0; nu < 4; ++nu) {
    if (nu == mu) continue;
    int xp[4], xn[4], xpmn[4], xmn[4];  // x + mu, x + nu, x + mu - nu, x - nu (no index by mu: registers on a GPU)
    EMPRISM_UNROLL
    for (int d = 0; d < 4; ++d) {
      const int m = d == mu ? 1 : 0, n = d == nu ? 1 : 0;
      xp[d] = x[d] + m;
      xn[d] = x[d] + n;
      xpmn[d] = x[d] + m - n;
      xmn[d] = x[d] - n;
    }
    // U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag, added to the sum as it is formed
    hb::add_mul_adj(sum, hb::mul_adj(u.at(xp, nu), u.at(xn, mu)), u.at(x, nu));
    // U_nu(x+mu-nu)^dag U_mu(x-nu)^dag U_nu(x-nu) = (U_mu(x-nu) U_nu(x+mu-nu))^dag U_nu(x-nu)
    hb::add_adj_mul(sum, u.at(xmn, mu) * u.at(xpmn, nu), u.at(xmn, nu));
  }
  return sum;
}

// Draws x0 in [-1, 1] with density sqrt(1 - x0^2) exp(alpha x0) using uniforms (stream, site, index_base +
// attempt), attempt = 1, 2, ...; false if all kMaxAttempts were rejected (never in practice).
EMPRISM_HD inline bool draw_su2_x0(double alpha, std::uint64_t seed, std::uint32_t stream, std::uint64_t site,
                                   std::uint32_t index_base, double& x0) {
  for (std::uint32_t attempt = 1; attempt <= hb::kMaxAttempts; ++attempt) {
    double r[4];
    philox_uniform4(seed, stream, site, index_base | attempt, r);
    if (alpha < hb::kKpMinAlpha) {
      // x-coordinate of a uniform point of the unit disk: density ~ sqrt(1 - x^2).
      const double x = sqrt(r[0]) * cos(hb::kTwoPi * r[1]);
      if (r[2] <= exp(alpha * (x - 1.0))) {
        x0 = x;
        return true;
      }
    } else {
      // Kennedy-Pendleton: delta ~ delta^(1/2) exp(-2 alpha delta) (Gamma(3/2) / (2 alpha)), accepted with
      // sqrt(1 - delta); x0 = 1 - 2 delta.
      const double c = cos(hb::kTwoPi * r[1]);
      const double delta = -(log(r[0]) + c * c * log(r[2])) / (2.0 * alpha);
      if (r[3] * r[3] <= 1.0 - delta) {
        x0 = 1.0 - 2.0 * delta;
        return true;
      }
    }
  }
  return false;
}

// The heatbath of one link with staple a in its three SU(2) subgroups; `site` is the global lexicographic site.
EMPRISM_HD inline SU3<double> heatbath_link(SU3<double> link, const SU3<double>& a, int mu, double beta,
                                            std::uint64_t seed, std::uint32_t stream, std::uint64_t site) {
  EMPRISM_UNROLL  // constant rows i, j: the link stays in registers on a GPU
      for (int s = 0; s < 3; ++s) {
    const int i = hb::sub_i(s), j = hb::sub_j(s);
    double b[4];
    hb::block_quaternion(link, a, i, j, b);
    const double k = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
    // Weight exp((beta / 3) Re tr(R W)) = exp((2 beta k / 3) x0) with x = r V, V = M(conj(b) / k).
    const double alpha = 2.0 * beta * k / 3.0;
    double x0;
    if (!draw_su2_x0(alpha, seed, stream, site, hb::rng_index(mu, s, 0), x0)) continue;
    double d[4];
    philox_uniform4(seed, stream, site, hb::rng_index(mu, s, 0), d);
    const double cos_t = 2.0 * d[0] - 1.0;
    const double sin_t = sqrt(fmax(0.0, 1.0 - cos_t * cos_t));
    const double phi = hb::kTwoPi * d[1];
    const double rad = sqrt(fmax(0.0, 1.0 - x0 * x0));
    const double q[4] = {x0, rad * sin_t * cos(phi), rad * sin_t * sin(phi), rad * cos_t};
    hb::M2 r = hb::su2_of(q);
    if (k > 0) {
      const double vdag[4] = {b[0] / k, b[1] / k, b[2] / k, b[3] / k};  // M(b / k) = V^dag
      r = hb::mul2(r, hb::su2_of(vdag));
    }
    hb::apply_left(link, i, j, r);
  }
  return link;
}

// Overrelaxation of one link with staple a: in each subgroup R = (V^dag)^2, which keeps Re tr(R W).
EMPRISM_HD inline SU3<double> overrelax_link(SU3<double> link, const SU3<double>& a) {
  EMPRISM_UNROLL
  for (int s = 0; s < 3; ++s) {
    const int i = hb::sub_i(s), j = hb::sub_j(s);
    double b[4];
    hb::block_quaternion(link, a, i, j, b);
    const double k = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
    if (!(k > 0)) continue;
    const double vdag[4] = {b[0] / k, b[1] / k, b[2] / k, b[3] / k};
    const hb::M2 v = hb::su2_of(vdag);
    hb::apply_left(link, i, j, hb::mul2(v, v));
  }
  return link;
}

// The host field's extended layout (e = local extents + 2): the upload and download of the working copy.
struct ExtLinks {
  SU3<double>* u = nullptr;
  int e[4];
  EMPRISM_HD std::int64_t site(const int x[4]) const {
    return (((static_cast<std::int64_t>(x[3]) + 1) * e[2] + x[2] + 1) * e[1] + x[1] + 1) * e[0] + x[0] + 1;
  }
  EMPRISM_HD int local(int d) const { return e[d] - 2; }
  EMPRISM_HD SU3<double>& at(const int x[4], int mu) const { return u[site(x) * 4 + mu]; }
  EMPRISM_HD void store(const int x[4], int mu, const SU3<double>& v) const { at(x, mu) = v; }
  // Coordinates in [-1, l] of box site i (x fastest).
  EMPRISM_HD void coords(int i, int x[4]) const {
    for (int d = 0; d < 4; ++d) {
      x[d] = i % e[d] - 1;
      i /= e[d];
    }
  }
};

// The working copy of the links (blocked structure of arrays: coalesced on a GPU). Entry c = 3 row + column of U_mu
// at stored site s is u[((s / 32 * 4 + mu) * 9 + c) * 32 + s % 32] (blocks of kSoaBlock = 32 sites: a warp's load of
// one entry is 512 contiguous bytes, and the nine entries of a link sit at fixed offsets from the first; the
// allocation is rounded up to whole blocks, padded_sites()). The stored box is the local block with a one-site halo
// layer only in the directions split over ranks (h[d] = 1); s = parity * sites / 2 + lex / 2, lex the site's
// lexicographic index in the stored box (x fastest), parity that of its local coordinates (l[0] even: the two sites of
// lex / 2 differ). at() and store() take x[d] in [-1, l[d]]: an unsplit direction wraps to the periodic image (no halo
// copy to refresh), a split one reaches its halo layer. raw_index() does not wrap: the halo kernels address the layer
// itself.
constexpr std::int64_t kSoaBlock = 32;  // sites per block of SoaLinks (a warp's loads: 512 contiguous bytes)

struct SoaLinks {
  Complex<double>* u = nullptr;
  int l[4], h[4];
  std::int64_t sites = 0;
  EMPRISM_HD int local(int d) const { return l[d]; }
  EMPRISM_HD std::int64_t padded_sites() const { return (sites + kSoaBlock - 1) / kSoaBlock * kSoaBlock; }
  EMPRISM_HD int stored(int d) const { return l[d] + 2 * h[d]; }
  EMPRISM_HD std::int64_t raw_index(const int x[4]) const {
    const std::int64_t lex =
        ((static_cast<std::int64_t>(x[3] + h[3]) * stored(2) + x[2] + h[2]) * stored(1) + x[1] + h[1]) * stored(0) +
        x[0] + h[0];
    return ((x[0] + x[1] + x[2] + x[3]) & 1) * (sites >> 1) + (lex >> 1);
  }
  EMPRISM_HD std::int64_t index(const int x[4]) const {
    int y[4];
    for (int d = 0; d < 4; ++d)
      y[d] = h[d] != 0 || (x[d] >= 0 && x[d] < l[d]) ? x[d] : (x[d] < 0 ? x[d] + l[d] : x[d] - l[d]);
    return raw_index(y);
  }
  // Entry 0 of U_mu at stored site s; entry c is kSoaBlock * c further.
  EMPRISM_HD std::int64_t offset(std::int64_t s, int mu) const {
    return ((s / kSoaBlock) * 36 + mu * 9) * kSoaBlock + s % kSoaBlock;
  }
  EMPRISM_HD SU3<double> load_at(std::int64_t s, int mu) const {
    SU3<double> v;
    const Complex<double>* p = u + offset(s, mu);
    EMPRISM_UNROLL
    for (int c = 0; c < 9; ++c) v.e[c / 3][c % 3] = p[c * kSoaBlock];
    return v;
  }
  EMPRISM_HD void store_at(std::int64_t s, int mu, const SU3<double>& v) const {
    Complex<double>* p = u + offset(s, mu);
    EMPRISM_UNROLL
    for (int c = 0; c < 9; ++c) p[c * kSoaBlock] = v.e[c / 3][c % 3];
  }
  EMPRISM_HD SU3<double> at(const int x[4], int mu) const { return load_at(index(x), mu); }
  EMPRISM_HD void store(const int x[4], int mu, const SU3<double>& v) const { store_at(index(x), mu, v); }
};

// What the update kernels share: the block (mu, parity), the links (ExtLinks on the host, SoaLinks on the device:
// at(x, mu), store(x, mu, v), local(d)), the global lexicographic site of x.
template <typename Links>
struct LinkBlockArg {
  LatticeArg lat;
  Links u;
  int mu, parity;
  EMPRISM_HD std::uint64_t global_site(const int x[4]) const {
    std::int64_t idx = 0;
    for (int d = 3; d >= 0; --d) idx = idx * lat.g[d] + (lat.origin[d] + x[d]);
    return static_cast<std::uint64_t>(idx);
  }
};

template <typename Links>
struct HeatbathLinks {
  LinkBlockArg<Links> b;
  double beta;
  std::uint64_t seed;
  std::uint32_t stream;
  EMPRISM_HD void operator()(int cb) const {
    int x[4];
    b.lat.coords(cb, b.parity, x);
    const SU3<double> a = wilson_staple_of(b.u, x, b.mu);
    b.u.store(x, b.mu, heatbath_link(b.u.at(x, b.mu), a, b.mu, beta, seed, stream, b.global_site(x)));
  }
};

template <typename Links>
struct OverrelaxLinks {
  LinkBlockArg<Links> b;
  EMPRISM_HD void operator()(int cb) const {
    int x[4];
    b.lat.coords(cb, b.parity, x);
    const SU3<double> a = wilson_staple_of(b.u, x, b.mu);
    b.u.store(x, b.mu, overrelax_link(b.u.at(x, b.mu), a));
  }
};

template <typename Links>
struct ReunitariseLinks {
  Links u;
  EMPRISM_HD void operator()(int lex) const {
    int x[4], r = lex;
    for (int d = 0; d < 4; ++d) {
      x[d] = r % u.local(d);
      r /= u.local(d);
    }
    for (int mu = 0; mu < 4; ++mu) u.store(x, mu, project_to_su3(u.at(x, mu)));
  }
};

// thread = site of the host field's extended box: its four links into the working copy where it has a place (the
// local block, and the halo layer of a split direction).
struct LinksToSoa {
  ExtLinks ext;
  SoaLinks soa;
  EMPRISM_HD void operator()(int i) const {
    int x[4];
    ext.coords(i, x);
    for (int d = 0; d < 4; ++d)
      if (soa.h[d] == 0 && (x[d] < 0 || x[d] >= soa.l[d])) return;
    const std::int64_t s = soa.raw_index(x);
    for (int mu = 0; mu < 4; ++mu) soa.store_at(s, mu, ext.at(x, mu));
  }
};

// thread = site of the host field's extended box: its four links from the working copy (an unsplit direction's halo
// copies: the periodic images).
struct LinksFromSoa {
  SoaLinks soa;
  ExtLinks ext;
  EMPRISM_HD void operator()(int i) const {
    int x[4];
    ext.coords(i, x);
    for (int mu = 0; mu < 4; ++mu) ext.at(x, mu) = soa.at(x, mu);
  }
};

// thread = local natural site: the per-site plaquette term of the host's plaquette() (site_plaquettes).
struct SoaPlaquetteSites {
  SoaLinks u;
  double* plaq;
  EMPRISM_HD void operator()(int lex) const {
    int x[4], r = lex;
    for (int d = 0; d < 4; ++d) {
      x[d] = r % u.l[d];
      r /= u.l[d];
    }
    plaq[lex] = site_plaquettes(u, x);
  }
};

// The slab x[k] = const of the halo refresh of a split direction k, in pass order k = 0..3: x[d] over the stored
// extent for d < k (a split d's halo layer was filled by its earlier pass), [0, l[d]) for d > k; site i in that order,
// lowest d fastest (the same on every rank: the packed faces match).
struct LinkSlab {
  SoaLinks u;
  int mu, k;
  EMPRISM_HD int extent(int d) const { return d < k ? u.stored(d) : u.l[d]; }
  EMPRISM_HD int sites() const {
    int n = 1;
    for (int d = 0; d < 4; ++d)
      if (d != k) n *= extent(d);
    return n;
  }
  EMPRISM_HD std::int64_t index(int i, int xk) const {
    int x[4];
    for (int d = 0; d < 4; ++d) {
      if (d == k) continue;
      x[d] = i % extent(d) - (d < k ? u.h[d] : 0);
      i /= extent(d);
    }
    x[k] = xk;
    return u.raw_index(x);
  }
};

struct LinkSlabPack {
  LinkSlab s;
  SU3<double>*low, *high;  // the faces x[k] = 0 (to the backward neighbour) and l - 1 (to the forward one)
  EMPRISM_HD void operator()(int i) const {
    low[i] = s.u.load_at(s.index(i, 0), s.mu);
    high[i] = s.u.load_at(s.index(i, s.u.l[s.k] - 1), s.mu);
  }
};

struct LinkSlabUnpack {
  LinkSlab s;
  const SU3<double>*from_fwd, *from_bwd;  // into the halo layers x[k] = l and -1
  EMPRISM_HD void operator()(int i) const {
    s.u.store_at(s.index(i, s.u.l[s.k]), s.mu, from_fwd[i]);
    s.u.store_at(s.index(i, -1), s.mu, from_bwd[i]);
  }
};

}  // namespace emprism
