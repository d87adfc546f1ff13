// heatbath.hpp: quenched SU(3) gauge field generation with the Wilson plaquette action,
//   S = -(beta / 3) sum_{x, mu < nu} Re tr P_{mu nu}(x),   beta = 6 / g^2 (beta = 6.0: <P> = 0.5937),
// by Cabibbo-Marinari heatbath (Kennedy-Pendleton SU(2) updates in the three SU(2) subgroups (0,1), (1,2),
// (0,2); a rejection from the Haar measure where the SU(2) coupling is small, exact at beta = 0) plus
// microcanonical overrelaxation in the same subgroups. Links are updated block by block: for mu = 0..3 and
// parity 0, 1 (global parity, docs/conventions.md section 1) all links U_mu(x) of that parity at once (their staples
// only involve links of other directions or of the other parity), then the halo copies of the U_mu are refreshed
// (refresh_link_halo: fill_halo restricted to one direction, a quarter of the data).
// Staple of U_mu(x): A = sum_{nu != mu} [U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
//                                        + U_nu(x+mu-nu)^dag U_mu(x-nu)^dag U_nu(x-nu)],
// a link is drawn with weight exp((beta / 3) Re tr(U_mu(x) A)).
// Random numbers: uniform4(seed, stream, global site, index) with
//   stream = kHeatbathStreamBase | sweep (sweep < 2^31; streams below 2^31 stay free for other uses),
//   index  = mu << 20 | subgroup << 16 | attempt (attempt 0: the SU(2) direction, 1..65535: accept/reject),
// i.e. keyed by (seed, sweep, global site, mu, subgroup, attempt): the field after a sweep does not depend on
// the process grid, the rank count or the thread count, bit for bit (all per-link arithmetic is identical).
// The per-link updates are kernels/heatbath.hpp's functors, run here by OpenMP loops and on the device by
// src/physics/heatbath_device.hpp (the same code: on the CPU backend the same bits).
// Threads: OpenMP over the sites of a block when it has >= 4096 sites (local volume >= 8192), else one thread.
// Who may call: heatbath_sweep, overrelax_sweep and thermalise are collective over the grid (halo exchange,
// and thermalise's plaquette over comm); the halo of u need not be filled on entry (it is refreshed first).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/heatbath.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

struct HeatbathParams {
  double beta = 6.0;       // Wilson gauge coupling 6 / g^2 (>= 0)
  int or_per_sweep = 4;    // overrelaxation passes after the heatbath pass of each compound sweep
  std::uint64_t seed = 1;  // RNG key; the sweep index, site, mu, subgroup and attempt are the counter
};

// RNG streams used by the heatbath: kHeatbathStreamBase (kernels/heatbath.hpp) | sweep_index (cast to RngStream).
constexpr std::uint64_t kMaxHeatbathSweepIndex = 0x7fffffffu;

// One compound sweep: a heatbath pass over all links (8 blocks (mu, parity), halo refreshed after each), then
// p.or_per_sweep overrelaxation passes, then every local link projected back to SU(3) and the halo refreshed.
// `sweep_index` (<= kMaxHeatbathSweepIndex, else std::invalid_argument) keys the random numbers: use each once.
void heatbath_sweep(HostGauge& u, const HeatbathParams& p, std::uint64_t sweep_index, const ProcessGrid* grid);

// std::invalid_argument unless sweep_index <= kMaxHeatbathSweepIndex and p.beta >= 0 (heatbath_sweep's checks, also
// the device's).
void check_heatbath_args(const HeatbathParams& p, std::uint64_t sweep_index);

// One overrelaxation pass over all links (8 blocks, halo refreshed after each); deterministic, keeps the action.
void overrelax_sweep(HostGauge& u, const ProcessGrid* grid);

// `sweeps` compound sweeps with indices first_sweep, first_sweep + 1, ...; returns the global plaquette
// (collective over comm) after each.
std::vector<double> thermalise(HostGauge& u, const HeatbathParams& p, int sweeps, const ProcessGrid* grid,
                               Communicator& comm, std::uint64_t first_sweep = 0);

// The staple sum A of U_mu(x) above (local x; reads the halo). Exposed for tests.
SU3<double> wilson_staple(const HostGauge& u, const int x[4], int mu);

// Refreshes the halo copies of the links of direction mu only, with the same result for them as
// u.fill_halo(grid) (which moves all four directions); used after each (mu, parity) block. Collective over the grid.
void refresh_link_halo(HostGauge& u, int mu, const ProcessGrid* grid);

// Test hook: the polar component x0 of the SU(2) heatbath draw with coupling alpha (density
// sqrt(1 - x0^2) exp(alpha x0) on [-1, 1]), keyed by (seed, site) in the sweep-0 stream; NaN if every attempt
// was rejected (never in practice).
double su2_heatbath_x0(double alpha, std::uint64_t seed, std::uint64_t site);

}  // namespace emprism
