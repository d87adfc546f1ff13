// geometry.cpp: Geometry construction and host index helpers (see geometry.hpp).
#include "src/lattice/geometry.hpp"

#include <string>

#include "kernels/errors.hpp"
#include "kernels/views.hpp"

namespace emprism {

Geometry::Geometry(const Extents& global, const Extents& local, const Extents& origin,
                   const std::array<bool, 4>& partitioned)
    : global_(global), local_(local), origin_(origin), volume_(1), arg_{} {
  static const char* kNames[4] = {"Lx", "Ly", "Lz", "Lt"};
  for (int mu = 0; mu < 4; ++mu) {
    if (global[mu] < 2 || global[mu] % 2 != 0)
      throw InputError("lattice.extents: " + std::string(kNames[mu]) + " = " + std::to_string(global[mu]) +
                       " must be even and >= 2");
    if (local[mu] < 2 || local[mu] % 2 != 0)
      throw InputError("lattice.extents: local " + std::string(kNames[mu]) + " = " + std::to_string(local[mu]) +
                       " must be even and >= 2");
    volume_ *= local[mu];
    arg_.l[mu] = local[mu];
    arg_.g[mu] = global[mu];
    arg_.origin[mu] = origin[mu];
    arg_.partitioned[mu] = partitioned[mu] ? 1 : 0;
  }
  if (volume_ / 2 > kMaxParitySites)
    throw InputError("lattice.extents: local volume " + std::to_string(volume_) + " too large: at most " +
                     std::to_string(2 * kMaxParitySites) + " sites per rank (32-bit site indices)");
  arg_.vh = static_cast<int>(volume_ / 2);
  arg_.set_divisors();
}

std::int64_t Geometry::global_volume() const { return std::int64_t(global_[0]) * global_[1] * global_[2] * global_[3]; }

std::vector<int> Geometry::boundary_sites(int parity) const {
  std::vector<int> sites;
  for (int cb = 0; cb < arg_.vh; ++cb) {
    int x[4];
    arg_.coords(cb, parity, x);
    if (arg_.on_boundary(x)) sites.push_back(cb);
  }
  return sites;
}

void Geometry::local_coords(std::int64_t lex, int x[4]) const {
  for (int mu = 0; mu < 4; ++mu) {
    x[mu] = static_cast<int>(lex % local_[mu]);
    lex /= local_[mu];
  }
}

std::int64_t Geometry::global_lex(const int x[4]) const {
  std::int64_t idx = 0;
  for (int mu = 3; mu >= 0; --mu) idx = idx * global_[mu] + (origin_[mu] + x[mu]);
  return idx;
}

}  // namespace emprism
