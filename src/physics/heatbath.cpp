// heatbath.cpp: Cabibbo-Marinari heatbath (Kennedy-Pendleton) and overrelaxation for the Wilson gauge action,
// checkerboarded over (mu, parity) blocks with a halo refresh after each (see heatbath.hpp for the conventions
// and the RNG counters): kernels/heatbath.hpp's per-site functors run by OpenMP loops on the host. Collective over
// the process grid.
#include "src/physics/heatbath.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace emprism {

namespace {

// Blocks of fewer sites run on one thread: a block is then ~1 ms of work, and the barrier of a parallel region per
// block costs more than it saves, badly so on an oversubscribed machine (CI running tests side by side).
constexpr int kMinSitesForThreads = 4096;

ExtLinks ext_links(HostGauge& u) {
  ExtLinks v;
  v.u = u.storage().data();
  for (int d = 0; d < 4; ++d) v.e[d] = u.geometry().local()[d] + 2;
  return v;
}

LinkBlockArg<ExtLinks> block_arg(HostGauge& u, int mu, int parity) {
  return LinkBlockArg<ExtLinks>{u.geometry().arg(), ext_links(u), mu, parity};
}

// Runs the per-site functor f (thread = cb of the block's parity) over the block (OpenMP over the sites), then
// refreshes the halo copies of the links of direction mu (the only ones f changes).
template <typename F>
void update_block(HostGauge& u, int mu, const ProcessGrid* grid, const F& f) {
  const int vh = u.geometry().half_volume();
#pragma omp parallel for schedule(static) if (vh >= kMinSitesForThreads)
  for (int cb = 0; cb < vh; ++cb) f(cb);
  refresh_link_halo(u, mu, grid);
}

// The whole halo, as u.fill_halo(grid) (same result, less copying).
void refresh_halo(HostGauge& u, const ProcessGrid* grid) {
  for (int mu = 0; mu < 4; ++mu) refresh_link_halo(u, mu, grid);
}

// One overrelaxation pass (the halo must be filled on entry).
void overrelax_pass(HostGauge& u, const ProcessGrid* grid) {
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block(u, mu, grid, OverrelaxLinks<ExtLinks>{block_arg(u, mu, parity)});
}

void reunitarise(HostGauge& u, const ProcessGrid* grid) {
  const std::int64_t vol = u.geometry().local_volume();
  const ReunitariseLinks<ExtLinks> f{ext_links(u)};
#pragma omp parallel for schedule(static) if (vol >= 2 * kMinSitesForThreads)
  for (std::int64_t lex = 0; lex < vol; ++lex) f(static_cast<int>(lex));
  refresh_halo(u, grid);
}

}  // namespace

SU3<double> wilson_staple(const HostGauge& u, const int x[4], int mu) { return wilson_staple_of(u, x, mu); }

void refresh_link_halo(HostGauge& u, int mu, const ProcessGrid* grid) { u.fill_link_halo(mu, grid); }

void check_heatbath_args(const HeatbathParams& p, std::uint64_t sweep_index) {
  if (sweep_index > kMaxHeatbathSweepIndex)
    throw std::invalid_argument("heatbath_sweep: sweep index " + std::to_string(sweep_index) + " exceeds " +
                                std::to_string(kMaxHeatbathSweepIndex));
  if (!(p.beta >= 0)) throw std::invalid_argument("heatbath_sweep: beta must be >= 0");
}

void heatbath_sweep(HostGauge& u, const HeatbathParams& p, std::uint64_t sweep_index, const ProcessGrid* grid) {
  check_heatbath_args(p, sweep_index);
  const std::uint32_t stream = kHeatbathStreamBase | static_cast<std::uint32_t>(sweep_index);
  refresh_halo(u, grid);
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block(u, mu, grid, HeatbathLinks<ExtLinks>{block_arg(u, mu, parity), p.beta, p.seed, stream});
  for (int k = 0; k < p.or_per_sweep; ++k) overrelax_pass(u, grid);
  reunitarise(u, grid);
}

void overrelax_sweep(HostGauge& u, const ProcessGrid* grid) {
  refresh_halo(u, grid);
  overrelax_pass(u, grid);
}

double su2_heatbath_x0(double alpha, std::uint64_t seed, std::uint64_t site) {
  double x0;
  if (!draw_su2_x0(alpha, seed, kHeatbathStreamBase, site, 0, x0)) return std::nan("");
  return x0;
}

std::vector<double> thermalise(HostGauge& u, const HeatbathParams& p, int sweeps, const ProcessGrid* grid,
                               Communicator& comm, std::uint64_t first_sweep) {
  std::vector<double> plaq;
  plaq.reserve(static_cast<std::size_t>(sweeps > 0 ? sweeps : 0));
  for (int s = 0; s < sweeps; ++s) {
    heatbath_sweep(u, p, first_sweep + static_cast<std::uint64_t>(s), grid);
    plaq.push_back(plaquette(u, &comm));
  }
  return plaq;
}

}  // namespace emprism
