// test_process_grid_mpi.cpp: multi-rank test of comm/process_grid.hpp, run by ctest under mpiexec -n 1, 2 and 4.
// For every ordered factorisation of the rank count that divides 8^4 (and the chosen grid of 8^3 x 16), with and
// without force_halo, it checks:
//   - the cart communicator has the job's ranks in the same order (no reordering) and the grid's dims;
//   - neighbours agree: my fwd's bwd is me and my bwd's fwd is me (ranks exchanged with MPI_Sendrecv), the fwd
//     neighbour's coords are mine plus one (periodic), and a direction with one rank has me as both neighbours;
//   - coords cover the grid exactly once (MPI_Allgather), and origin / local_extents tile the global lattice;
//   - partitioned[mu] = dims[mu] > 1 || force_halo[mu];
// and that a bad lattice.procs (wrong rank count, not dividing, odd local extent) or an impossible lattice without
// procs throws the same InputError text on every rank, with the expected text.
// A plain program (no GoogleTest): prints each failed check with the rank and returns non-zero if any rank failed.
// Convention: mu = 0..3 = x, y, z, t. Who may call: ctest through mpiexec.
#include <mpi.h>

#include <array>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/errors.hpp"
#include "tests/support/mpi_test.hpp"

namespace {

using emprism::Communicator;
using emprism::InputError;
using emprism::ProcessGrid;
using Int4 = std::array<int, 4>;
using Bool4 = std::array<bool, 4>;

int g_rank = 0;
using emprism::test::check;

std::string str(const Int4& v) {
  std::ostringstream out;
  out << "[" << v[0] << ", " << v[1] << ", " << v[2] << ", " << v[3] << "]";
  return out.str();
}

std::string str(const Bool4& v) {
  std::ostringstream out;
  out << "[" << v[0] << ", " << v[1] << ", " << v[2] << ", " << v[3] << "]";
  return out.str();
}

// Every ordered (a, b, c, d) with a b c d = n.
std::vector<Int4> factorisations(int n) {
  std::vector<Int4> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      for (int c = 1; c <= n; ++c)
        if (n % (a * b * c) == 0) out.push_back({a, b, c, n / (a * b * c)});
  return out;
}

// All the structural checks of one grid (collective over MPI_COMM_WORLD).
void check_grid(const ProcessGrid& g, const Int4& global, const Int4& expected_dims, const Bool4& force,
                const std::string& label) {
  const std::string at = label + " dims " + str(expected_dims) + " force_halo " + str(force) + ": ";
  int world_rank = 0, world_size = 0, cart_rank = -1, cart_size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  check(g.cart != MPI_COMM_NULL, at + "cart is MPI_COMM_NULL");
  if (g.cart == MPI_COMM_NULL) return;
  MPI_Comm_rank(g.cart, &cart_rank);
  MPI_Comm_size(g.cart, &cart_size);
  check(cart_rank == world_rank, at + "cart rank " + std::to_string(cart_rank) + " != world rank (reordered)");
  check(cart_size == world_size, at + "cart size " + std::to_string(cart_size));
  check(g.dims == expected_dims, at + "dims " + str(g.dims));

  int mpi_dims[4], periods[4], mpi_coords[4];
  MPI_Cart_get(g.cart, 4, mpi_dims, periods, mpi_coords);
  for (int mu = 0; mu < 4; ++mu) {
    const std::string m = at + "mu " + std::to_string(mu) + ": ";
    check(mpi_dims[mu] == g.dims[mu] && periods[mu] == 1 && mpi_coords[mu] == g.coords[mu], m + "MPI_Cart_get differs");
    check(g.coords[mu] >= 0 && g.coords[mu] < g.dims[mu], m + "coords " + str(g.coords) + " out of range");
    check(g.partitioned[mu] == (g.dims[mu] > 1 || force[mu]), m + "partitioned " + std::to_string(g.partitioned[mu]));
    if (g.dims[mu] == 1)
      check(g.fwd[mu] == cart_rank && g.bwd[mu] == cart_rank, m + "one rank in this direction, neighbours are not me");

    // My fwd's bwd is me: every rank sends its bwd to its bwd neighbour and receives its fwd neighbour's bwd.
    int fwd_bwd = -1;
    MPI_Sendrecv(&g.bwd[mu], 1, MPI_INT, g.bwd[mu], 10 + mu, &fwd_bwd, 1, MPI_INT, g.fwd[mu], 10 + mu, g.cart,
                 MPI_STATUS_IGNORE);
    check(fwd_bwd == cart_rank, m + "fwd " + std::to_string(g.fwd[mu]) + " has bwd " + std::to_string(fwd_bwd));
    // My bwd's fwd is me.
    int bwd_fwd = -1;
    MPI_Sendrecv(&g.fwd[mu], 1, MPI_INT, g.fwd[mu], 20 + mu, &bwd_fwd, 1, MPI_INT, g.bwd[mu], 20 + mu, g.cart,
                 MPI_STATUS_IGNORE);
    check(bwd_fwd == cart_rank, m + "bwd " + std::to_string(g.bwd[mu]) + " has fwd " + std::to_string(bwd_fwd));
    // The fwd neighbour sits one step up in mu (periodic) and at the same coords otherwise.
    Int4 fwd_coords{};
    MPI_Sendrecv(g.coords.data(), 4, MPI_INT, g.bwd[mu], 30 + mu, fwd_coords.data(), 4, MPI_INT, g.fwd[mu], 30 + mu,
                 g.cart, MPI_STATUS_IGNORE);
    Int4 expected = g.coords;
    expected[mu] = (expected[mu] + 1) % g.dims[mu];
    check(fwd_coords == expected, m + "fwd neighbour has coords " + str(fwd_coords) + ", expected " + str(expected));
  }

  // Coords cover the grid exactly once; blocks tile the lattice.
  const Int4 local = g.local_extents(global);
  const Int4 origin = g.origin(global);
  for (int mu = 0; mu < 4; ++mu) {
    check(local[mu] * g.dims[mu] == global[mu] && local[mu] % 2 == 0, at + "local extents " + str(local));
    check(origin[mu] == g.coords[mu] * local[mu], at + "origin " + str(origin));
  }
  std::vector<int> all(4 * static_cast<std::size_t>(world_size));
  MPI_Allgather(g.coords.data(), 4, MPI_INT, all.data(), 4, MPI_INT, MPI_COMM_WORLD);
  std::set<Int4> seen;
  for (int r = 0; r < world_size; ++r) {
    const Int4 c{all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]};
    bool inside = true;
    for (int mu = 0; mu < 4; ++mu) inside = inside && c[mu] >= 0 && c[mu] < g.dims[mu];
    check(inside, at + "rank " + std::to_string(r) + " has coords " + str(c) + " outside the grid");
    check(seen.insert(c).second, at + "coords " + str(c) + " appear twice");
  }
  check(static_cast<int>(seen.size()) == g.dims[0] * g.dims[1] * g.dims[2] * g.dims[3], at + "coords do not cover");
}

void test_all_grids(const Communicator& comm) {
  const Int4 global{8, 8, 8, 8};
  for (const Int4& dims : factorisations(comm.size())) {
    for (const Bool4& force : {Bool4{false, false, false, false}, Bool4{true, false, true, true}}) {
      ProcessGrid g = emprism::make_process_grid(comm, global, dims, force);
      check_grid(g, global, dims, force, "procs");
      MPI_Comm_free(&g.cart);
    }
  }
  const Int4 wide{8, 8, 8, 16};
  const auto chosen = emprism::choose_process_grid(comm.size(), wide);
  check(chosen.has_value(), "choose_process_grid found no grid for 8^3 x 16");
  if (chosen) {
    ProcessGrid g = emprism::make_process_grid(comm, wide, std::nullopt, {false, false, false, false});
    check_grid(g, wide, *chosen, {false, false, false, false}, "chosen");
    MPI_Comm_free(&g.cart);
  }
}

// The InputError text of make_process_grid on this rank ("<no error>" when it succeeds).
std::string error_text(const Communicator& comm, const Int4& global, const std::optional<Int4>& procs) {
  try {
    ProcessGrid g = emprism::make_process_grid(comm, global, procs, {false, false, false, false});
    MPI_Comm_free(&g.cart);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

// Checks that every rank has the same text, and that it is the expected one.
void check_same_error(const std::string& text, const std::string& expected, const std::string& label) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(size);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(size, 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    const std::string other = all.substr(offsets[r], lengths[r]);
    check(other == text, label + ": rank " + std::to_string(r) + " says '" + other + "', this rank '" + text + "'");
  }
  check(text == expected, label + ": got '" + text + "', expected '" + expected + "'");
}

void test_errors(const Communicator& comm) {
  const int n = comm.size();
  const std::string job = std::to_string(n);
  const Int4 global{8, 8, 8, 16};
  const std::string eg = "; e.g. lattice.procs = " + str(*emprism::choose_process_grid(n, global));

  if (n != 3)  // Lx = 12 splits into 3 even blocks, so only the rank count is wrong
    check_same_error(error_text(comm, {12, 8, 8, 16}, Int4{3, 1, 1, 1}),
                     "lattice.procs: [3, 1, 1, 1] has 3 ranks but the job has " + job +
                         "; e.g. lattice.procs = " + str(*emprism::choose_process_grid(n, {12, 8, 8, 16})),
                     "wrong rank count");
  const Int4 twice{1, 1, 1, 2 * n};
  check_same_error(
      error_text(comm, global, twice),
      "lattice.procs: " + str(twice) + " has " + std::to_string(2 * n) + " ranks but the job has " + job + eg,
      "twice the ranks");
  check_same_error(error_text(comm, global, Int4{1, 1, 3, 1}), "lattice.procs: Lz = 8 is not divisible by pz = 3" + eg,
                   "not dividing");
  check_same_error(error_text(comm, global, Int4{1, 1, 1, 16}),
                   "lattice.procs: local extent Lt/pt = 16/16 = 1 is odd; local extents must be even" + eg,
                   "odd local extent");
  if (n > 1) {
    // 6 / 2 = 3 and 6 / 4 is not whole: no grid of 2 or 4 ranks fits 6^4.
    const std::string ranks = job + " ranks";
    check_same_error(error_text(comm, {6, 6, 6, 6}, std::nullopt),
                     "lattice.extents: no process grid of " + ranks +
                         " divides [6, 6, 6, 6] into even local extents (use a rank count whose factors divide the "
                         "extents)",
                     "no grid without procs");
    check_same_error(error_text(comm, {6, 6, 6, 6}, Int4{1, 1, 1, 1}),
                     "lattice.procs: [1, 1, 1, 1] has 1 rank but the job has " + job + "; no process grid of " + ranks +
                         " divides lattice.extents = [6, 6, 6, 6] into even local extents",
                     "no grid to suggest");
  }
}

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  g_rank = test.rank();
  test_all_grids(test.comm());
  test_errors(test.comm());
}
