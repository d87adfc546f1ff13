// halo_exchange.hpp: non-blocking exchange of face buffers with the neighbours of the process grid, for every
// partitioned direction (comm/ holds no physics: buffers are bytes). For direction mu,
//   send_bwd[mu] -> backward neighbour, where it arrives in recv_fwd[mu]   (tag 2 mu)
//   send_fwd[mu] -> forward neighbour, where it arrives in recv_bwd[mu]    (tag 2 mu + 1)
// A direction forced on one rank sends to itself. start() posts all receives and sends and returns at once;
// wait() completes them. Timing: wait_seconds (time blocked in wait, i.e. not hidden behind compute) and
// exchange_seconds (start to completion) give the hidden fraction 1 - wait / exchange.
// Who may call: all ranks of the grid, in the same order (collective in effect).
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

#include "comm/process_grid.hpp"

namespace emprism {

class HaloExchanger {
 public:
  explicit HaloExchanger(const ProcessGrid& grid);
  void start(const std::array<const void*, 4>& send_bwd, const std::array<const void*, 4>& send_fwd,
             const std::array<void*, 4>& recv_fwd, const std::array<void*, 4>& recv_bwd,
             const std::array<std::size_t, 4>& bytes);
  // Progresses the transfers (MPI_Testall); true once all have completed. Call while the device computes.
  bool test();
  void wait();
  double wait_seconds() const { return wait_s_; }
  double exchange_seconds() const { return exchange_s_; }
  std::size_t bytes_sent() const { return bytes_sent_; }

 private:
  ProcessGrid grid_;
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  double t_start_ = 0, wait_s_ = 0, exchange_s_ = 0;
  std::size_t bytes_sent_ = 0;
};

}  // namespace emprism
