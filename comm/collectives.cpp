// collectives.cpp: the collective operations of collectives.hpp over MPI (the only place besides the other comm/
// files that calls MPI).
#include "comm/collectives.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <utility>

namespace emprism {

namespace {

int checked_count(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX)) throw std::length_error(std::string(what) + ": more than 2^31 - 1 bytes");
  return static_cast<int>(n);
}

}  // namespace

namespace {

FaultReporter& fault_reporter() {
  static FaultReporter reporter;
  return reporter;
}

// The agreement on the lowest failing rank (one non-blocking MPI_Allreduce). A rank that failed waits at most
// kFaultAgreementSeconds for the others: when they do not come, they are stuck in a collective call of a library
// (MPI-IO, HDF5) that this rank left, and only ending the job frees them.
int agree_on_first(Communicator& comm, bool failed, const std::string& message) {
  int first = failed ? comm.rank() : comm.size();
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm.handle(), &request);
  if (!failed) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return first;
  }
  const double wait_s = fault_agreement_seconds();
  const double deadline = MPI_Wtime() + wait_s;
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return first;
    if (MPI_Wtime() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string line = message +
                           (comm.rank() != 0 ? " (on rank " + std::to_string(comm.rank()) + ")" : std::string()) +
                           "; the other ranks did not respond within " + std::to_string(static_cast<int>(wait_s)) +
                           " s (stuck in a collective I/O call): ending the job";
  if (fault_reporter()) fault_reporter()(line);
  comm.abort(1);
}

}  // namespace

void set_fault_reporter(FaultReporter reporter) { fault_reporter() = std::move(reporter); }

double fault_agreement_seconds() {
  static const double seconds = [] {
    const char* v = std::getenv("EMPRISM_FAULT_AGREEMENT_S");
    const double s = v != nullptr ? std::atof(v) : 0.0;
    return s > 0 ? s : kFaultAgreementSeconds;
  }();
  return seconds;
}

int first_failing_rank(Communicator& comm, bool failed, const std::string& message) {
  return agree_on_first(comm, failed, message);
}

std::optional<RankFailure> first_failure(Communicator& comm, int kind, const std::string& message) {
  const int first = agree_on_first(comm, kind != 0, message);
  if (first == comm.size()) return std::nullopt;
  int head[2] = {kind, static_cast<int>(std::min<std::size_t>(message.size(), INT_MAX))};
  MPI_Bcast(head, 2, MPI_INT, first, comm.handle());
  RankFailure f;
  f.rank = first;
  f.kind = head[0];
  f.message = comm.rank() == first ? message : std::string();
  f.message.resize(static_cast<std::size_t>(head[1]));
  MPI_Bcast(f.message.data(), head[1], MPI_CHAR, first, comm.handle());
  return f;
}

void throw_first_failure(Communicator& comm, int kind, const std::string& message, bool name_rank) {
  const auto failure = first_failure(comm, kind, message);
  if (!failure) return;
  std::string text = failure->message;
  if (name_rank && failure->rank != 0) text += " (on rank " + std::to_string(failure->rank) + ")";
  if (failure->kind == 2) throw AgreedInputError(text);
  throw AgreedRuntimeFailure(text);
}

void broadcast_bytes(Communicator& comm, void* data, std::size_t bytes, int root) {
  MPI_Bcast(data, checked_count(bytes, "broadcast"), MPI_BYTE, root, comm.handle());
}

void broadcast(Communicator& comm, std::string& text, int root) {
  std::uint64_t n = text.size();
  broadcast(comm, n, root);
  text.resize(static_cast<std::size_t>(n));
  broadcast_bytes(comm, text.data(), text.size(), root);
}

std::vector<unsigned char> all_gather_bytes(Communicator& comm, const void* mine, std::size_t bytes) {
  const int n = checked_count(bytes, "all_gather");
  std::vector<unsigned char> all(bytes * static_cast<std::size_t>(comm.size()));
  MPI_Allgather(mine, n, MPI_BYTE, all.data(), n, MPI_BYTE, comm.handle());
  return all;
}

std::vector<unsigned char> gather_rows_bytes(Communicator& comm, const void* mine, std::size_t rows,
                                             std::size_t row_bytes, int root) {
  const int size = comm.size();
  int my_rows = checked_count(rows, "gather_rows");
  std::vector<int> counts(size), bytes(size), displs(size);
  MPI_Allgather(&my_rows, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.handle());
  std::size_t total = 0;
  for (int r = 0; r < size; ++r) {
    bytes[r] = checked_count(static_cast<std::size_t>(counts[r]) * row_bytes, "gather_rows");
    displs[r] = checked_count(total * row_bytes, "gather_rows");
    total += static_cast<std::size_t>(counts[r]);
  }
  std::vector<unsigned char> out(comm.rank() == root ? total * row_bytes : 0);
  MPI_Gatherv(mine, checked_count(rows * row_bytes, "gather_rows"), MPI_BYTE, out.data(), bytes.data(), displs.data(),
              MPI_BYTE, root, comm.handle());
  return out;
}

void reduce_max(Communicator& comm, double* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_MAX, comm.handle());
}

void reduce_sum(Communicator& comm, double* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, comm.handle());
}

void reduce_sum(Communicator& comm, std::uint64_t* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_UINT64_T, MPI_SUM, comm.handle());
}

void reduce_xor(Communicator& comm, std::uint32_t* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_UINT32_T, MPI_BXOR, comm.handle());
}

}  // namespace emprism
