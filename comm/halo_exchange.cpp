// halo_exchange.cpp: non-blocking face exchange (see halo_exchange.hpp).
#include "comm/halo_exchange.hpp"

#include <limits>
#include <stdexcept>

namespace emprism {

HaloExchanger::HaloExchanger(const ProcessGrid& grid)
    : grid_(grid), comm_(grid.cart != MPI_COMM_NULL ? grid.cart : MPI_COMM_WORLD) {}

void HaloExchanger::start(const std::array<const void*, 4>& send_bwd, const std::array<const void*, 4>& send_fwd,
                          const std::array<void*, 4>& recv_fwd, const std::array<void*, 4>& recv_bwd,
                          const std::array<std::size_t, 4>& bytes) {
  requests_.clear();
  t_start_ = MPI_Wtime();
  for (int mu = 0; mu < 4; ++mu) {
    if (!grid_.partitioned[mu]) continue;
    if (bytes[mu] > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::runtime_error("halo face larger than 2 GiB");
    const int n = static_cast<int>(bytes[mu]);
    MPI_Request r[4];
    MPI_Irecv(recv_fwd[mu], n, MPI_BYTE, grid_.fwd[mu], 2 * mu, comm_, &r[0]);
    MPI_Irecv(recv_bwd[mu], n, MPI_BYTE, grid_.bwd[mu], 2 * mu + 1, comm_, &r[1]);
    MPI_Isend(send_bwd[mu], n, MPI_BYTE, grid_.bwd[mu], 2 * mu, comm_, &r[2]);
    MPI_Isend(send_fwd[mu], n, MPI_BYTE, grid_.fwd[mu], 2 * mu + 1, comm_, &r[3]);
    requests_.insert(requests_.end(), r, r + 4);
    bytes_sent_ += 2 * bytes[mu];
  }
}

bool HaloExchanger::test() {
  if (requests_.empty()) return true;
  int done = 0;
  MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  if (done) requests_.clear();
  return done != 0;
}

void HaloExchanger::wait() {
  const double t0 = MPI_Wtime();
  if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  const double t1 = MPI_Wtime();
  wait_s_ += t1 - t0;
  exchange_s_ += t1 - t_start_;
  requests_.clear();
}

}  // namespace emprism
