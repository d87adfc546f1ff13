// lattice_arg.hpp: the index arithmetic a kernel needs, as a trivially-copyable struct (no tables, so no
// index bytes are read): even-odd (checkerboard) index <-> local coordinates, neighbours, boundary crossings.
// Convention (docs/conventions.md section 1): x fastest, t slowest; parity = (x+y+z+t) mod 2 in *global* coordinates;
// within a parity, cb = lex / 2 with lex = x + Lx (y + Ly (z + Lz t)) the local lexicographic index
// (local Lx is even, so the two sites of each x-pair have opposite parity).
// Built by src/lattice/geometry.cpp (which also sets the divisors); who may call: kernels and host code alike.
#pragma once

#include <cstdint>

#include "kernels/backend/defs.hpp"

namespace emprism {

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 by one multiply and one shift (a divisor known when the kernel starts:
// the local extents): m = ceil(2^p / d) with p = 31 + ceil(log2 d), q = (n m) >> p. Exact: m d - 2^p < d <= 2^(p-31),
// so n (m d - 2^p) < 2^p, and n m / 2^p exceeds n / d by less than 1 / d. The kernels' coordinates took three
// signed divisions of about 25 instructions each on sm_90 (tests/test_halo.cpp checks every divisor up to 1024).
struct FastDiv {
  std::uint32_t mul = 1u << 31;
  int shift = 31;  // d = 1
  static FastDiv of(int d) {
    int s = 0;
    while ((std::int64_t{1} << s) < d) ++s;
    const int p = 31 + s;
    return FastDiv{static_cast<std::uint32_t>(((std::uint64_t{1} << p) + std::uint64_t(d) - 1) / std::uint64_t(d)), p};
  }
  EMPRISM_HD int div(int n) const {
    return static_cast<int>((std::uint64_t(static_cast<std::uint32_t>(n)) * mul) >> shift);
  }
};

struct LatticeArg {
  int l[4];                         // local extents
  int g[4];                         // global extents
  int origin[4];                    // global coordinates of local site (0,0,0,0)
  int partitioned[4];               // 1: hops across the local boundary in mu go through the halo buffers
  int vh;                           // local sites per parity
  FastDiv div_lxh, div_l1, div_l2;  // by l[0] / 2, l[1], l[2] (set_divisors, once the extents are set)

  void set_divisors() {
    div_lxh = FastDiv::of(l[0] / 2);
    div_l1 = FastDiv::of(l[1]);
    div_l2 = FastDiv::of(l[2]);
  }

  EMPRISM_HD int origin_parity() const { return (origin[0] + origin[1] + origin[2] + origin[3]) & 1; }

  // Local coordinates of checkerboard site cb of the given (global) parity: by FastDiv, or (Fast false: the fp64
  // hopping kernels, kernels/wilson_clover.hpp kFastCoords) by integer division.
  template <bool Fast = true>
  EMPRISM_HD void coords(int cb, int parity, int x[4]) const {
    const int lxh = l[0] / 2;
    int xh;
    if constexpr (Fast) {
      const int r = div_lxh.div(cb);  // the row (y, z, t) of the site
      xh = cb - r * lxh;
      const int r2 = div_l1.div(r);  // its (z, t)
      x[1] = r - r2 * l[1];
      x[3] = div_l2.div(r2);
      x[2] = r2 - x[3] * l[2];
    } else {
      int r = cb / lxh;
      xh = cb - r * lxh;
      x[1] = r % l[1];
      r /= l[1];
      x[2] = r % l[2];
      x[3] = r / l[2];
    }
    const int odd_row = (x[1] + x[2] + x[3] + origin_parity() + parity) & 1;
    x[0] = 2 * xh + odd_row;
  }

  // (lex >> 1: lex is not negative, and the shift is one instruction where the signed division by 2 took two.)
  EMPRISM_HD int cb_index(const int x[4]) const { return (x[0] + l[0] * (x[1] + l[1] * (x[2] + l[2] * x[3]))) >> 1; }

  // True when a hop from x leaves the rank (a partitioned direction at the local boundary).
  EMPRISM_HD bool on_boundary(const int x[4]) const {
    for (int mu = 0; mu < 4; ++mu)
      if (partitioned[mu] && (x[mu] == 0 || x[mu] == l[mu] - 1)) return true;
    return false;
  }

  // Bit mu set when a hop from x leaves the rank in mu (a partitioned direction at the local boundary).
  EMPRISM_HD int boundary_mask(const int x[4]) const {
    int m = 0;
    for (int mu = 0; mu < 4; ++mu)
      if (partitioned[mu] && (x[mu] == 0 || x[mu] == l[mu] - 1)) m |= 1 << mu;
    return m;
  }

  // Faces: the sites of one parity with x[mu] fixed. Face index = (3-D lexicographic index over the other
  // directions, in increasing order) / 2; both sides of a rank boundary agree on it (same other coordinates).
  EMPRISM_HD int face_volume(int mu) const { return vh / l[mu]; }
  EMPRISM_HD int face_index(const int x[4], int mu) const {
    const int d0 = mu == 0 ? 1 : 0, d1 = mu <= 1 ? 2 : 1, d2 = mu <= 2 ? 3 : 2;
    return (x[d0] + l[d0] * (x[d1] + l[d1] * x[d2])) / 2;
  }
  EMPRISM_HD void face_coords(int f, int mu, int xmu, int parity, int x[4]) const {
    const int d0 = mu == 0 ? 1 : 0, d1 = mu <= 1 ? 2 : 1, d2 = mu <= 2 ? 3 : 2;
    const int half = l[d0] / 2;
    const int r = f / half;
    x[d1] = r % l[d1];
    x[d2] = r / l[d1];
    x[mu] = xmu;
    x[d0] = 2 * (f - r * half) + ((x[d1] + x[d2] + xmu + origin_parity() + parity) & 1);
  }

  // Checkerboard index of x + dir * mu-hat (dir = +1 or -1), wrapping locally; sets `crosses` when the hop
  // crosses the global boundary (where the fermion phase applies).
  EMPRISM_HD int neighbour(const int x[4], int mu, int dir, bool& crosses) const {
    int y[4] = {x[0], x[1], x[2], x[3]};
    y[mu] += dir;
    const int gy = origin[mu] + y[mu];
    crosses = static_cast<unsigned>(gy) >= static_cast<unsigned>(g[mu]);  // gy < 0 or gy >= g[mu]: one compare
    if (y[mu] < 0) y[mu] += l[mu];
    if (y[mu] >= l[mu]) y[mu] -= l[mu];
    return cb_index(y);
  }
};

}  // namespace emprism
