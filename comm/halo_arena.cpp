// halo_arena.cpp: receive buffers the neighbours on the node can map (see halo_arena.hpp).
#include "comm/halo_arena.hpp"

#include <cstring>
#include <exception>

namespace emprism {
namespace {

// What a rank hands its neighbours in one direction (GPU): its arena and its two events of that direction.
struct Handles {
  backend::IpcHandle memory;
  backend::IpcHandle event[2];
};

constexpr int kTagHandles = 100;

}  // namespace

HaloArena::HaloArena(MPI_Comm comm, const ProcessGrid& grid, std::size_t bytes, const std::array<bool, 4>& want)
    : comm_(comm), bytes_(bytes) {
  MPI_Comm_rank(comm_, &rank_);
  std::array<bool, 4> remote{};  // wanted directions whose neighbours are other ranks (the same on every rank)
  for (int mu = 0; mu < 4; ++mu)
    remote[mu] = want[mu] && grid.partitioned[mu] && !(grid.fwd[mu] == rank_ && grid.bwd[mu] == rank_);
  if (backend::device_is_host())
    map_host(grid, remote);
  else
    map_gpu(grid, remote);
  for (int mu = 0; mu < 4; ++mu)
    if (grid.partitioned[mu] && grid.fwd[mu] == rank_ && grid.bwd[mu] == rank_) remote_[mu] = {local_, local_};
  agree(grid, want);
}

void HaloArena::map_gpu(const ProcessGrid& grid, const std::array<bool, 4>& remote) {
  local_ = static_cast<std::byte*>(backend::device_alloc(bytes_));
  backend::device_zero(local_, bytes_);
  backend::synchronize();  // zeroed before anyone else (a neighbour, a GPU-aware MPI) may write it
  for (int mu = 0; mu < 4; ++mu) {
    if (!remote[mu]) continue;
    exported_ = true;
    for (int p = 0; p < 2; ++p) own_events_[mu][p] = backend::create_event(backend::EventKind::Interprocess);
    const Handles mine{backend::ipc_export_memory(local_),
                       {backend::ipc_export_event(own_events_[mu][0]), backend::ipc_export_event(own_events_[mu][1])}};
    Handles got[2];  // [side]: from the backward and the forward neighbour
    const int n = static_cast<int>(sizeof(Handles));
    MPI_Sendrecv(&mine, n, MPI_BYTE, grid.fwd[mu], kTagHandles + 2 * mu, &got[0], n, MPI_BYTE, grid.bwd[mu],
                 kTagHandles + 2 * mu, comm_, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&mine, n, MPI_BYTE, grid.bwd[mu], kTagHandles + 2 * mu + 1, &got[1], n, MPI_BYTE, grid.fwd[mu],
                 kTagHandles + 2 * mu + 1, comm_, MPI_STATUS_IGNORE);
    for (int side = 0; side < 2; ++side) {
      const int r = side ? grid.fwd[mu] : grid.bwd[mu];
      std::string error;
      auto it = opened_.find(r);
      if (it == opened_.end()) {
        void* p = backend::ipc_open_memory(got[side].memory, &error);
        if (p == nullptr) {
          if (failure_.empty()) failure_ = "rank " + std::to_string(r) + ": " + error;
          continue;
        }
        it = opened_.emplace(r, static_cast<std::byte*>(p)).first;
      }
      bool ok = true;
      for (int p = 0; p < 2; ++p) {
        const std::pair<int, int> key{r, 2 * mu + p};
        auto ev = opened_events_.find(key);
        if (ev == opened_events_.end()) {
          const backend::Event e = backend::ipc_open_event(got[side].event[p], &error);
          if (e.h == nullptr) {
            if (failure_.empty()) failure_ = "rank " + std::to_string(r) + ": " + error;
            ok = false;
            break;
          }
          ev = opened_events_.emplace(key, e).first;
        }
        remote_events_[mu][side][p] = ev->second;
      }
      if (ok) remote_[mu][side] = it->second;
    }
  }
}

void HaloArena::map_host(const ProcessGrid& grid, const std::array<bool, 4>& remote) {
  if (!(remote[0] || remote[1] || remote[2] || remote[3])) {
    local_ = static_cast<std::byte*>(backend::device_alloc(bytes_));
    backend::device_zero(local_, bytes_);
    return;
  }
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  void* base = nullptr;
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes_), 1, MPI_INFO_NULL, node, &base, &win_);
  local_ = static_cast<std::byte*>(base);
  std::memset(local_, 0, bytes_);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  MPI_Group all, on_node;
  MPI_Comm_group(comm_, &all);
  MPI_Comm_group(node, &on_node);
  for (int mu = 0; mu < 4; ++mu) {
    if (!remote[mu]) continue;
    for (int p = 0; p < 2; ++p) {  // host timestamps: recorded for the statistics, waiting on them is a no-op
      own_events_[mu][p] = backend::create_event(backend::EventKind::Sync);
      remote_events_[mu][0][p] = remote_events_[mu][1][p] = own_events_[mu][p];
    }
    for (int side = 0; side < 2; ++side) {
      int r = side ? grid.fwd[mu] : grid.bwd[mu], node_rank = MPI_UNDEFINED;
      MPI_Group_translate_ranks(all, 1, &r, on_node, &node_rank);
      if (node_rank == MPI_UNDEFINED) {
        if (failure_.empty()) failure_ = "rank " + std::to_string(r) + " is on another node";
        continue;
      }
      MPI_Aint size = 0;
      int disp = 0;
      void* p = nullptr;
      MPI_Win_shared_query(win_, node_rank, &size, &disp, &p);
      remote_[mu][side] = static_cast<std::byte*>(p);
    }
  }
  MPI_Group_free(&all);
  MPI_Group_free(&on_node);
  MPI_Comm_free(&node);
  MPI_Win_sync(win_);  // the zeroed memory, before any neighbour writes
  MPI_Barrier(comm_);
}

void HaloArena::agree(const ProcessGrid& grid, const std::array<bool, 4>& want) {
  int ok[4];
  for (int mu = 0; mu < 4; ++mu)
    ok[mu] = grid.partitioned[mu] && want[mu] && remote_[mu][0] != nullptr && remote_[mu][1] != nullptr;
  MPI_Allreduce(MPI_IN_PLACE, ok, 4, MPI_INT, MPI_LAND, comm_);
  for (int mu = 0; mu < 4; ++mu) mapped_[mu] = ok[mu] != 0;
}

void HaloArena::sync() const {
  if (win_ != MPI_WIN_NULL) MPI_Win_sync(win_);
}

HaloArena::~HaloArena() {
  const bool unwinding = std::uncaught_exceptions() > 0;
  if (exported_) {  // GPU: neighbours hold our memory and events; they close them before we free them
    if (!unwinding) backend::synchronize();
    for (auto& [key, e] : opened_events_) backend::destroy_event(e);
    for (auto& [r, p] : opened_) backend::ipc_close_memory(p);
    if (unwinding) return;  // leak what the neighbours may still use: the run is ending
    MPI_Barrier(comm_);
  }
  for (auto& pair : own_events_)
    for (backend::Event e : pair) backend::destroy_event(e);
  if (win_ != MPI_WIN_NULL) {
    if (unwinding) return;  // MPI_Win_free is collective over the node
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    return;
  }
  backend::device_free(local_);
}

}  // namespace emprism
