// host_halo.cpp: the host halo fill of host_halo.hpp (pack, MPI_Sendrecv with both neighbours (exchange_faces),
// unpack, direction by direction; or the periodic copy on the rank).
#include "comm/host_halo.hpp"

#include <mpi.h>

#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace emprism {

namespace {

// Calls f(x) for the sites of the slab x[k] = xk of the box [lo, hi) (hi exclusive) in the other directions, in
// index order (x[0] fastest).
template <typename F>
void for_slab(int dims, int k, int xk, const std::array<int, 4>& lo, const std::array<int, 4>& hi, F&& f) {
  int x[4] = {0, 0, 0, 0};
  for (int d = 0; d < dims; ++d) x[d] = lo[d];
  x[k] = xk;
  for (int d = 0; d < dims; ++d)
    if (d != k && lo[d] >= hi[d]) return;
  while (true) {
    f(x);
    int d = 0;
    for (; d < dims; ++d) {
      if (d == k) continue;
      if (++x[d] < hi[d]) break;
      x[d] = lo[d];
    }
    if (d == dims) return;
  }
}

}  // namespace

void exchange_faces(const void* low, const void* high, void* from_fwd, void* from_bwd, std::size_t bytes,
                    const ProcessGrid& grid, int k, int tag) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) throw std::length_error("host halo slab larger than 2 GiB");
  const int n = static_cast<int>(bytes);
  MPI_Sendrecv(low, n, MPI_BYTE, grid.bwd[k], tag + k, from_fwd, n, MPI_BYTE, grid.fwd[k], tag + k, grid.cart,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(high, n, MPI_BYTE, grid.fwd[k], tag + 10 + k, from_bwd, n, MPI_BYTE, grid.bwd[k], tag + 10 + k,
               grid.cart, MPI_STATUS_IGNORE);
}

void fill_host_halo(void* data, const HaloBox& box, const ProcessGrid* grid, int tag) {
  auto* base = static_cast<unsigned char*>(data);
  const std::size_t part = box.bytes != 0 ? box.bytes : box.site_bytes - box.offset;
  auto at = [&](const int* x) { return base + box.index(x) * box.site_bytes + box.offset; };
  std::vector<unsigned char> low, high, from_fwd, from_bwd;
  for (int k = 0; k < box.dims; ++k) {
    const int l = box.local[k];
    std::array<int, 4> lo{}, hi{};
    for (int d = 0; d < box.dims; ++d) {
      lo[d] = d < k ? -1 : 0;
      hi[d] = d < k ? box.local[d] + 1 : box.local[d];
    }
    if (grid == nullptr || grid->dims[k] == 1) {  // periodic wrap on the rank
      for_slab(box.dims, k, 0, lo, hi, [&](int* x) {
        const unsigned char* src = at(x);
        x[k] = l;
        std::memcpy(at(x), src, part);
        x[k] = 0;
      });
      for_slab(box.dims, k, l - 1, lo, hi, [&](int* x) {
        const unsigned char* src = at(x);
        x[k] = -1;
        std::memcpy(at(x), src, part);
        x[k] = l - 1;
      });
      continue;
    }
    auto pack = [&](int xk, std::vector<unsigned char>& buf) {
      buf.clear();
      for_slab(box.dims, k, xk, lo, hi, [&](int* x) { buf.insert(buf.end(), at(x), at(x) + part); });
    };
    auto unpack = [&](int xk, const std::vector<unsigned char>& buf) {
      std::size_t n = 0;
      for_slab(box.dims, k, xk, lo, hi, [&](int* x) {
        std::memcpy(at(x), buf.data() + n, part);
        n += part;
      });
    };
    pack(0, low);
    pack(l - 1, high);
    from_fwd.resize(low.size());
    from_bwd.resize(high.size());
    exchange_faces(low.data(), high.data(), from_fwd.data(), from_bwd.data(), low.size(), *grid, k, tag);
    unpack(l, from_fwd);
    unpack(-1, from_bwd);
  }
}

}  // namespace emprism
