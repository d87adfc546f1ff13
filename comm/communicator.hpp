// communicator.hpp: the MPI wrapper used by everything above comm/: rank/size, global sums in double
// (one MPI_Allreduce per call, so fused reductions cost one message), and a collective abort.
// No physics here. Who may call: collective calls (sum, barrier) on all ranks of the communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace emprism {

class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&&) = delete;
  // A communicator of the same ranks with its own message space (MPI_Comm_dup, collective), freed by the
  // destructor (unless MPI is finalised by then).
  Communicator duplicate() const;
  int rank() const { return rank_; }
  // Rank among the ranks of this node (MPI_COMM_TYPE_SHARED), for choosing this rank's GPU (collective).
  int local_rank() const;
  int local_size() const;  // ranks of this communicator on this node (shared memory)
  int size() const { return size_; }
  MPI_Comm handle() const { return comm_; }
  // In-place global sum of n doubles over all ranks (collective, deterministic: partials are added in rank
  // order). Time spent and calls are counted.
  void sum(double* values, int n);
  void barrier();
  // Any-rank failure: ends every rank (no hang). Does not return.
  [[noreturn]] void abort(int code);
  double reduction_seconds() const { return reduction_s_; }
  std::int64_t sum_calls() const { return sums_; }

 private:
  MPI_Comm comm_;
  bool owned_ = false;  // made by duplicate(): freed by the destructor
  int rank_ = 0, size_ = 1;
  double reduction_s_ = 0;
  std::int64_t sums_ = 0;
  std::vector<double> gathered_;
};

// Whether MPI_Init has been called, and MPI_Finalize (local).
bool mpi_initialised();
bool mpi_finalised();

// RAII MPI_Init/MPI_Finalize for main(); safe if MPI is already initialised.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owner_ = false;
};

}  // namespace emprism
