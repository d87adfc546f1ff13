// gauge.hpp: the gauge field on the host in double precision (the source of truth from which the
// precision-specific GaugeField<R> and the clover term are built), its generators and observables.
// Layout as GaugeView: [parity][cb][mu] SU3<double>. Gauge fields are periodic (docs/conventions.md section 2).
// Sources: unit; random with width w in [0, 1]: U = P((1 - w) 1 + w H), H Haar-random SU(3) drawn from the
// counter-based RNG keyed by (seed, global site, mu), P the projection to SU(3) (Gram-Schmidt of rows 0, 1;
// row 2 = conj(row0 x row1)); w = 0 gives 1, w = 1 gives H exactly.
// Storage: the local block plus a one-site halo in every direction (edges and corners included: the clover
// leaves reach x +- mu +- nu), at(x, mu) valid for -1 <= x[nu] <= L[nu]. fill_halo() fills it from the
// neighbouring ranks (or by the periodic wrap where a direction is not split).
// Who may call: anyone on the rank; fill_halo and the global_* observables are collective over the grid.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/su3.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/geometry.hpp"

namespace emprism {

// Elements default-initialised, i.e. left as they are for trivial types (the constructors of HostGauge decide who
// touches the memory first: a zero fill over OpenMP threads, or a copy from the device).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

class HostGauge {
 public:
  using Storage = std::vector<SU3<double>, DefaultInitAllocator<SU3<double>>>;
  struct Uninitialised {};
  // All links zero (filled over OpenMP threads).
  explicit HostGauge(const Geometry& g);
  // Links not initialised: for a generator that writes every one of them, halo included.
  HostGauge(const Geometry& g, Uninitialised);
  const Geometry& geometry() const { return *geom_; }
  // Link U_mu(x) at local coordinates x, -1 <= x[nu] <= L[nu] (the halo once filled).
  const SU3<double>& at(const int x[4], int mu) const { return links_[offset(x, mu)]; }
  SU3<double>& at(const int x[4], int mu) { return links_[offset(x, mu)]; }
  // Fills the halo: from the neighbours of `grid` in directions it splits over ranks (collective over the
  // grid), by the periodic wrap in the others. grid = nullptr: periodic wrap everywhere (one rank).
  void fill_halo(const ProcessGrid* grid = nullptr);
  // The same for the links of direction mu only (a quarter of the data; the heatbath after each block update).
  void fill_link_halo(int mu, const ProcessGrid* grid = nullptr);
  // The links with their halo as stored, [halo_index(x)][mu] (the device set-up copies them as one block).
  const Storage& storage() const { return links_; }
  Storage& storage() { return links_; }

 private:
  std::size_t offset(const int x[4], int mu) const { return geom_->halo_index(x) * 4 + static_cast<std::size_t>(mu); }
  const Geometry* geom_;
  Storage links_;
};

HostGauge make_unit_gauge(const Geometry& g);
HostGauge make_random_gauge(const Geometry& g, std::uint64_t seed, double width);

// Haar-random SU(3) from 18 standard normals (Gram-Schmidt of a complex Gaussian matrix).
SU3<double> haar_su3_from_gaussians(const double gauss[18]);
// Projects a non-singular 3x3 matrix to SU(3) (rows 0, 1 orthonormalised, row 2 = conj(row0 x row1)).
SU3<double> project_su3(const SU3<double>& m);
// max |U U^dag - 1| and |det U - 1| for the SU(3) checks; +infinity when an entry of u is NaN or infinite (so a
// check `dev <= tol` fails for it).
double unitarity_deviation(const SU3<double>& u);

// Average over sites and the 6 planes of Re tr P_{mu nu}(x) / 3 (needs the forward halo); with a
// communicator, over the global lattice (collective), else over the local block.
double plaquette(const HostGauge& u, Communicator* comm = nullptr);
// Average over sites and directions of Re tr U_mu(x) / 3 (the sites added in ordered_sum's fixed blocks).
double link_trace(const HostGauge& u, Communicator* comm = nullptr);

// The precision-specific device copy.
template <typename R>
void upload_gauge(const HostGauge& host, GaugeField<R>& dev);

// Natural order [t][z][y][x][mu][row][col] of the local volume, for output and tests (from_natural fills
// the halo by the periodic wrap).
std::vector<std::complex<double>> gauge_to_natural(const HostGauge& u);
void gauge_from_natural(const std::vector<std::complex<double>>& nat, HostGauge& u);

}  // namespace emprism
