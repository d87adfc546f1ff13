// communicator.cpp: MPI wrapper implementation (see communicator.hpp).
#include "comm/communicator.hpp"

namespace emprism {

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Communicator::sum(double* values, int n) {
  const double t0 = MPI_Wtime();
  ++sums_;
  if (size_ > 1) {
    // Every rank's partial sums, added in rank order on every rank: bitwise the same result on all ranks and
    // in every run (MPI_Allreduce's order is up to the library). One collective per call.
    gathered_.resize(static_cast<std::size_t>(n) * size_);
    MPI_Allgather(values, n, MPI_DOUBLE, gathered_.data(), n, MPI_DOUBLE, comm_);
    for (int k = 0; k < n; ++k) {
      double s = 0;
      for (int r = 0; r < size_; ++r) s += gathered_[static_cast<std::size_t>(r) * n + k];
      values[k] = s;
    }
  }
  reduction_s_ += MPI_Wtime() - t0;
}

int Communicator::local_rank() const {
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

void Communicator::barrier() { MPI_Barrier(comm_); }

void Communicator::abort(int code) {
  MPI_Abort(comm_, code);
  std::abort();
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    MPI_Init(argc, argv);
    owner_ = true;
  }
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owner_ && !finalised) MPI_Finalize();
}

}  // namespace emprism
