// openqcd_writer.hpp: a small writer of openQCD gauge configurations for the tests (tests/*.cpp, tests/mpi), written
// from the format's specification (openQCD's export_cnfg() in modules/archive/archive.c and main/README.io),
// independently of io/gauge's reader, so that the reader can be checked against it. The byte writers (explicit byte
// order, independent of the host) are shared with the MILC writer of test_gauge_openqcd_milc.cpp.
// Format: little-endian; int32 N0..N3 (N0 = time), double average plaquette (sum of Re tr U_p over all plaquettes
// / (6 V), 3 for U = 1), then for each odd point x, x0 (time) slowest .. x3 (z) fastest, the 8 links U(x, 0),
// U(x - 0, 0), ..., U(x, 3), U(x - 3, 3), each 3x3 complex {re, im} row-major; openQCD direction 0 = t, 1..3 = x,
// y, z (docs/conventions.md s. 1, 2). test_gauge_openqcd_milc.cpp's WriterFollowsOpenQcdOrder pins it.
// Who may call: tests only; rank-local (the field must hold the whole lattice: local = global).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "src/lattice/gauge.hpp"

namespace emprism::test {

using Bytes = std::vector<unsigned char>;

inline void put_u32(Bytes& b, std::uint32_t v, bool big) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(v >> (big ? 24 - 8 * i : 8 * i)));
}
inline void put_u64(Bytes& b, std::uint64_t v, bool big) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(v >> (big ? 56 - 8 * i : 8 * i)));
}
inline void put_double(Bytes& b, double d, bool big) {
  std::uint64_t v;
  std::memcpy(&v, &d, 8);
  put_u64(b, v, big);
}

// Link U_mu at global coordinates (x, y, z, t) of a field holding the whole lattice, wrapped periodically.
inline const SU3<double>& link_at(const HostGauge& u, int x, int y, int z, int t, int mu) {
  const Extents& L = u.geometry().global();
  const int c[4] = {(x % L[0] + L[0]) % L[0], (y % L[1] + L[1]) % L[1], (z % L[2] + L[2]) % L[2],
                    (t % L[3] + L[3]) % L[3]};
  return u.at(c, mu);
}

// The openQCD file of u (the whole lattice) with header plaquette header_plaq (openQCD's normalisation).
inline Bytes openqcd_bytes(const HostGauge& u, double header_plaq) {
  const Extents& L = u.geometry().global();
  const int n[4] = {L[3], L[0], L[1], L[2]};
  const int ours[4] = {3, 0, 1, 2};  // openQCD direction -> our mu
  Bytes b;
  for (int i = 0; i < 4; ++i) put_u32(b, static_cast<std::uint32_t>(n[i]), false);
  put_double(b, header_plaq, false);
  int x[4];  // openQCD coordinates (x0 = t, x1 = x, x2 = y, x3 = z)
  for (x[0] = 0; x[0] < n[0]; ++x[0])
    for (x[1] = 0; x[1] < n[1]; ++x[1])
      for (x[2] = 0; x[2] < n[2]; ++x[2])
        for (x[3] = 0; x[3] < n[3]; ++x[3]) {
          if ((x[0] + x[1] + x[2] + x[3]) % 2 == 0) continue;
          for (int oq = 0; oq < 4; ++oq) {
            int back[4] = {x[0], x[1], x[2], x[3]};
            back[oq] -= 1;
            const SU3<double>& fwd = link_at(u, x[1], x[2], x[3], x[0], ours[oq]);
            const SU3<double>& bwd = link_at(u, back[1], back[2], back[3], back[0], ours[oq]);
            for (const SU3<double>* m : {&fwd, &bwd})
              for (int a = 0; a < 3; ++a)
                for (int c = 0; c < 3; ++c) {
                  put_double(b, m->e[a][c].re, false);
                  put_double(b, m->e[a][c].im, false);
                }
          }
        }
  return b;
}

}  // namespace emprism::test
