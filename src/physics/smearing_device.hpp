// smearing_device.hpp: source smearing (src/physics/smearing.hpp's conventions) on the device, in double precision:
// the spatial links of timeslice t0 copied into a slice box with a one-site halo, smeared link_steps times by
// kernels/link_smearing.hpp's LinkSmearStep (APE or stout), their spatial plaquette summed on the device in the host's
// order, and the quark smearing of a spinor field by kernels/quark_smearing.hpp's QuarkSmearStep with those links
// (timeslice t0 copied into a box, `steps` launches, copied back). The per-site code is the host SourceSmearer's, so
// on the CPU backend every link, the plaquette and the smeared field have its bits; on a GPU they agree to rounding.
// Halos (links after each step, the field before each step; edges included for the staples) are filled on the device
// by the periodic wrap where no spatial direction is partitioned, else through a host copy of the box and comm's
// fill_host_halo (tags 700..713 links, 720..733 field, as the host's).
// Also the point source built on the device (make_point_source_device: sources.hpp's point source, no host field).
// Metrics rows: "smearing_slice_links" (the slice's links into the box, once), "link_smearing" (each step with its
// halo; counted work smearing.hpp's kLinkSmearing*PerSite), "smearing_plaquette" (once), "quark_smearing" (each step
// with its halo), "point_source".
// Who may call: the constructor is collective over all ranks of comm (the plaquette's sum) and, when a spatial
// direction is partitioned, over the ranks holding t0 (link halos); apply is collective over the ranks holding t0 when
// a spatial direction is partitioned (every rank may call it; the others return at once).
#pragma once

#include <array>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/smearing.hpp"

namespace emprism {

// f = the point source at global site `site`, component 3 * spin + colour (zero on ranks without the site).
void make_point_source_device(MetricsRegistry& metrics, const Geometry& g, const std::array<int, 4>& site, int spin,
                              int colour, SpinorField<double>& f);

class SourceSmearing {
 public:
  // The links of timeslice t0 (0 <= t0 < Lt) of this rank's block of u (u's halo is not read), smeared on the device.
  // u.geometry() must outlive this object; `grid` (nullptr: one rank, periodic wrap) is copied, its cart communicator
  // must stay valid while apply is called; comm == nullptr: the plaquette of this rank's block only (NaN where the
  // block does not hold t0). Throws std::invalid_argument for t0 outside the lattice or negative step counts.
  SourceSmearing(MetricsRegistry& metrics, const HostGauge& u, int t0, const SmearingParams& cfg,
                 const ProcessGrid* grid, Communicator* comm);
  // The same from a device copy of the field in HostGauge's storage layout (ext: the block with its halo, the halo
  // not read), geometry g.
  SourceSmearing(MetricsRegistry& metrics, const SU3<double>* ext, const Geometry& g, int t0, const SmearingParams& cfg,
                 const ProcessGrid* grid, Communicator* comm);

  // Smears timeslice t0 of field in place (the other timeslices untouched); no-op for kind None or 0 steps.
  void apply(SpinorField<double>& field) const;
  // SourceSmearer::spatial_plaquette of the smeared links.
  double spatial_plaquette() const { return plaquette_; }
  bool holds_timeslice() const { return holds_t0_; }
  // The smeared links of the slice box as SourceSmearer::links() holds them (tests; empty where the block does not
  // hold t0).
  std::vector<SU3<double>> download_links() const;

 private:
  SourceSmearing(MetricsRegistry& metrics, const Geometry& g, int t0, const SmearingParams& cfg,
                 const ProcessGrid* grid);
  void smear_links(Communicator* comm);
  void fill_link_halo(Buffer<SU3<double>>& links) const;
  void fill_halo(Buffer<Spinor<double>>& box) const;

  MetricsRegistry& metrics_;
  const Geometry& geom_;
  SmearingParams cfg_;
  int t0_, t_local_;
  bool holds_t0_;
  SliceBoxArg box_;
  bool has_grid_, staged_halo_;
  ProcessGrid grid_;
  Buffer<SU3<double>> links_;  // [box site * 3 + i]
  double plaquette_ = 1.0;
};

}  // namespace emprism
