// geometry.hpp: the one object that owns lattice index arithmetic on a rank: global and local extents,
// the local origin, even-odd indexing (through LatticeArg) and the local natural order used for host I/O.
// Convention: docs/conventions.md section 1 (x fastest, global parity, cb = local lex / 2).
// Who may call: anyone; no MPI here (comm/ decides the decomposition).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/lattice_arg.hpp"

namespace emprism {

using Extents = std::array<int, 4>;

class Geometry {
 public:
  // Throws InputError naming lattice.extents for odd or non-positive local extents. `partitioned` marks the
  // directions whose hops across the local boundary go through the halo exchange.
  Geometry(const Extents& global, const Extents& local, const Extents& origin,
           const std::array<bool, 4>& partitioned = {false, false, false, false});
  static Geometry single_rank(const Extents& global) { return Geometry(global, global, {0, 0, 0, 0}); }

  const Extents& global() const { return global_; }
  const Extents& local() const { return local_; }
  const Extents& origin() const { return origin_; }
  std::int64_t local_volume() const { return volume_; }
  std::int64_t global_volume() const;
  int half_volume() const { return static_cast<int>(volume_ / 2); }
  const LatticeArg& arg() const { return arg_; }
  bool partitioned(int mu) const { return arg_.partitioned[mu] != 0; }
  bool any_partitioned() const { return partitioned(0) || partitioned(1) || partitioned(2) || partitioned(3); }
  // Checkerboard indices of the sites of a parity with a hop leaving the rank, ascending.
  std::vector<int> boundary_sites(int parity) const;

  // Local lexicographic index of local coordinates, and back.
  std::int64_t local_lex(const int x[4]) const {
    return x[0] + std::int64_t(local_[0]) * (x[1] + std::int64_t(local_[1]) * (x[2] + std::int64_t(local_[2]) * x[3]));
  }
  void local_coords(std::int64_t lex, int x[4]) const;
  // Global parity of a local site.
  int parity(const int x[4]) const { return (x[0] + x[1] + x[2] + x[3] + arg_.origin_parity()) & 1; }
  int cb_index(const int x[4]) const { return arg_.cb_index(x); }
  // Global natural index of a local site.
  std::int64_t global_lex(const int x[4]) const;

 private:
  Extents global_, local_, origin_;
  std::int64_t volume_;
  LatticeArg arg_;
};

}  // namespace emprism
