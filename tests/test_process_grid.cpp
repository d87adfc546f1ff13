// test_process_grid.cpp: unit tests of the process grid (comm/process_grid.hpp).
// choose_process_grid: the chosen grid for 1..16 ranks on several extents, the tie-break (t, then z, y, x), and the
// impossible cases. make_process_grid on one rank (MPI_COMM_SELF, so the tests also hold when the binary is started
// under mpiexec): the grid, force_halo, and the InputError text for a lattice.procs of the wrong rank count, one that
// does not divide an extent and one with an odd local extent. The multi-rank checks are in
// tests/mpi/test_process_grid_mpi.cpp. Convention: extents and grids are (x, y, z, t) = mu 0..3.
// Who may call: ctest (emprism_tests, whose main initialises MPI).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/errors.hpp"

namespace emprism {
namespace {

using Int4 = std::array<int, 4>;
using Grid = std::optional<Int4>;

constexpr std::array<bool, 4> kNoForce{false, false, false, false};

// The InputError message of make_process_grid on one rank, or a marker when it succeeds.
std::string grid_error_of(const Int4& global, const Grid& requested) {
  Communicator self(MPI_COMM_SELF);
  try {
    ProcessGrid grid = make_process_grid(self, global, requested, kNoForce);
    MPI_Comm_free(&grid.cart);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

// The halo cost of the rule in process_grid.hpp, recomputed here for the property test.
std::int64_t cost_of(const Int4& dims, const Int4& global) {
  std::int64_t volume = 1;
  for (int mu = 0; mu < 4; ++mu) volume *= global[mu] / dims[mu];
  std::int64_t cost = 0;
  for (int mu = 0; mu < 4; ++mu)
    if (dims[mu] > 1) cost += 2 * volume / (global[mu] / dims[mu]);
  return cost;
}

TEST(ProcessGrid, OneRankIsUnsplit) {
  EXPECT_EQ(choose_process_grid(1, {8, 8, 8, 16}), Grid(Int4{1, 1, 1, 1}));
  EXPECT_EQ(choose_process_grid(1, {2, 2, 2, 2}), Grid(Int4{1, 1, 1, 1}));
  EXPECT_EQ(choose_process_grid(1, {6, 10, 14, 22}), Grid(Int4{1, 1, 1, 1}));
}

TEST(ProcessGrid, TwoRanksSplitTheLongestDirection) {
  EXPECT_EQ(choose_process_grid(2, {8, 8, 8, 16}), Grid(Int4{1, 1, 1, 2}));
  EXPECT_EQ(choose_process_grid(2, {16, 8, 8, 8}), Grid(Int4{2, 1, 1, 1}));  // smaller face than splitting t
  EXPECT_EQ(choose_process_grid(2, {8, 8, 16, 8}), Grid(Int4{1, 1, 2, 1}));
}

TEST(ProcessGrid, TwoRanksOnAHypercubeSplitT) {
  // All four single splits cost the same: t wins the tie.
  EXPECT_EQ(choose_process_grid(2, {8, 8, 8, 8}), Grid(Int4{1, 1, 1, 2}));
}

TEST(ProcessGrid, FourRanks) {
  EXPECT_EQ(choose_process_grid(4, {8, 8, 8, 16}), Grid(Int4{1, 1, 1, 4}));  // cost 1024 against 1536 for [1,1,2,2]
  EXPECT_EQ(choose_process_grid(4, {4, 4, 4, 4}), Grid(Int4{1, 1, 2, 2}));   // Lt/4 = 1 is odd
  EXPECT_EQ(choose_process_grid(4, {2, 2, 2, 8}), Grid(Int4{1, 1, 1, 4}));   // only t can be split
}

TEST(ProcessGrid, EightRanksTieBreakPrefersT) {
  // [1, 1, 1, 8] and [1, 1, 2, 4] both cost 1024 on 8^3 x 16: the larger pt wins.
  EXPECT_EQ(choose_process_grid(8, {8, 8, 8, 16}), Grid(Int4{1, 1, 1, 8}));
  EXPECT_EQ(cost_of({1, 1, 1, 8}, {8, 8, 8, 16}), cost_of({1, 1, 2, 4}, {8, 8, 8, 16}));
}

TEST(ProcessGrid, EightRanksTieBreakThenPrefersZ) {
  // On 8^4 every valid grid with at most 4 ranks per direction costs 768 (pt = 8 would leave Lt/pt = 1, odd):
  // pt = 4 is the largest possible, then pz = 2.
  EXPECT_EQ(choose_process_grid(8, {8, 8, 8, 8}), Grid(Int4{1, 1, 2, 4}));
  EXPECT_EQ(cost_of({1, 1, 2, 4}, {8, 8, 8, 8}), cost_of({2, 2, 2, 1}, {8, 8, 8, 8}));
  EXPECT_EQ(cost_of({1, 1, 2, 4}, {8, 8, 8, 8}), cost_of({1, 2, 1, 4}, {8, 8, 8, 8}));
}

TEST(ProcessGrid, SixRanks) {
  EXPECT_EQ(choose_process_grid(6, {8, 8, 12, 16}), Grid(Int4{1, 1, 3, 2}));
  // [1, 1, 2, 3] and [1, 1, 3, 2] both cost 2880 on 12^4: the larger pt wins.
  EXPECT_EQ(choose_process_grid(6, {12, 12, 12, 12}), Grid(Int4{1, 1, 2, 3}));
}

TEST(ProcessGrid, SixteenRanks) {
  EXPECT_EQ(choose_process_grid(16, {16, 16, 16, 32}), Grid(Int4{1, 1, 2, 8}));
  EXPECT_EQ(choose_process_grid(16, {8, 8, 8, 16}), Grid(Int4{1, 1, 2, 8}));
  EXPECT_EQ(choose_process_grid(16, {4, 4, 4, 4}), Grid(Int4{2, 2, 2, 2}));  // the only grid with even locals
}

TEST(ProcessGrid, ImpossibleGridsGiveNothing) {
  EXPECT_EQ(choose_process_grid(6, {8, 8, 8, 16}), std::nullopt);  // 3 divides no extent
  EXPECT_EQ(choose_process_grid(3, {8, 8, 8, 8}), std::nullopt);
  EXPECT_EQ(choose_process_grid(2, {2, 2, 2, 2}), std::nullopt);   // any split leaves a local extent of 1
  EXPECT_EQ(choose_process_grid(2, {6, 6, 6, 6}), std::nullopt);   // 6 / 2 = 3 is odd
  EXPECT_EQ(choose_process_grid(32, {4, 4, 4, 4}), std::nullopt);  // 2 per direction at most
  EXPECT_EQ(choose_process_grid(4, {8, 8, 8, 0}), std::nullopt);   // a local extent of 0 is not allowed
}

TEST(ProcessGrid, PrimeRankCountSplitsOneDirection) {
  EXPECT_EQ(choose_process_grid(7, {14, 14, 14, 28}), Grid(Int4{1, 1, 1, 7}));  // local t = 4
  EXPECT_EQ(choose_process_grid(5, {6, 6, 20, 6}), Grid(Int4{1, 1, 5, 1}));     // only Lz is a multiple of 5
}

TEST(ProcessGrid, NonPositiveRankCountGivesNothing) {
  EXPECT_EQ(choose_process_grid(0, {8, 8, 8, 8}), std::nullopt);
  EXPECT_EQ(choose_process_grid(-4, {8, 8, 8, 8}), std::nullopt);
}

TEST(ProcessGrid, ChosenGridsAreValidAndCheapest) {
  const Int4 extents[] = {{8, 8, 8, 16}, {12, 12, 12, 24}, {16, 16, 16, 32}, {4, 8, 12, 16}, {48, 48, 48, 64}};
  for (const Int4& global : extents) {
    for (int n = 1; n <= 64; ++n) {
      const Grid chosen = choose_process_grid(n, global);
      // Brute force over all 4-tuples of divisors of n.
      std::optional<std::int64_t> cheapest;
      for (int a = 1; a <= n; ++a)
        for (int b = 1; b <= n; ++b)
          for (int c = 1; c <= n; ++c) {
            if (n % (a * b * c) != 0) continue;
            const Int4 dims{a, b, c, n / (a * b * c)};
            bool ok = true;
            for (int mu = 0; mu < 4; ++mu) ok = ok && global[mu] % dims[mu] == 0 && (global[mu] / dims[mu]) % 2 == 0;
            if (ok && (!cheapest || cost_of(dims, global) < *cheapest)) cheapest = cost_of(dims, global);
          }
      ASSERT_EQ(chosen.has_value(), cheapest.has_value()) << "n = " << n;
      if (!chosen) continue;
      const Int4& d = *chosen;
      EXPECT_EQ(d[0] * d[1] * d[2] * d[3], n);
      for (int mu = 0; mu < 4; ++mu) {
        ASSERT_EQ(global[mu] % d[mu], 0) << "n = " << n << ", mu = " << mu;
        EXPECT_EQ((global[mu] / d[mu]) % 2, 0) << "n = " << n << ", mu = " << mu;
      }
      EXPECT_EQ(cost_of(d, global), *cheapest) << "n = " << n;
    }
  }
}

TEST(ProcessGrid, ManyRanksAreFast) {
  // 4096 ranks: the enumeration stays cheap (4096 has 13 divisors).
  const Grid chosen = choose_process_grid(4096, {64, 64, 64, 128});
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ((*chosen)[0] * (*chosen)[1] * (*chosen)[2] * (*chosen)[3], 4096);
}

TEST(ProcessGrid, SingleRankGridWithoutProcs) {
  Communicator self(MPI_COMM_SELF);
  ProcessGrid grid = make_process_grid(self, {4, 4, 4, 8}, std::nullopt, kNoForce);
  EXPECT_EQ(grid.dims, (Int4{1, 1, 1, 1}));
  EXPECT_EQ(grid.coords, (Int4{0, 0, 0, 0}));
  EXPECT_EQ(grid.fwd, (Int4{0, 0, 0, 0}));
  EXPECT_EQ(grid.bwd, (Int4{0, 0, 0, 0}));
  EXPECT_EQ(grid.partitioned, (std::array<bool, 4>{false, false, false, false}));
  EXPECT_FALSE(grid.any_partitioned());
  EXPECT_EQ(grid.local_extents({4, 4, 4, 8}), (Int4{4, 4, 4, 8}));
  EXPECT_EQ(grid.origin({4, 4, 4, 8}), (Int4{0, 0, 0, 0}));
  ASSERT_NE(grid.cart, MPI_COMM_NULL);
  int size = 0, ndims = 0;
  MPI_Comm_size(grid.cart, &size);
  MPI_Cartdim_get(grid.cart, &ndims);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(ndims, 4);
  MPI_Comm_free(&grid.cart);
}

TEST(ProcessGrid, SingleRankGridWithMatchingProcs) {
  Communicator self(MPI_COMM_SELF);
  ProcessGrid grid = make_process_grid(self, {4, 4, 4, 8}, Int4{1, 1, 1, 1}, kNoForce);
  EXPECT_EQ(grid.dims, (Int4{1, 1, 1, 1}));
  EXPECT_FALSE(grid.any_partitioned());
  MPI_Comm_free(&grid.cart);
}

TEST(ProcessGrid, ForceHaloPartitionsWithSelfAsNeighbour) {
  Communicator self(MPI_COMM_SELF);
  ProcessGrid grid = make_process_grid(self, {4, 4, 4, 8}, std::nullopt, {false, true, false, true});
  EXPECT_EQ(grid.dims, (Int4{1, 1, 1, 1}));
  EXPECT_EQ(grid.partitioned, (std::array<bool, 4>{false, true, false, true}));
  EXPECT_TRUE(grid.any_partitioned());
  int me = -1;
  MPI_Comm_rank(grid.cart, &me);
  for (int mu = 0; mu < 4; ++mu) {
    EXPECT_EQ(grid.fwd[mu], me) << "mu = " << mu;
    EXPECT_EQ(grid.bwd[mu], me) << "mu = " << mu;
  }
  MPI_Comm_free(&grid.cart);
}

TEST(ProcessGrid, ProcsOfWrongRankCountRejected) {
  EXPECT_EQ(grid_error_of({8, 8, 8, 16}, Int4{2, 2, 1, 1}),
            "lattice.procs: [2, 2, 1, 1] has 4 ranks but the job has 1; e.g. lattice.procs = [1, 1, 1, 1]");
  Communicator self(MPI_COMM_SELF);
  EXPECT_THROW(make_process_grid(self, {8, 8, 8, 16}, Int4{1, 1, 1, 2}, kNoForce), InputError);
}

TEST(ProcessGrid, ProcsNotDividingAnExtentRejected) {
  EXPECT_EQ(grid_error_of({8, 8, 8, 16}, Int4{1, 1, 3, 1}),
            "lattice.procs: Lz = 8 is not divisible by pz = 3; e.g. lattice.procs = [1, 1, 1, 1]");
}

TEST(ProcessGrid, ProcsLeavingAnOddLocalExtentRejected) {
  EXPECT_EQ(grid_error_of({8, 8, 8, 16}, Int4{1, 1, 1, 16}),
            "lattice.procs: local extent Lt/pt = 16/16 = 1 is odd; local extents must be even; "
            "e.g. lattice.procs = [1, 1, 1, 1]");
}

TEST(ProcessGrid, FirstFailingDirectionIsReported) {
  // x does not divide, t is odd and the product is wrong: x comes first.
  EXPECT_EQ(grid_error_of({6, 8, 8, 16}, Int4{4, 1, 1, 16}),
            "lattice.procs: Lx = 6 is not divisible by px = 4; e.g. lattice.procs = [1, 1, 1, 1]");
  // Divisibility and evenness are checked direction by direction, before the rank count.
  EXPECT_EQ(grid_error_of({8, 6, 8, 16}, Int4{1, 2, 1, 3}),
            "lattice.procs: local extent Ly/py = 6/2 = 3 is odd; local extents must be even; "
            "e.g. lattice.procs = [1, 1, 1, 1]");
}

TEST(ProcessGrid, SuggestionSaysWhenNoGridExists) {
  // Odd global extents never pass the input reader; here they make every grid impossible on one rank.
  EXPECT_EQ(grid_error_of({5, 8, 8, 8}, Int4{1, 1, 1, 1}),
            "lattice.procs: local extent Lx/px = 5/1 = 5 is odd; local extents must be even; no process grid of "
            "1 rank divides lattice.extents = [5, 8, 8, 8] into even local extents");
}

TEST(ProcessGrid, NoGridWithoutProcsRejected) {
  EXPECT_EQ(grid_error_of({5, 8, 8, 8}, std::nullopt),
            "lattice.extents: no process grid of 1 rank divides [5, 8, 8, 8] into even local extents (use a rank "
            "count whose factors divide the extents)");
}

TEST(ProcessGrid, NonPositiveProcsRejected) {
  EXPECT_EQ(grid_error_of({8, 8, 8, 16}, Int4{1, 0, 1, 1}), "lattice.procs[1]: must be > 0, got 0");
  EXPECT_EQ(grid_error_of({8, 8, 8, 16}, Int4{-1, -1, 1, 1}), "lattice.procs[0]: must be > 0, got -1");
}

TEST(ProcessGrid, ErrorMessagesAreOneLine) {
  for (const Grid& procs : {Grid(Int4{2, 2, 1, 1}), Grid(Int4{1, 1, 3, 1}), Grid(Int4{1, 1, 1, 16})}) {
    const std::string message = grid_error_of({8, 8, 8, 16}, procs);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("lattice.procs: ", 0), 0u) << message;
  }
}

}  // namespace
}  // namespace emprism
