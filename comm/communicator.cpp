// communicator.cpp: MPI wrapper implementation (see communicator.hpp).
#include "comm/communicator.hpp"

namespace emprism {

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Communicator::sum(double* values, int n) {
  const double t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, comm_);
  reduction_s_ += MPI_Wtime() - t0;
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
