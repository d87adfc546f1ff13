// collectives.hpp: the collective operations the host side builds on, over a Communicator:
//   first_failure        agreement on the lowest failing rank of a step, with its kind and message (so that every
//                        rank throws the same error and none is left waiting in a later collective)
//   agreed_step          runs a step on every rank and throws the first failing rank's exception on all of them
//   broadcast            plain bytes, trivially copyable values and strings from a root rank
//   all_gather, gather_rows   every rank's values in rank order, on every rank or on a root rank
//   reduce_max, reduce_sum, reduce_xor   element-wise reductions in place (the library's order of summation;
//                        Communicator::sum is the deterministic sum used by the physics)
// No physics and no file formats here. Who may call: every rank of the communicator, in the same order, with the
// same counts where stated (these are collective).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/communicator.hpp"
#include "kernels/errors.hpp"

namespace emprism {

// What a step ended with on the lowest failing rank.
struct RankFailure {
  int rank = 0;  // the lowest failing rank
  int kind = 0;  // the caller's code for the kind of failure (never 0)
  std::string message;
};

// A rank whose step failed waits this long in the agreement for the others; when they do not come (stuck in a
// collective call of MPI-IO or HDF5 that the failing rank left), it reports its failure through the fault reporter
// (one line) and ends the job (MPI_Abort, exit code 1), so that a fault on one rank never hangs the job.
// The default is kFaultAgreementSeconds; the environment variable EMPRISM_FAULT_AGREEMENT_S (seconds > 0) replaces
// it (read once).
constexpr double kFaultAgreementSeconds = 30.0;
double fault_agreement_seconds();
using FaultReporter = std::function<void(const std::string& line)>;
// The program's one-line error report, used only when a failing rank ends the job as above.
void set_fault_reporter(FaultReporter reporter);

// Every rank passes the outcome of its own step: kind 0 = success, any other value = failed with `message`.
// Returns on every rank the failure of the lowest failing rank (kind and message sent from it), or nullopt when
// every rank succeeded. One MPI_Allreduce when all succeed, two broadcasts more otherwise.
std::optional<RankFailure> first_failure(Communicator& comm, int kind, const std::string& message);

// Throws on every rank the exception of the lowest rank whose `kind` is not 0 (kind 2: AgreedInputError, any other:
// AgreedRuntimeFailure: every rank throws it alike, so the caller may end every rank cleanly) with its message,
// followed by " (on rank N)" when N != 0 and name_rank; returns on every rank when all kinds are 0. Collective.
void throw_first_failure(Communicator& comm, int kind, const std::string& message, bool name_rank);

// Runs body() on this rank, then agrees with every rank: when it threw on any rank, every rank throws the exception
// of the lowest failing rank (InputError stays InputError, anything else becomes RuntimeFailure; see
// throw_first_failure). An exception that is not a std::exception counts as a RuntimeFailure with message
// `unknown`. Collective.
template <typename Body>
void agreed_step(Communicator& comm, Body&& body, bool name_rank = true,
                 const std::string& unknown = "unknown exception") {
  int kind = 0;
  std::string message;
  try {
    body();
  } catch (const InputError& e) {
    kind = 2;
    message = e.what();
  } catch (const std::exception& e) {
    kind = 1;
    message = e.what();
  } catch (...) {
    kind = 1;
    message = unknown;
  }
  throw_first_failure(comm, kind, message, name_rank);
}

// The lowest rank that passes failed = true, or comm.size() when none does (one MPI_Iallreduce; a failing rank waits
// for the others at most fault_agreement_seconds(), then reports `message` and ends the job).
int first_failing_rank(Communicator& comm, bool failed, const std::string& message = "a rank failed");

// `bytes` bytes at data from root to every rank (in place).
void broadcast_bytes(Communicator& comm, void* data, std::size_t bytes, int root = 0);

template <typename T>
void broadcast(Communicator& comm, T& value, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast: plain values only");
  broadcast_bytes(comm, &value, sizeof(T), root);
}

// root's string on every rank (its length first).
void broadcast(Communicator& comm, std::string& text, int root = 0);

// `bytes` bytes of every rank, concatenated in rank order, on every rank (MPI_Allgather).
std::vector<unsigned char> all_gather_bytes(Communicator& comm, const void* mine, std::size_t bytes);

// `count` values of T of every rank, in rank order (count * size values), on every rank.
template <typename T>
std::vector<T> all_gather(Communicator& comm, const T* mine, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>, "all_gather: plain values only");
  const std::vector<unsigned char> bytes = all_gather_bytes(comm, mine, count * sizeof(T));
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Every rank's rows (any number per rank), concatenated in rank order, on root (MPI_Gatherv); the other ranks get
// an empty vector.
std::vector<unsigned char> gather_rows_bytes(Communicator& comm, const void* mine, std::size_t rows,
                                             std::size_t row_bytes, int root);

template <typename T>
std::vector<T> gather_rows(Communicator& comm, const std::vector<T>& mine, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>, "gather_rows: plain values only");
  const std::vector<unsigned char> bytes = gather_rows_bytes(comm, mine.data(), mine.size(), sizeof(T), root);
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// In-place element-wise reductions over all ranks.
void reduce_max(Communicator& comm, double* values, int n);
void reduce_sum(Communicator& comm, double* values, int n);  // the library's order (see Communicator::sum)
void reduce_sum(Communicator& comm, std::uint64_t* values, int n);
void reduce_xor(Communicator& comm, std::uint32_t* values, int n);

}  // namespace emprism
