// smearing.hpp: gauge-covariant source smearing for hadron spectroscopy, host code in double precision.
//   SourceSmearer        the spatial links V_i (i = 0,1,2 = x,y,z) of one global timeslice t0, smeared link_steps
//                        times (APE or stout, spatial staples only), and the quark smearing (Wuppertal or Jacobi)
//                        of a colour-spinor field restricted to t0 with those links
//   link_step_functor, quark_step_functor  the per-site steps (kernels/link_smearing.hpp: exp_i_su3,
//                        project_su3_maxtrace, ape_link and stout_link; kernels/quark_smearing.hpp) for given arrays
// Conventions: docs/conventions.md section 8 and SmearingParams below:
//   staple_ij(x) = V_j(x) V_i(x+j) V_j(x+i)^dag + V_j(x-j)^dag V_i(x-j) V_j(x-j+i),  j != i spatial;
//   a link step updates every link from the previous step's links (never in place);
//   H psi(x) = sum_i [ V_i(x) psi(x+i) + V_i(x-i)^dag psi(x-i) ] on each spin, no fermion boundary phases;
//   wuppertal: psi <- (psi + alpha H psi) / (1 + 6 alpha);  jacobi: psi_{n+1} = psi_0 + kappa_s H psi_n.
// Fields are this rank's block in local natural order (src/lattice/field_io.hpp): element lex * 12 + spin * 3 + colour.
// Distribution: ranks whose block holds t0 exchange the one-site spatial halo of the slice links (edges included,
// for the staples) and of the field with their x, y, z neighbours in grid->cart (comm's fill_host_halo, tags
// 700..733), or use the periodic wrap where grid == nullptr or grid->dims[mu] == 1. Ranks without t0 exchange nothing
// (their spatial neighbours do not hold t0 either). Who may call: the SourceSmearer constructor is collective over all
// ranks of comm (one global sum), apply is collective over the ranks holding t0 (every rank may call it; the others
// return at once); the free functions are pure.
#pragma once

#include <array>
#include <complex>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/link_smearing.hpp"
#include "kernels/quark_smearing.hpp"
#include "kernels/spinor.hpp"
#include "kernels/su3.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

enum class QuarkSmearingKind { None, Wuppertal, Jacobi };
enum class LinkSmearingKind { None, Ape, Stout };

// Source smearing of a propagator: gauge-covariant smearing of the point source on its timeslice, in the three
// spatial directions, with spatially APE- or stout-smeared links used for the smearing only (the Dirac operator
// always sees the unsmeared links).
//   wuppertal: psi <- (psi + alpha H psi) / (1 + 6 alpha), `steps` times              (weight = alpha > 0)
//   jacobi:    psi <- psi_0 + kappa_s H psi, `steps` times (sum_n (kappa_s H)^n psi_0) (weight = kappa_s > 0)
//   H psi(x) = sum_{i=x,y,z} [ V_i(x) psi(x+i) + V_i(x-i)^dag psi(x-i) ]  (V: smeared links, no boundary phases)
//   ape:   V <- Proj_SU3[ (1 - alpha) V_i + (alpha / 4) sum_{j != i spatial} staples_ij ] (link_weight = alpha)
//   stout: V <- exp(i Q) V_i, Q from rho * sum_{j != i spatial} staples_ij (Morningstar-Peardon; link_weight = rho)
struct SmearingParams {
  QuarkSmearingKind kind = QuarkSmearingKind::None;
  int steps = 0;      // > 0 when kind != None
  double weight = 0;  // wuppertal alpha or jacobi kappa_s, > 0
  LinkSmearingKind link_kind = LinkSmearingKind::None;
  int link_steps = 0;      // >= 0
  double link_weight = 0;  // ape alpha in (0, 1], stout rho > 0
};

// Spatial links of global timeslice t0, smeared, and the quark smearing that uses them.
// Counted work of one smearing step per slice site, for the metrics registry (double precision):
//   link step:  3 links x 4 staples x 2 SU(3) products of 198 flops, plus the weighted sums (3 x 4 x 18 + 3 x 36);
//               the SU(3) projection (APE) or exponential (stout) is not counted; bytes: 3 links read, 3 written.
//   quark step: 4 spins x (6 hops x 66 + 5 x 6 to sum them + 18 to combine); bytes: the spinor read and written
//               and the 3 forward links (each read once).
constexpr double kLinkSmearingFlopsPerSite = 3 * 4 * 2 * 198 + 3 * 4 * 18 + 3 * 36;
constexpr double kLinkSmearingBytesPerSite = 2 * 3 * 144;
constexpr double kQuarkSmearingFlopsPerSite = 4 * (6 * 66 + 5 * 6 + 18);
constexpr double kQuarkSmearingBytesPerSite = 2 * 192 + 3 * 144;
// MPI tags of the halo exchanges (comm/host_halo.hpp): links 700 + mu (to bwd), 710 + mu (to fwd); the field 720 + mu
// (to bwd), 730 + mu (to fwd).
constexpr int kSmearingLinkTag = 700;
constexpr int kSmearingFieldTag = 720;

class SourceSmearer {
 public:
  // Copies the spatial links of timeslice t0 (0 <= t0 < Lt) of this rank's block of u (u's halo is not read),
  // smears them cfg.link_steps times and computes their spatial plaquette. `grid` (nullptr: one rank, periodic
  // wrap) is copied; its cart communicator must stay valid while apply is called. comm == nullptr: the plaquette
  // is the average over this rank's block only (NaN where the block does not hold t0). Collective over all ranks of
  // comm. Throws std::invalid_argument for t0 outside the lattice or negative step counts.
  SourceSmearer(const HostGauge& u, int t0, const SmearingParams& cfg, const ProcessGrid* grid, Communicator* comm);

  // Smears timeslice t0 of `field` (this rank's block, local natural order, 12 complex<double> per site) in place
  // with cfg.kind; the sites of other timeslices are neither read nor written (a source living on t0 stays on
  // t0). kind == None: no-op. Throws std::invalid_argument if field.size() != 12 * local volume.
  void apply(std::vector<std::complex<double>>& field) const;

  // Average over the global timeslice t0 of the three spatial plaquettes Re tr P_ij / 3 of the smeared links (1 for
  // unit links); computed by the constructor, so this call is local.
  double spatial_plaquette() const { return plaquette_; }

  int timeslice() const { return t0_; }
  // Whether this rank's block holds global timeslice t0 (only then are link() and the smearing meaningful).
  bool holds_timeslice() const { return holds_t0_; }
  // Sites of timeslice t0 in this rank's block (0 where it does not hold t0): the work of one step is per site.
  std::int64_t slice_sites() const { return holds_t0_ ? std::int64_t(local_[0]) * local_[1] * local_[2] : 0; }
  // Smeared link V_i(x) at LOCAL spatial coordinates x of timeslice t0, -1 <= x[k] <= local[k] (the halo
  // included), i = 0, 1, 2. Only where holds_timeslice().
  const SU3<double>& link(const int x[3], int i) const { return links_[site(x) * 3 + static_cast<std::size_t>(i)]; }
  // The parameters, the smeared links of the slice box (halo filled; empty where the block does not hold t0) and the
  // process grid (nullptr: periodic wrap).
  const SmearingParams& params() const { return cfg_; }
  const std::vector<SU3<double>>& links() const { return links_; }
  const ProcessGrid* grid() const { return has_grid_ ? &grid_ : nullptr; }

 private:
  std::size_t site(const int x[3]) const { return box_.index(x); }
  void smear_links_once();
  void fill_link_halo();
  // One quark smearing step on the interior sites: out = wuppertal (psi + alpha H psi) / (1 + 6 alpha), or
  // jacobi psi0 + kappa_s H psi (psi's halo filled).
  void quark_step(const std::vector<Spinor<double>>& psi, const std::vector<Spinor<double>>& psi0,
                  std::vector<Spinor<double>>& out) const;

  SmearingParams cfg_;
  int t0_;
  bool holds_t0_;
  int t_local_;               // t0 - origin[3] on a rank holding t0
  std::array<int, 4> local_;  // local extents of the block
  HaloBox box_;               // the local timeslice with its one-site halo (x, y, z)
  bool has_grid_;
  Geometry geom_;  // of the block the field lives on (its index arithmetic)
  ProcessGrid grid_;
  std::vector<SU3<double>> links_;  // [site of the extended slice][i], i = 0, 1, 2
  double plaquette_ = 1.0;
};

// The per-site steps of a smearing with parameters cfg on the slice box `box` (Geometry::slice_halo_box; arrays of
// kernels/quark_smearing.hpp's layout): the host's SourceSmearer and the device's SourceSmearing build them alike.
LinkSmearStep link_step_functor(const HaloBox& box, const SmearingParams& cfg, const SU3<double>* in, SU3<double>* out);
QuarkSmearStep quark_step_functor(const HaloBox& box, const SmearingParams& cfg, const Spinor<double>* psi,
                                  const Spinor<double>* psi0, Spinor<double>* out, const SU3<double>* links);

}  // namespace emprism
