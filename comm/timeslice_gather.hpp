// timeslice_gather.hpp: moves a lattice field distributed in blocks over the ranks to rank 0, one global timeslice
// at a time (the output through one process of io/h5's gather mode: rank 0 never holds more than one timeslice of
// another rank's data).
// Convention: a block is the part of the global lattice (x, y, z, t) one rank holds: local extents and the global
// coordinates of its first site; the blocks of all ranks tile the lattice as a grid. A timeslice of a block is its
// local[0] * local[1] * local[2] sites in local natural order (x fastest); a global timeslice is [Lz][Ly][Lx].
// Messages carry `site_bytes` bytes per site; rank r's timeslices arrive in the order they are sent.
// Who may call: every rank of the communicator (collective in effect): a rank other than 0 calls send() once per
// timeslice of its block, in increasing t; rank 0 calls receive() for every t = 0 .. Lt - 1 in turn.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"

namespace emprism {

struct LatticeBlock {
  std::array<int, 4> global{}, local{}, origin{};
  bool holds_t(int t) const { return origin[3] <= t && t < origin[3] + local[3]; }
  std::int64_t slice_sites() const { return std::int64_t(local[0]) * local[1] * local[2]; }
};

class TimesliceGather {
 public:
  // blocks: every rank's block in rank order (the same on every rank).
  TimesliceGather(Communicator& comm, const std::vector<LatticeBlock>& blocks, std::size_t site_bytes, int tag);
  ~TimesliceGather();
  TimesliceGather(const TimesliceGather&) = delete;
  TimesliceGather& operator=(const TimesliceGather&) = delete;

  // Ranks other than 0: sends the next timeslice of this rank's block (slice_sites() sites) to rank 0 (blocking).
  void send(const void* sites);
  // Rank 0: starts receiving global timeslice t from every other rank whose block holds it, each block's sites
  // placed where they belong in `slice` (a whole global timeslice of site_bytes per site); rank 0's own part is
  // left to the caller. finish() waits until they have arrived.
  void start(int t, void* slice);
  void finish();

 private:
  Communicator& comm_;
  std::vector<LatticeBlock> blocks_;
  int tag_;
  MPI_Datatype site_ = MPI_DATATYPE_NULL;  // one site: site_bytes bytes
  std::vector<MPI_Datatype> place_;        // rank 0: per rank, its timeslice placed in the global timeslice
  std::vector<MPI_Request> requests_;      // rank 0: the pending receives
};

}  // namespace emprism
