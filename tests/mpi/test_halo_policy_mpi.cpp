// test_halo_policy_mpi.cpp: the ranks' agreement on a halo policy (comm/halo_policy.hpp agree_on_policy), run by
// ctest under mpiexec -n 1, 2, 4 and 8. Each rank passes its own candidate times, made so that every rank has a
// different favourite and its own favourite is the slowest candidate elsewhere; all ranks must return the same
// index, the one whose slowest rank is fastest (computed here from every rank's times, gathered). Also: equal
// slowest times choose the earlier candidate, and node_local_directions agrees over ranks (on one node: every
// direction is node-local).
// A plain program (no GoogleTest): prints each failed check with the rank and returns non-zero if any rank failed.
// Who may call: ctest through mpiexec.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/halo_policy.hpp"
#include "comm/process_grid.hpp"

namespace {

using emprism::Communicator;

int g_failures = 0;

void check(bool ok, const std::string& what, int rank) {
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  }
}

// Candidate k's time on rank r: rank r likes candidate r % n best, and the candidate it likes is slow elsewhere.
double time_of(int rank, int size, int k, int n) {
  const bool mine = k == rank % n;
  const bool someone_elses = k < std::min(size, n) && !mine;
  return 1.0 + 0.1 * k + (mine ? -0.5 : 0.0) + (someone_elses ? 2.0 + rank : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  emprism::MpiSession mpi(&argc, &argv);
  Communicator comm;
  const int rank = comm.rank(), size = comm.size();
  for (int n : {1, 3, 8, 12}) {
    std::vector<double> mine(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) mine[static_cast<std::size_t>(k)] = time_of(rank, size, k, n);
    const std::size_t got = emprism::agree_on_policy(comm, mine);
    std::vector<double> slowest(static_cast<std::size_t>(n), 0.0);
    for (int r = 0; r < size; ++r)
      for (int k = 0; k < n; ++k)
        slowest[static_cast<std::size_t>(k)] = std::max(slowest[static_cast<std::size_t>(k)], time_of(r, size, k, n));
    const std::size_t want =
        static_cast<std::size_t>(std::min_element(slowest.begin(), slowest.end()) - slowest.begin());
    check(got == want,
          std::to_string(n) + " candidates: chose " + std::to_string(got) + ", expected " + std::to_string(want), rank);
    std::size_t lowest = got, highest = got;
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_UNSIGNED_LONG, MPI_MIN, comm.handle());
    MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_UNSIGNED_LONG, MPI_MAX, comm.handle());
    check(lowest == highest, std::to_string(n) + " candidates: ranks chose different policies", rank);
  }
  // Ties: every rank reports the same times for candidates 1 and 2 and slower ones elsewhere.
  const std::vector<double> tied{3.0, 1.0 + 0.001 * rank, 1.0 + 0.001 * (size - 1), 5.0};
  check(emprism::agree_on_policy(comm, tied) == 1u, "equal slowest times must choose the earlier candidate", rank);

  emprism::ProcessGrid grid;
  grid.cart = MPI_COMM_WORLD;
  grid.fwd = {(rank + 1) % size, rank, rank, rank};
  grid.bwd = {(rank + size - 1) % size, rank, rank, rank};
  const std::array<bool, 4> local = emprism::node_local_directions(grid);
  check(local[0] && local[1] && local[2] && local[3], "one node: every direction must be node-local", rank);

  int failures = g_failures;
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm.handle());
  if (rank == 0) std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
