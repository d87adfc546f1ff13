// process_grid.cpp: the 4-D Cartesian process grid (see process_grid.hpp).
//   ProcessGrid::local_extents / origin   this rank's block of the global lattice
//   choose_process_grid   the cheapest factorisation of the rank count (rule below); pure, no MPI
//   make_process_grid     check lattice.procs (or choose), then MPI_Cart_create / _coords / _shift
// Convention: mu = 0,1,2,3 = x,y,z,t; dims, coords, fwd and bwd are indexed by mu. MPI_Cart_create numbers ranks
// row-major in its dimensions, so with dims ordered (x, y, z, t) the t coordinate varies fastest over consecutive
// ranks (t neighbours share a node first). Periodic in every direction, no reordering: cart ranks equal the ranks
// of the communicator passed in.
// Errors: every check uses only the input (extents, procs, rank count), which every rank has, so every rank throws
// the same one-line InputError before any collective call; no MPI agreement is needed.
// Who may call: main (once, collectively) and tests.
#include "comm/process_grid.hpp"

#include <cstdint>
#include <string>

#include "comm/communicator.hpp"
#include "kernels/errors.hpp"

namespace emprism {
namespace {

constexpr const char* kExtentNames[4] = {"Lx", "Ly", "Lz", "Lt"};
constexpr const char* kProcNames[4] = {"px", "py", "pz", "pt"};

std::string format_int4(const std::array<int, 4>& v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ", " +
         std::to_string(v[3]) + "]";
}

// Local extents global/dims are whole, even and >= 2 in every direction.
bool divides_evenly(const std::array<int, 4>& dims, const std::array<int, 4>& global) {
  for (int mu = 0; mu < 4; ++mu) {
    if (dims[mu] < 1 || global[mu] % dims[mu] != 0) return false;
    const int local = global[mu] / dims[mu];
    if (local < 2 || local % 2 != 0) return false;
  }
  return true;
}

// Halo surface: for each split direction, both faces of the local block (local volume / local extent sites each).
std::int64_t halo_cost(const std::array<int, 4>& dims, const std::array<int, 4>& global) {
  std::array<std::int64_t, 4> local{};
  std::int64_t volume = 1;
  for (int mu = 0; mu < 4; ++mu) {
    local[mu] = global[mu] / dims[mu];
    volume *= local[mu];
  }
  std::int64_t cost = 0;
  for (int mu = 0; mu < 4; ++mu)
    if (dims[mu] > 1) cost += 2 * (volume / local[mu]);
  return cost;
}

// Tie-break: a splits t more than b, else z, else y, else x.
bool splits_later_directions_more(const std::array<int, 4>& a, const std::array<int, 4>& b) {
  for (int mu = 3; mu >= 0; --mu)
    if (a[mu] != b[mu]) return a[mu] > b[mu];
  return false;
}

std::string ranks_phrase(std::int64_t n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

// "; e.g. lattice.procs = [...]" with the grid choose_process_grid picks, or why there is none.
std::string suggestion(int nranks, const std::array<int, 4>& global) {
  if (const auto dims = choose_process_grid(nranks, global)) return "; e.g. lattice.procs = " + format_int4(*dims);
  return "; no process grid of " + ranks_phrase(nranks) + " divides lattice.extents = " + format_int4(global) +
         " into even local extents";
}

// Throws the InputError for a lattice.procs that does not fit the extents or the job; returns otherwise.
void check_requested(const std::array<int, 4>& dims, const std::array<int, 4>& global, int nranks) {
  const std::string key = "lattice.procs";
  for (int mu = 0; mu < 4; ++mu)  // the input reader already enforces this; kept for direct callers
    if (dims[mu] < 1)
      throw InputError(key + "[" + std::to_string(mu) + "]: must be > 0, got " + std::to_string(dims[mu]));
  for (int mu = 0; mu < 4; ++mu) {
    const std::string extent = std::string(kExtentNames[mu]) + " = " + std::to_string(global[mu]);
    const std::string procs = std::string(kProcNames[mu]) + " = " + std::to_string(dims[mu]);
    if (global[mu] % dims[mu] != 0)
      throw InputError(key + ": " + extent + " is not divisible by " + procs + suggestion(nranks, global));
    const int local = global[mu] / dims[mu];
    if (local % 2 != 0)
      throw InputError(key + ": local extent " + kExtentNames[mu] + "/" + kProcNames[mu] + " = " +
                       std::to_string(global[mu]) + "/" + std::to_string(dims[mu]) + " = " + std::to_string(local) +
                       " is odd; local extents must be even" + suggestion(nranks, global));
  }
  std::int64_t product = 1;
  for (int mu = 0; mu < 4; ++mu) product *= dims[mu];
  if (product != nranks)
    throw InputError(key + ": " + format_int4(dims) + " has " + ranks_phrase(product) + " but the job has " +
                     std::to_string(nranks) + suggestion(nranks, global));
}

}  // namespace

std::array<int, 4> ProcessGrid::local_extents(const std::array<int, 4>& global) const {
  std::array<int, 4> local{};
  for (int mu = 0; mu < 4; ++mu) local[mu] = global[mu] / dims[mu];
  return local;
}

std::array<int, 4> ProcessGrid::origin(const std::array<int, 4>& global) const {
  std::array<int, 4> o{};
  for (int mu = 0; mu < 4; ++mu) o[mu] = coords[mu] * (global[mu] / dims[mu]);
  return o;
}

// Every ordered factorisation nranks = dims[0] dims[1] dims[2] dims[3] is tried (nranks has few divisors, so this
// is cheap even for thousands of ranks).
std::optional<std::array<int, 4>> choose_process_grid(int nranks, const std::array<int, 4>& global) {
  if (nranks < 1) return std::nullopt;
  std::optional<std::array<int, 4>> best;
  std::int64_t best_cost = 0;
  for (int a = 1; a <= nranks; ++a) {
    if (nranks % a != 0) continue;
    const int ra = nranks / a;
    for (int b = 1; b <= ra; ++b) {
      if (ra % b != 0) continue;
      const int rb = ra / b;
      for (int c = 1; c <= rb; ++c) {
        if (rb % c != 0) continue;
        const std::array<int, 4> dims{a, b, c, rb / c};
        if (!divides_evenly(dims, global)) continue;
        const std::int64_t cost = halo_cost(dims, global);
        if (!best || cost < best_cost || (cost == best_cost && splits_later_directions_more(dims, *best))) {
          best = dims;
          best_cost = cost;
        }
      }
    }
  }
  return best;
}

ProcessGrid make_process_grid(const Communicator& comm, const std::array<int, 4>& global,
                              const std::optional<std::array<int, 4>>& requested,
                              const std::array<bool, 4>& force_halo) {
  const int nranks = comm.size();
  ProcessGrid grid;
  if (requested) {
    check_requested(*requested, global, nranks);
    grid.dims = *requested;
  } else {
    const auto chosen = choose_process_grid(nranks, global);
    if (!chosen)
      throw InputError("lattice.extents: no process grid of " + ranks_phrase(nranks) + " divides " +
                       format_int4(global) +
                       " into even local extents (use a rank count whose factors divide the extents)");
    grid.dims = *chosen;
  }

  // All ranks reach this point together (same input), so the collective calls below match.
  const int periods[4] = {1, 1, 1, 1};
  MPI_Cart_create(comm.handle(), 4, grid.dims.data(), periods, /*reorder=*/0, &grid.cart);
  int cart_rank = 0;
  MPI_Comm_rank(grid.cart, &cart_rank);
  MPI_Cart_coords(grid.cart, cart_rank, 4, grid.coords.data());
  for (int mu = 0; mu < 4; ++mu) {
    MPI_Cart_shift(grid.cart, mu, 1, &grid.bwd[mu], &grid.fwd[mu]);  // source = coords - 1, dest = coords + 1
    grid.partitioned[mu] = grid.dims[mu] > 1 || force_halo[mu];
  }
  return grid;
}

void free_process_grid(ProcessGrid& grid) {
  if (grid.cart != MPI_COMM_NULL) MPI_Comm_free(&grid.cart);
}

}  // namespace emprism
