// process_grid.hpp: the 4-D Cartesian process grid over MPI ranks (comm/ holds no physics).
// Direction mu = 0,1,2,3 = x,y,z,t as everywhere. Rank coordinates follow MPI_Cart_create (no reordering, so
// the Slurm/mpirun rank placement is kept). A direction is "partitioned" when its hops go through the halo
// exchange: dims[mu] > 1, or forced by comm.force_halo (then a rank is its own neighbour).
// Who may call: make_process_grid is collective over the communicator.
#pragma once

#include <mpi.h>

#include <array>
#include <optional>

namespace emprism {

class Communicator;

struct ProcessGrid {
  std::array<int, 4> dims{1, 1, 1, 1};    // ranks per direction
  std::array<int, 4> coords{0, 0, 0, 0};  // this rank's coordinates in the grid
  std::array<int, 4> fwd{0, 0, 0, 0};     // rank of the forward neighbour (coords[mu] + 1, periodic)
  std::array<int, 4> bwd{0, 0, 0, 0};     // rank of the backward neighbour
  std::array<bool, 4> partitioned{false, false, false, false};
  // The Cartesian communicator (ranks equal those of the communicator it was made from). ProcessGrid is a plain
  // value that is copied freely; whoever called make_process_grid frees cart (free_process_grid) when done with it.
  MPI_Comm cart = MPI_COMM_NULL;

  std::array<int, 4> local_extents(const std::array<int, 4>& global) const;
  std::array<int, 4> origin(const std::array<int, 4>& global) const;
  bool any_partitioned() const { return partitioned[0] || partitioned[1] || partitioned[2] || partitioned[3]; }
};

// The factorisation of nranks into 4 factors that divides the extents with even local extents and has the
// smallest halo surface (sum over split directions of the local face volume, both sides); ties broken
// towards splitting t first, then z, y, x. Returns std::nullopt when none exists.
// Exactly: every ordered dims with dims[0] dims[1] dims[2] dims[3] = nranks is a candidate; it is valid when
// global[mu] % dims[mu] == 0 and local[mu] = global[mu] / dims[mu] is even and >= 2 for every mu; its cost is
//   sum over mu with dims[mu] > 1 of 2 * (local[0] local[1] local[2] local[3] / local[mu]).
// The smallest cost wins; among equal costs the larger dims[3] wins, then the larger dims[2], dims[1], dims[0]
// (reverse lexicographic order, larger first). E.g. 8 ranks on [8, 8, 8, 16]: [1, 1, 1, 8] and [1, 1, 2, 4] both
// cost 1024, [1, 1, 1, 8] wins. Pure function, no MPI.
std::optional<std::array<int, 4>> choose_process_grid(int nranks, const std::array<int, 4>& global);

// Builds the grid for the communicator's ranks. `requested` is lattice.procs (nullopt: choose). Throws
// emprism::InputError naming lattice.procs or lattice.extents, the rank count and a grid that would work
// (or saying none exists), identically on every rank. Checks of `requested`, first failure reported: each entry
// >= 1, then per direction x..t divisibility and even local extent, then the product against the rank count:
//   "lattice.procs: Lz = 8 is not divisible by pz = 3; e.g. lattice.procs = [1, 1, 1, 8]"
//   "lattice.procs: local extent Lt/pt = 16/16 = 1 is odd; local extents must be even; e.g. ..."
//   "lattice.procs: [2, 2, 1, 1] has 4 ranks but the job has 8; e.g. lattice.procs = [1, 1, 1, 8]"
// where the suggestion is choose_process_grid's answer or, if none, "; no process grid of 8 ranks divides
// lattice.extents = [...] into even local extents". Without `requested` and no valid grid:
//   "lattice.extents: no process grid of 6 ranks divides [8, 8, 8, 16] into even local extents (use a rank
//   count whose factors divide the extents)".
// Errors are thrown before any MPI call; then MPI_Cart_create (periodic, no reorder), MPI_Cart_coords and
// MPI_Cart_shift fill coords, fwd and bwd; partitioned[mu] = dims[mu] > 1 || force_halo[mu].
ProcessGrid make_process_grid(const Communicator& comm, const std::array<int, 4>& global,
                              const std::optional<std::array<int, 4>>& requested,
                              const std::array<bool, 4>& force_halo);

// Frees grid.cart (MPI_Comm_free) and sets it to MPI_COMM_NULL; nothing when it is already null. Collective over the
// ranks of the grid.
void free_process_grid(ProcessGrid& grid);

}  // namespace emprism
