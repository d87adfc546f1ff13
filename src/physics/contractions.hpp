// contractions.hpp: meson two-point functions from a point-source quark propagator (src/physics/propagator.hpp), the
// effective mass and the PCAC mass. Host code, double precision.
//
// Functions:
//   gamma_unit, gamma_mu, gamma_5, operator*   sparse 4x4 spin matrices (one nonzero per row) and their product
//   meson_channels, find_meson_channel         the table of channels below (find: nullptr for unknown names)
//   meson_correlators                          C_{Gsnk,Gsrc}(p, t) of the requested channels and momenta
//   effective_mass                             m(t) from c(t)/c(t+1) in the cosh (s = +1) or sinh (s = -1) form
//   pcac_mass                                  [C_axial(t+1) - C_axial(t-1)] / (4 C_pion(t))
//
// Conventions (docs/conventions.md sections 3 and 9):
//   S(x)[sink][source] = prop.at(lex, sink, source), sink/source index = 3 * spin + colour, the solutions of
//   M S = delta(x, x0) for a source at the global site x0; lex is the local natural index (field_io.hpp), the
//   global coordinate of a local site is geom.origin()[mu] + local[mu].
//   Gamma matrices: chiral basis, hermitian; g1, g2, g3 = mu 0, 1, 2 = x, y, z; g4 = mu 3 = t;
//   g5 = g1 g2 g3 g4 = diag(1, 1, -1, -1). "g4g5" is the matrix product g4 * g5, "gig4" = g_i * g4 and so on.
//
//   C_{Gsnk,Gsrc}(p, t) = sum_{x spatial, x_t = (x0_t + t) mod Lt} exp(-i p.(x - x0)) tr[Gsnk S(x) Gsrc g5 S(x)^dag g5]
//   t = 0..Lt-1 relative to the source timeslice, p = 2 pi n / L in the three spatial directions (n integer;
//   the boundary phases theta do not enter p), trace over spin and colour. By g5-hermiticity,
//   S(x0, x) = g5 S(x, x0)^dag g5, so this is tr[Gsnk S(x, x0) Gsrc S(x0, x)] = -<(dbar Gsnk u)(x) (ubar Gsrc d)(x0)>
//   (the minus of the fermion loop is dropped, so the pion tr[S S^dag] is positive).
//
//   Channels (name: averaged (Gsnk, Gsrc) pairs, time parity s with C(Lt - t) = s C(t), t = 1..Lt-1):
//     pion         (g5, g5)                          s = +1
//     axial        (g4g5, g5)                        s = -1   (numerator of the PCAC mass)
//     axial_axial  (g4g5, g4g5)                      s = +1
//     rho          (gi, gi),     average i = 1..3    s = +1
//     rho_t        (gig4, gig4), average i = 1..3    s = +1
//     a0           (1, 1)                            s = +1
//     a1           (gig5, gig5), average i = 1..3    s = +1
//   The parities follow from time reversal, T = g4 g5: with T^-1 G T = eps_G G the pair (Gsnk, Gsrc) has
//   s = eps_snk * eps_src (eps = -1 for g5 and gig4 and gig5, +1 for 1, gi, g4g5); exact in the free field, and
//   on the gauge-field ensemble average. All seven channels are real at p = 0 site by site on every gauge field
//   (g5 G^dag g5 = +-G with the same sign for sink and source); at p != 0, C(p)^* = C(-p).
//
// Collective: meson_correlators calls Communicator::sum once (every rank must call it, with the same channels
// and momenta); a null Communicator* means the geometry is the whole lattice on one rank.
// Who may call: anyone on the rank holding the propagator; effective_mass and pcac_mass are pure functions.
#pragma once

#include <array>
#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "src/lattice/geometry.hpp"
#include "src/physics/propagator.hpp"

namespace emprism {

// A 4x4 spin matrix with one nonzero per row (a phase times a permutation):
//   G[row][column[row]] = phase[row], all other entries 0;  (G psi)_row = phase[row] * psi[column[row]].
struct Gamma {
  std::array<int, 4> column;
  std::array<std::complex<double>, 4> phase;

  std::complex<double> element(int row, int col) const { return column[row] == col ? phase[row] : 0.0; }
};

Gamma gamma_unit();
Gamma gamma_mu(int mu);  // mu = 0, 1, 2, 3 = g1, g2, g3 (x, y, z), g4 (t); throws std::invalid_argument otherwise
Gamma gamma_5();         // g1 g2 g3 g4 = diag(1, 1, -1, -1)
Gamma operator*(const Gamma& a, const Gamma& b);  // the matrix product a b (again one nonzero per row)

struct MesonChannel {
  std::string name;
  std::vector<std::pair<Gamma, Gamma>> pairs;  // (Gsnk, Gsrc), averaged
  int time_parity;                             // s in C(Lt - t) = s C(t)
  std::string gamma_sink, gamma_source;        // "g5", "g4g5", "gi", "gig4", "1", "gig5" (for output attributes)
};

// The table of the conventions above, in that order: pion, axial, axial_axial, rho, rho_t, a0, a1.
const std::vector<MesonChannel>& meson_channels();
const MesonChannel* find_meson_channel(const std::string& name);  // nullptr if unknown

struct Correlator {
  std::string channel;
  std::array<int, 3> momentum;               // n: p = 2 pi n / L
  std::vector<std::complex<double>> values;  // values[t], t = 0..Lt-1 from the source timeslice
};

// Every (channel, momentum) pair, channels in the given order (empty: all of meson_channels()), momenta inner.
// source_site: global coordinates of x0. Collective over comm (one Communicator::sum); every rank gets the full
// result. Throws std::invalid_argument for an unknown channel name, a propagator of the wrong size or a source
// site outside the lattice.
std::vector<Correlator> meson_correlators(const Geometry& g, const Propagator& s, const std::array<int, 4>& source_site,
                                          const std::vector<std::string>& channels,
                                          const std::vector<std::array<int, 3>>& momenta, Communicator* comm);

// The pieces of meson_correlators that the device contraction (src/physics/contraction_device.hpp) shares:
//   check_source_site       throws std::invalid_argument for a source site outside the lattice
//   select_meson_channels   the channels named (all of meson_channels() for none); std::invalid_argument if unknown
//   phase_table             phase[(m * 3 + d) * lmax + k] = exp(-2 pi i ((n_d k) mod L_d) / L_d), lmax = max L_d
//   correlators_from_planes the local (t, z) planes' sums partial[plane][channel][momentum] (plane = z + Lz t, local)
//                           added in plane order per timeslice, summed over comm (collective), as Correlators
void check_source_site(const Extents& global, const std::array<int, 4>& source_site);
std::vector<const MesonChannel*> select_meson_channels(const std::vector<std::string>& channels);
struct PhaseTable {
  int lmax = 0;
  std::vector<std::complex<double>> phase;
};
PhaseTable phase_table(const Extents& global, const std::vector<std::array<int, 3>>& momenta);
std::vector<Correlator> correlators_from_planes(const Geometry& g, const std::array<int, 4>& source_site,
                                                const std::vector<const MesonChannel*>& chans,
                                                const std::vector<std::array<int, 3>>& momenta,
                                                const std::vector<std::complex<double>>& partial, Communicator* comm);

// Effective mass of a real correlator c[t], t = 0..Lt-1 (Lt = c.size()), of time parity s = +1 or -1 on a periodic
// lattice: m(t), t = 0..Lt-2, is the positive root of c(t)/c(t+1) = f(m,t)/f(m,t+1), f(m,t) = exp(-m t) +
// s exp(-m (Lt - t)), to a relative 1e-12 or better. The result has Lt entries; entry Lt-1 is NaN, and so is every
// t where no positive root exists. With a = Lt/2 - t and b = a - 1, f(m,t) is proportional to cosh(m a) (s = +1)
// or sinh(m a) (s = -1), and r(m) = f(m,t)/f(m,t+1) is strictly monotonic in m > 0:
//   s = +1: |a| > |b| (t < Lt/2): r rises from 1 to infinity;  |a| < |b| (t >= Lt/2): r falls from 1 to 0.
//   s = -1: a, b of one sign (t < Lt/2 - 1 or t > Lt/2): r runs monotonically from a/b (m -> 0) to infinity
//           (t < Lt/2 - 1) or to 0 (t > Lt/2); t = Lt/2 - 1 and t = Lt/2 (f = 0 at Lt/2) have no root.
// So a root exists, and is unique, exactly when the ratio c(t)/c(t+1) lies strictly inside the range of r;
// in particular never when c changes sign between t and t+1 or either is zero or not finite.
// Throws std::invalid_argument if s is not +1 or -1.
std::vector<double> effective_mass(const std::vector<double>& c, int time_parity);

// PCAC mass m(t) = [axial(t+1) - axial(t-1)] / (4 pion(t)), indices mod Lt, t = 0..Lt-1 (NaN where pion(t) = 0),
// from the real parts of the axial (g4g5, g5) and pion (g5, g5) correlators at p = 0. The Euclidean PCAC relation
// d_mu (psibar g_mu g5 psi) = 2 m psibar g5 psi holds for the operator of docs/conventions.md s. 4, whose naive part is
// 2 kappa (g_mu d_mu + m0) (forward hop (1 - g_mu), so the symmetric derivative enters with +g_mu); both
// correlators carry the same (dropped) sign, so d_t C_axial = 2 m C_pion with d_t the symmetric difference.
// Free field: C_axial = -tr[g4 S S^dag] < 0 and rising on the first half (forward quarks are (1 + g4)/2
// projected), so m > 0 at 2 <= t <= Lt-2 (checked at kappa = 0.12, m0 = 1/(2 kappa) - 4 > 0); t = 0, 1, Lt-1 use
// C_axial(0) on the source timeslice (zero by time reversal in the free field) and are contact terms (negative in
// the free field). At large t only the p = 0 quark mode survives (e^E = 1 + m0), for which m(t) is exactly
// sinh(2E) / 2 = ((1 + m0)^2 - (1 + m0)^-2) / 4 = m0 - m0^2 / 2 + O(m0^3) (0.156604 for kappa = 0.12, m0 = 0.166667).
// Throws std::invalid_argument on sizes that differ or are zero.
std::vector<double> pcac_mass(const std::vector<double>& axial, const std::vector<double>& pion);

// Counted work of meson_correlators on `sites` local sites, for the metrics registry: per site 1376 flops per
// (sink, source) gamma pair (16 spin blocks of 9 complex multiply-adds, 8 flops each, and their phases) plus 8 per
// channel and momentum (the momentum phase), and the propagator read once (144 complex<double> per site).
struct ContractionCost {
  double flops = 0, bytes = 0;
};
ContractionCost contraction_cost(std::int64_t sites, const std::vector<std::string>& channels, int momenta);

}  // namespace emprism
