// smearing_device.hpp: the quark smearing of a SourceSmearer (src/physics/smearing.hpp) applied on the device to a
// double-precision spinor field: its smeared slice links uploaded once, timeslice t0 copied into a box with a one-site
// halo, `steps` launches of kernels/quark_smearing.hpp's QuarkSmearStep (the host's per-site code: the CPU backend
// gives SourceSmearer::apply's bits), and the box copied back. The halo is filled on the device by the periodic wrap
// where no spatial direction is partitioned, else through a host copy of the box and comm's fill_host_halo.
// Also the point source built on the device (make_point_source_device: sources.hpp's point source, no host field).
// Metrics rows: "quark_smearing" (each step with its halo), "smearing_links_upload" (once), "point_source".
// Who may call: apply is collective over the ranks holding t0 when a spatial direction is partitioned (every rank may
// call it; the others return at once); the constructor is rank-local.
#pragma once

#include <array>

#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/physics/smearing.hpp"

namespace emprism {

// f = the point source at global site `site`, component 3 * spin + colour (zero on ranks without the site).
void make_point_source_device(MetricsRegistry& metrics, const Geometry& g, const std::array<int, 4>& site, int spin,
                              int colour, SpinorField<double>& f);

class SourceSmearing {
 public:
  // s must outlive this object; g is the geometry of the fields apply is given.
  SourceSmearing(MetricsRegistry& metrics, const SourceSmearer& s, const Geometry& g);
  // Smears timeslice t0 of field in place (the other timeslices untouched); no-op for kind None or 0 steps.
  void apply(SpinorField<double>& field) const;

 private:
  void fill_halo(Buffer<Spinor<double>>& box) const;

  MetricsRegistry& metrics_;
  const SourceSmearer& smearer_;
  const Geometry& geom_;
  SliceBoxArg box_;
  bool staged_halo_;
  Buffer<SU3<double>> links_;
};

}  // namespace emprism
