// host_halo.hpp: the one host halo fill: the one-site halo of a host array over this rank's block, filled from the
// neighbouring ranks of the process grid, or by the periodic wrap in directions the grid does not split. Used by the
// host gauge field (the four links of every site), the heatbath (the links of one direction; on the device through
// exchange_faces) and the source smearing (the links and the field of one timeslice, in x, y and z).
// Layout (HaloBox): the local block of extents local[0..dims-1] plus a one-site halo in each of its `dims`
// directions, x fastest: the site x with -1 <= x[k] <= local[k] has index
//   sum_k (x[k] + 1) prod_{j < k} (local[j] + 2),
// and each site holds `site_bytes` bytes, of which the bytes [offset, offset + bytes) are exchanged.
// Order: direction 0, 1, ... in turn; the slabs of direction k span the halo of the directions before k, so edges
// and corners (needed by clover leaves and staples) arrive through two or more hops.
// Who may call: fill_host_halo is collective over the ranks of grid->cart that are neighbours in the `dims`
// directions (all ranks for a 4-D box; for a timeslice box, the ranks holding that timeslice); the rest is local.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "comm/process_grid.hpp"

namespace emprism {

struct HaloBox {
  int dims = 4;                // 4 (x, y, z, t) or 3 (x, y, z of a timeslice)
  std::array<int, 4> local{};  // extents of the block (local[3] unused when dims == 3)
  std::size_t site_bytes = 0;  // bytes per site of the array
  std::size_t offset = 0;      // first byte of a site that is exchanged
  std::size_t bytes = 0;       // bytes of a site exchanged (0: site_bytes - offset)

  // Index of the site x (dims coordinates, -1 <= x[k] <= local[k]) in the extended box.
  std::size_t index(const int* x) const {
    std::size_t i = 0;
    for (int k = dims - 1; k >= 0; --k)
      i = i * static_cast<std::size_t>(local[k] + 2) + static_cast<std::size_t>(x[k] + 1);
    return i;
  }
  // Number of sites of the extended box.
  std::size_t sites() const {
    std::size_t n = 1;
    for (int k = 0; k < dims; ++k) n *= static_cast<std::size_t>(local[k] + 2);
    return n;
  }
};

// Fills the halo of `data` (box.sites() * box.site_bytes bytes) in every direction k < box.dims: from the
// neighbours grid->fwd[k], grid->bwd[k] in grid->cart where grid->dims[k] > 1 (MPI_Sendrecv, tags tag + k and
// tag + 10 + k), by the periodic wrap where grid->dims[k] == 1 or grid == nullptr.
void fill_host_halo(void* data, const HaloBox& box, const ProcessGrid* grid, int tag);

// The exchange of fill_host_halo's pass k for faces packed elsewhere (the device heatbath packs them on the GPU):
// `low` (the face x[k] = 0, `bytes` long) goes to grid.bwd[k] and `from_fwd` receives grid.fwd[k]'s (tag + k), `high`
// (x[k] = l - 1) to grid.fwd[k] and `from_bwd` receives grid.bwd[k]'s (tag + 10 + k). Host memory; bytes < 2 GiB
// (std::length_error otherwise). Collective over the neighbours in direction k.
void exchange_faces(const void* low, const void* high, void* from_fwd, void* from_bwd, std::size_t bytes,
                    const ProcessGrid& grid, int k, int tag);

}  // namespace emprism
