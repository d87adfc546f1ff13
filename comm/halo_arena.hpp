// halo_arena.hpp: the receive buffers of the halo exchange, one allocation per rank, which the neighbours on
// the same node may write into directly (the peer transport; comm/halo_transport.hpp).
//   GPU backends: device memory (cudaMalloc/hipMalloc), exported to the neighbours through IPC memory handles,
//     with one interprocess event per direction and round parity that this rank records after it wrote its
//     faces into a neighbour's arena; handles are exchanged once, here, through MPI.
//   CPU backend: an MPI shared-memory window over the node (MPI_Win_allocate_shared) when a neighbour maps it,
//     plain host memory otherwise; sync() is MPI_Win_sync (the memory model of the unified window). Events are
//     the host timestamps of runtime_cpu.cpp; waiting on them is a no-op (kernels are synchronous there).
// mapped()[mu] is agreed over all ranks: true when every rank mapped both its neighbours in mu (or is its own
// neighbour). A direction that cannot be mapped (another node, a failed IPC open) is simply not mapped: the
// transport falls back to MPI there. The arena's memory is zeroed.
// Who may call: the constructor and the destructor are collective over `comm` (when anything is mapped the
// destructor waits for the device and for every rank, so no neighbour still writes into freed memory; while an
// exception unwinds it frees only what is local and leaks the rest, so a failing rank cannot hang in it).
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include "comm/process_grid.hpp"
#include "kernels/backend/runtime.hpp"

namespace emprism {

class HaloArena {
 public:
  // want[mu]: directions whose neighbours may map this arena (node-local and partitioned).
  HaloArena(MPI_Comm comm, const ProcessGrid& grid, std::size_t bytes, const std::array<bool, 4>& want);
  ~HaloArena();
  HaloArena(const HaloArena&) = delete;
  HaloArena& operator=(const HaloArena&) = delete;

  std::byte* local() const { return local_; }
  // The arena of the neighbour in mu (side 0: backward, 1: forward); this rank's own when it is that neighbour;
  // null where not mapped.
  std::byte* neighbour(int mu, int side) const { return remote_[mu][side]; }
  // The event this rank records after its pack kernel of direction mu in round parity p wrote the neighbours'
  // arenas, and the neighbour's event of the same kind (what this rank's stream waits on before reading).
  backend::Event own_event(int mu, int p) const { return own_events_[mu][p]; }
  backend::Event neighbour_event(int mu, int side, int p) const { return remote_events_[mu][side][p]; }
  const std::array<bool, 4>& mapped() const { return mapped_; }
  // The first reason a direction could not be mapped ("" when all wanted ones are).
  const std::string& failure() const { return failure_; }
  // CPU shared window: makes this rank's stores visible to the neighbours and theirs to this rank (both sides
  // call it around the MPI message that orders them). A no-op otherwise.
  void sync() const;

 private:
  void map_gpu(const ProcessGrid& grid, const std::array<bool, 4>& remote);
  void map_host(const ProcessGrid& grid, const std::array<bool, 4>& remote);
  void agree(const ProcessGrid& grid, const std::array<bool, 4>& want);

  MPI_Comm comm_;
  int rank_ = 0;
  std::size_t bytes_ = 0;
  std::byte* local_ = nullptr;
  bool exported_ = false;  // GPU: neighbours hold handles to local_ and own_events_
  MPI_Win win_ = MPI_WIN_NULL;
  std::array<std::array<std::byte*, 2>, 4> remote_{};
  std::array<std::array<backend::Event, 2>, 4> own_events_{};
  std::array<std::array<std::array<backend::Event, 2>, 2>, 4> remote_events_{};
  std::map<int, std::byte*> opened_;                             // GPU: neighbour rank -> its arena, opened once
  std::map<std::pair<int, int>, backend::Event> opened_events_;  // (rank, mu * 2 + p) -> its event
  std::array<bool, 4> mapped_{};
  std::string failure_;
};

}  // namespace emprism
