// test_heatbath_mpi.cpp: the distributed heatbath (src/physics/heatbath.hpp) is bitwise identical to the same sweeps on
// one rank, run by ctest under mpiexec:  test_heatbath_mpi [px py pz pt [force_mask, e.g. 1001]]
// (no arguments: the grid chosen by make_process_grid). On the global lattice 8x4x4x8, every rank thermalises its
// block (cold start: 3 compound sweeps with 2 overrelaxation passes each; hot start: 2 sweeps), rank 0 gathers
// every link of every block and compares it bit for bit with the same sweeps on the whole lattice on one rank
// (MPI_COMM_SELF, grid nullptr); also every rank checks that refresh_link_halo fills the halo copies of one
// direction exactly as fill_halo does; the plaquettes returned by thermalise agree to 1e-13 (the global sums add the
// rank partials in another order). On the CPU backend the same for the device path (heatbath_device.hpp's
// thermalise_on_device on the distributed grid, its own halo exchange) against the host's one-rank run. Prints each
// failure and returns non-zero if any check failed. Convention: mu = 0..3 = x, y, z, t; links in natural order
// (gauge_to_natural). Who may call: ctest via mpiexec.
#include <mpi.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/backend/runtime.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/heatbath.hpp"
#include "src/physics/heatbath_device.hpp"
#include "tests/support/mpi_test.hpp"

namespace {

using namespace emprism;
using Cd = std::complex<double>;

const Extents kGlobal{8, 4, 4, 8};
using emprism::test::check;

struct Run {
  std::vector<Cd> links;  // natural order of the block (36 complex per site)
  std::vector<double> plaq;
};

// device: the sweeps of src/physics/heatbath_device.hpp with its halo kernels (packing, exchange_faces, unpacking).
Run run(const Geometry& geom, const ProcessGrid* grid, Communicator& comm, bool hot, bool device = false) {
  HostGauge u = hot ? make_random_gauge(geom, 77, 1.0) : make_unit_gauge(geom);
  HeatbathParams p;
  p.beta = 5.8;
  p.or_per_sweep = 2;
  p.seed = 20240611;
  Run r;
  MetricsRegistry metrics;
  const int sweeps = hot ? 2 : 3;
  const std::uint64_t first = hot ? 100 : 0;
  r.plaq = device ? thermalise_on_device(metrics, u, p, sweeps, grid, comm, first, LinkHaloPath::Kernels)
                  : thermalise(u, p, sweeps, grid, comm, first);
  r.links = gauge_to_natural(u);
  return r;
}

// The blocks of all ranks in global natural order (on rank 0; empty elsewhere).
std::vector<Cd> gather(const Communicator& comm, const Geometry& geom, const std::vector<Cd>& local) {
  const int n = static_cast<int>(local.size() * 2);
  std::vector<double> all(comm.rank() == 0 ? static_cast<std::size_t>(n) * comm.size() : 0);
  MPI_Gather(local.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, comm.handle());
  int my_origin[4] = {geom.origin()[0], geom.origin()[1], geom.origin()[2], geom.origin()[3]};
  std::vector<int> origins(comm.rank() == 0 ? 4 * comm.size() : 0);
  MPI_Gather(my_origin, 4, MPI_INT, origins.data(), 4, MPI_INT, 0, comm.handle());
  std::vector<Cd> global;
  if (comm.rank() != 0) return global;
  const Geometry whole = Geometry::single_rank(kGlobal);
  global.resize(static_cast<std::size_t>(whole.local_volume()) * 36);
  std::vector<char> seen(static_cast<std::size_t>(whole.local_volume()), 0);
  for (int r = 0; r < comm.size(); ++r) {
    const Geometry part(kGlobal, geom.local(),
                        {origins[4 * r], origins[4 * r + 1], origins[4 * r + 2], origins[4 * r + 3]});
    for (std::int64_t lex = 0; lex < part.local_volume(); ++lex) {
      int x[4];
      part.local_coords(lex, x);
      const std::int64_t g = part.global_lex(x);
      ++seen[static_cast<std::size_t>(g)];
      for (int k = 0; k < 36; ++k) {
        const std::size_t src = (static_cast<std::size_t>(r) * local.size() + lex * 36 + k) * 2;
        global[g * 36 + k] = Cd(all[src], all[src + 1]);
      }
    }
  }
  for (char s : seen) check(s == 1, "the blocks do not tile the lattice");
  return global;
}

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  using namespace emprism;
  Communicator& comm = test.comm();
  const std::optional<std::array<int, 4>> procs = test.procs();
  const std::array<bool, 4> force = test.force_halo();
  ProcessGrid grid = make_process_grid(comm, kGlobal, procs, force);
  const Geometry geom(kGlobal, grid.local_extents(kGlobal), grid.origin(kGlobal), grid.partitioned);
  if (comm.rank() == 0)
    std::printf("ranks %d, grid %dx%dx%dx%d, local %dx%dx%dx%d\n", comm.size(), grid.dims[0], grid.dims[1],
                grid.dims[2], grid.dims[3], geom.local()[0], geom.local()[1], geom.local()[2], geom.local()[3]);

  // refresh_link_halo(u, mu, grid) gives the halo copies of U_mu that fill_halo(grid) gives (every rank checks its
  // own extended block; make_random_gauge leaves a local wrap in the halo, wrong across ranks).
  for (int mu = 0; mu < 4; ++mu) {
    HostGauge u = make_random_gauge(geom, 5, 1.0);
    HostGauge full = u;
    full.fill_halo(&grid);
    refresh_link_halo(u, mu, &grid);
    long bad = 0;
    int x[4];
    for (x[3] = -1; x[3] <= geom.local()[3]; ++x[3])
      for (x[2] = -1; x[2] <= geom.local()[2]; ++x[2])
        for (x[1] = -1; x[1] <= geom.local()[1]; ++x[1])
          for (x[0] = -1; x[0] <= geom.local()[0]; ++x[0])
            if (std::memcmp(&u.at(x, mu), &full.at(x, mu), sizeof(SU3<double>)) != 0) ++bad;
    check(bad == 0, "rank " + std::to_string(comm.rank()) + ": refresh_link_halo(mu = " + std::to_string(mu) +
                        ") differs from fill_halo at " + std::to_string(bad) + " sites");
  }

  // The device path only where the device is the host (its bits are the host's; a GPU's agree to rounding, which
  // tests/gpu/test_gpu_heatbath.cpp checks).
  for (int variant = 0; variant < (backend::device_is_host() ? 4 : 2); ++variant) {
    const bool hot = variant % 2 == 1, device = variant >= 2;
    const std::string start = std::string(hot ? "hot" : "cold") + (device ? " (device path)" : "");
    const Run dist = run(geom, &grid, comm, hot, device);
    const std::vector<Cd> links = gather(comm, geom, dist.links);
    if (comm.rank() == 0) {
      Communicator self(MPI_COMM_SELF);
      const Geometry whole = Geometry::single_rank(kGlobal);
      const Run one = run(whole, nullptr, self, hot);
      std::size_t differ = 0;
      double max_diff = 0;
      for (std::size_t i = 0; i < links.size(); ++i)
        if (std::memcmp(&links[i], &one.links[i], sizeof(Cd)) != 0) {
          ++differ;
          max_diff = std::fmax(max_diff, std::abs(links[i] - one.links[i]));
        }
      std::printf("%s start: %zu of %zu link entries differ from one rank (max |diff| %.2e); plaquettes:",
                  start.c_str(), differ, links.size(), max_diff);
      for (std::size_t s = 0; s < one.plaq.size(); ++s) std::printf(" %.12f/%.12f", dist.plaq[s], one.plaq[s]);
      std::printf("\n");
      check(differ == 0, start + " start: the distributed links are not bitwise those of one rank");
      check(dist.plaq.size() == one.plaq.size(), start + " start: plaquette count");
      for (std::size_t s = 0; s < one.plaq.size() && s < dist.plaq.size(); ++s)
        check(std::fabs(dist.plaq[s] - one.plaq[s]) < 1e-13,
              start + " start: plaquette after sweep " + std::to_string(s));
      check(one.plaq.back() < 0.9, start + " start: the field did not move");
    }
  }
  free_process_grid(grid);
}
