// test_smearing_mpi.cpp: distributed source smearing (src/physics/smearing.hpp) equals the same smearing on one rank,
// run by ctest under mpiexec:  test_smearing_mpi [px py pz pt [force_mask, e.g. 1111]]  (no arguments: the grid chosen
// by make_process_grid). On the global lattice 8x8x4x8 with the random gauge field make_random_gauge(geom, 11, 0.7)
// (decomposition independent), for Wuppertal and Jacobi smearing each with unsmeared, APE and stout links, every rank
// smears a point source at (7, 3, 2, 5) (next to the rank boundaries of x, y and z and to the global x boundary;
// t0 = 5 lies on one time-rank only when t is split) and a gaussian noise source on t0; rank 0 gathers the smeared
// fields and the smeared slice links of all blocks and compares them, and the spatial plaquette, with the same
// computation on the whole lattice on rank 0 alone (MPI_COMM_SELF, grid nullptr): relative difference <= 1e-12
// (the per-site arithmetic is the same, so the fields agree bitwise in practice; the plaquette's global sum adds the
// rank partials in another order). On every grid the device's smearing (src/physics/smearing_device.hpp: link smearing,
// plaquette and quark smearing as kernels, halos by the periodic wrap or host-staged) is checked against the host's on
// the same block: bitwise on the CPU backend. Prints each failure and returns non-zero if any check failed.
// Convention: mu = 0..3 = x, y, z, t; fields in local natural order (lex * 12 + spin * 3 + colour).
// Who may call: ctest via mpiexec.
#include <mpi.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "src/lattice/field_io.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/smearing.hpp"
#include "src/physics/smearing_device.hpp"
#include "src/physics/sources.hpp"
#include "tests/support/mpi_test.hpp"

namespace {

using namespace emprism;
using Cd = std::complex<double>;

const Extents kGlobal{8, 8, 4, 8};
constexpr int kT0 = 5;
const std::array<int, 4> kSite{7, 3, 2, kT0};
constexpr double kTol = 1e-12;
using emprism::test::check;

SmearingParams make_cfg(QuarkSmearingKind kind, LinkSmearingKind link_kind) {
  SmearingParams c;
  c.kind = kind;
  c.steps = 6;
  c.weight = kind == QuarkSmearingKind::Wuppertal ? 0.4 : 0.13;
  c.link_kind = link_kind;
  c.link_steps = link_kind == LinkSmearingKind::Ape ? 2 : link_kind == LinkSmearingKind::Stout ? 3 : 0;
  c.link_weight = link_kind == LinkSmearingKind::Ape ? 0.6 : 0.1;
  return c;
}

std::string describe(const SmearingParams& c) {
  const char* q = c.kind == QuarkSmearingKind::Wuppertal ? "wuppertal" : "jacobi";
  const char* l = c.link_kind == LinkSmearingKind::None  ? "none"
                  : c.link_kind == LinkSmearingKind::Ape ? "ape"
                                                         : "stout";
  return std::string(q) + " with " + l + " links";
}

// The point source and the gaussian noise source restricted to t0, on this block.
std::vector<std::vector<Cd>> make_sources(const Geometry& geom) {
  SourceParams point;
  point.kind = SourceKind::Point;
  point.site = kSite;
  point.spin = 2;
  point.colour = 1;
  SourceParams noise;
  noise.kind = SourceKind::Random;
  noise.seed = 99;
  noise.noise = NoiseKind::Gaussian;
  std::vector<Cd> a = make_source(geom, point, {0, 0, 0, 0}), b = make_source(geom, noise, {0, 0, 0, 0});
  for (std::int64_t lex = 0; lex < geom.local_volume(); ++lex) {
    int x[4];
    geom.local_coords(lex, x);
    if (geom.origin()[3] + x[3] != kT0)
      for (int k = 0; k < 12; ++k) b[static_cast<std::size_t>(lex * 12 + k)] = 0.0;
  }
  return {a, b};
}

// The smeared links of timeslice t0 in natural order of the block: 27 complex per site (V_0, V_1, V_2), zero off t0.
std::vector<Cd> slice_links(const Geometry& geom, const SourceSmearer& s) {
  std::vector<Cd> out(static_cast<std::size_t>(geom.local_volume()) * 27);
  if (!s.holds_timeslice()) return out;
  for (std::int64_t lex = 0; lex < geom.local_volume(); ++lex) {
    int x[4];
    geom.local_coords(lex, x);
    if (geom.origin()[3] + x[3] != kT0) continue;
    for (int i = 0; i < 3; ++i)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          const Complex<double> v = s.link(x, i).e[a][b];
          out[static_cast<std::size_t>(lex * 27 + i * 9 + a * 3 + b)] = {v.re, v.im};
        }
  }
  return out;
}

struct Result {
  std::vector<std::vector<Cd>> fields;  // smeared sources
  std::vector<Cd> links;                // slice_links
  double plaquette = 0;
};

// |a - b| / |b| and whether a and b are bitwise equal.
std::pair<double, bool> compare(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  double num = 0, den = 0;
  bool same = a.size() == b.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
    same = same && a[i] == b[i];
  }
  return {den > 0 ? std::sqrt(num / den) : std::sqrt(num), same};
}

// The device's smearing (src/physics/smearing_device.hpp) on the same block against the host's s: the slice links
// with their halo, the plaquette and the smeared fields, bitwise on the CPU backend, else within kTol.
void check_device(const HostGauge& u, const ProcessGrid* grid, Communicator& comm, const SmearingParams& cfg,
                  const SourceSmearer& s, const std::vector<std::vector<Cd>>& sources, const Result& host) {
  const Geometry& geom = u.geometry();
  MetricsRegistry metrics;
  const SourceSmearing d(metrics, u, kT0, cfg, grid, &comm);
  const bool exact = backend::device_is_host();
  const std::vector<SU3<double>> links = d.download_links();
  bool same = links.size() == s.links().size();
  for (std::size_t k = 0; same && k < links.size(); ++k)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        same = same &&
               (exact ? links[k].e[a][b].re == s.links()[k].e[a][b].re && links[k].e[a][b].im == s.links()[k].e[a][b].im
                      : std::abs(links[k].e[a][b].re - s.links()[k].e[a][b].re) <= kTol &&
                            std::abs(links[k].e[a][b].im - s.links()[k].e[a][b].im) <= kTol);
  check(same, describe(cfg) + ": device-smeared slice links differ from the host's");
  check(exact ? d.spatial_plaquette() == host.plaquette : std::fabs(d.spatial_plaquette() - host.plaquette) <= kTol,
        describe(cfg) + ": device spatial plaquette differs from the host's");
  for (std::size_t k = 0; k < sources.size(); ++k) {
    SpinorField<double> f(geom);
    spinor_from_natural(geom, sources[k], f);
    d.apply(f);
    const auto [diff, bits] = compare(spinor_to_natural(geom, f), host.fields[k]);
    check(exact ? bits : diff <= kTol, describe(cfg) + ": device-smeared source differs from the host's");
  }
}

Result run(const Geometry& geom, const ProcessGrid* grid, Communicator& comm, const SmearingParams& cfg) {
  const HostGauge u = make_random_gauge(geom, 11, 0.7);
  const SourceSmearer s(u, kT0, cfg, grid, &comm);
  Result r;
  r.plaquette = s.spatial_plaquette();
  const std::vector<std::vector<Cd>> sources = make_sources(geom);
  r.fields = sources;
  for (auto& f : r.fields) s.apply(f);
  r.links = slice_links(geom, s);
  check_device(u, grid, comm, cfg, s, sources, r);
  return r;
}

// The blocks of all ranks (n complex per site) in global natural order (on rank 0; empty elsewhere).
std::vector<Cd> gather(const Communicator& comm, const Geometry& geom, const std::vector<Cd>& local, int n) {
  const int count = static_cast<int>(local.size() * 2);
  std::vector<double> all(comm.rank() == 0 ? static_cast<std::size_t>(count) * comm.size() : 0);
  MPI_Gather(local.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, 0, comm.handle());
  int my_origin[4] = {geom.origin()[0], geom.origin()[1], geom.origin()[2], geom.origin()[3]};
  std::vector<int> origins(comm.rank() == 0 ? 4 * comm.size() : 0);
  MPI_Gather(my_origin, 4, MPI_INT, origins.data(), 4, MPI_INT, 0, comm.handle());
  std::vector<Cd> global;
  if (comm.rank() != 0) return global;
  const Geometry whole = Geometry::single_rank(kGlobal);
  global.resize(static_cast<std::size_t>(whole.local_volume()) * n);
  std::vector<char> seen(static_cast<std::size_t>(whole.local_volume()), 0);
  for (int r = 0; r < comm.size(); ++r) {
    const Geometry part(kGlobal, geom.local(),
                        {origins[4 * r], origins[4 * r + 1], origins[4 * r + 2], origins[4 * r + 3]});
    for (std::int64_t lex = 0; lex < part.local_volume(); ++lex) {
      int x[4];
      part.local_coords(lex, x);
      const std::int64_t g = part.global_lex(x);
      ++seen[static_cast<std::size_t>(g)];
      for (int k = 0; k < n; ++k) {
        const std::size_t src = (static_cast<std::size_t>(r) * local.size() + lex * n + k) * 2;
        global[static_cast<std::size_t>(g * n + k)] = Cd(all[src], all[src + 1]);
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

  const Geometry whole = Geometry::single_rank(kGlobal);
  for (QuarkSmearingKind q : {QuarkSmearingKind::Wuppertal, QuarkSmearingKind::Jacobi})
    for (LinkSmearingKind l : {LinkSmearingKind::None, LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
      const SmearingParams cfg = make_cfg(q, l);
      const std::string name = describe(cfg);
      const Result dist = run(geom, &grid, comm, cfg);
      std::vector<std::vector<Cd>> fields;
      for (const auto& f : dist.fields) fields.push_back(gather(comm, geom, f, 12));
      const std::vector<Cd> links = gather(comm, geom, dist.links, 27);
      if (comm.rank() != 0) continue;
      Communicator self(MPI_COMM_SELF);
      const Result one = run(whole, nullptr, self, cfg);
      const char* source_names[2] = {"point", "noise"};
      for (std::size_t k = 0; k < fields.size(); ++k) {
        const auto [diff, same] = compare(fields[k], one.fields[k]);
        std::printf("%s, %s source: relative difference %.2e%s\n", name.c_str(), source_names[k], diff,
                    same ? " (bitwise equal)" : "");
        check(diff <= kTol, name + ", " + source_names[k] + " source: differs from one rank");
      }
      const auto [ldiff, lsame] = compare(links, one.links);
      std::printf("%s: smeared links relative difference %.2e%s; plaquette %.15f / %.15f\n", name.c_str(), ldiff,
                  lsame ? " (bitwise equal)" : "", dist.plaquette, one.plaquette);
      check(ldiff <= kTol, name + ": smeared links differ from one rank");
      check(std::fabs(dist.plaquette - one.plaquette) <= kTol * std::fabs(one.plaquette),
            name + ": spatial plaquette differs from one rank");
      // The test means something only if the point source crossed the rank boundaries: (1, 4, 1) lies across the
      // x, y and z boundaries from (7, 3, 2), four hops away.
      const int far[4] = {1, 4, 1, kT0};
      double mag = 0;
      for (int k = 0; k < 12; ++k)
        mag += std::norm(fields[0][static_cast<std::size_t>(whole.global_lex(far) * 12 + k)]);
      check(mag > 1e-12, name + ": the smeared point source did not reach (1, 4, 1)");
    }
  free_process_grid(grid);
}
