// communicator.cpp: MPI wrapper implementation (see communicator.hpp).
#include "comm/communicator.hpp"

#include <utility>

namespace emprism {

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator::~Communicator() {
  if (owned_ && comm_ != MPI_COMM_NULL && !mpi_finalised()) MPI_Comm_free(&comm_);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(other.comm_),
      owned_(other.owned_),
      rank_(other.rank_),
      size_(other.size_),
      reduction_s_(other.reduction_s_),
      gathered_(std::move(other.gathered_)) {
  other.owned_ = false;
}

Communicator Communicator::duplicate() const {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(comm_, &dup);
  Communicator c(dup);
  c.owned_ = true;
  return c;
}

bool mpi_initialised() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

bool mpi_finalised() {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag != 0;
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

namespace {

// This rank's rank and the number of ranks among those of `comm` on this node (MPI_COMM_TYPE_SHARED). Collective.
std::pair<int, int> node_rank_and_size(MPI_Comm comm, int rank) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int r = 0, n = 1;
  MPI_Comm_rank(node, &r);
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return {r, n};
}

}  // namespace

int Communicator::local_rank() const { return node_rank_and_size(comm_, rank_).first; }

int Communicator::local_size() const { return node_rank_and_size(comm_, rank_).second; }

void Communicator::barrier() { MPI_Barrier(comm_); }

void Communicator::abort(int code) {
  MPI_Abort(comm_, code);
  std::abort();
}

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!mpi_initialised()) {
    MPI_Init(argc, argv);
    owner_ = true;
  }
}

MpiSession::~MpiSession() {
  if (owner_ && !mpi_finalised()) MPI_Finalize();
}

}  // namespace emprism
