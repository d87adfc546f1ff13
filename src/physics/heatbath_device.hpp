// heatbath_device.hpp: the quenched heatbath of src/physics/heatbath.hpp run on the device: the same conventions,
// blocks, RNG counters and per-link code (kernels/heatbath.hpp's functors, one launch per (mu, parity) block over its
// sites), on a double-precision working copy in kernels/heatbath.hpp's SoaLinks layout (structure of arrays, even-odd
// ordered: coalesced loads). A direction not split over ranks has no halo copies: the view wraps to the periodic
// image, so on one rank no halo is refreshed at all. A split direction keeps a one-site halo layer, refreshed after
// each block of U_mu on the device as comm's fill_host_halo does (direction by direction, k = 0..3: the faces of U_mu
// packed on the device, swapped with the neighbours through a pinned host copy by exchange_faces, unpacked).
// On the CPU backend the result has heatbath_sweep's bits; on a GPU it agrees to rounding (contracted multiply-adds).
// The field does not depend on the process grid. Metrics rows: "heatbath_update" and "heatbath_overrelax" (each block;
// flops and minimum bytes of kernels/heatbath.hpp), "heatbath_halo" (each refresh of one direction's halo layers: only
// with a split direction), "heatbath_reunitarise", "heatbath_plaquette" (the device's plaquette and its sums),
// "heatbath_upload" and "heatbath_download" (with the change of layout), "heatbath_reorder" (a device field taken
// over or handed back: the change of layout on the device). Who may call: the constructor and download
// are rank-local; sweep, overrelax and thermalise are collective over the grid (halo exchange), plaquette over comm.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/heatbath.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/physics/heatbath.hpp"

namespace emprism {

// Kept for the callers: both refresh a split direction's halo layers with the device kernels on every backend (the
// working copy's layout is not the host field's, so comm's fill_host_halo no longer applies).
enum class LinkHaloPath { Auto, Kernels };

class DeviceHeatbath {
 public:
  // Copies u (every link of the box; the halo need not be filled: sweep refreshes it first) to the device. grid as
  // heatbath_sweep's (nullptr: one rank, periodic wrap); it must outlive this object, and so must metrics.
  DeviceHeatbath(MetricsRegistry& metrics, const HostGauge& u, const ProcessGrid* grid,
                 LinkHaloPath halo = LinkHaloPath::Auto);
  // The same from a field already on the device (reordered into the working copy on the device; u's buffer freed).
  DeviceHeatbath(MetricsRegistry& metrics, DeviceGauge u, const ProcessGrid* grid,
                 LinkHaloPath halo = LinkHaloPath::Auto);
  ~DeviceHeatbath();
  DeviceHeatbath(const DeviceHeatbath&) = delete;
  DeviceHeatbath& operator=(const DeviceHeatbath&) = delete;

  // heatbath_sweep(u, p, sweep_index, grid) on the device copy (std::invalid_argument as there).
  void sweep(const HeatbathParams& p, std::uint64_t sweep_index);
  // overrelax_sweep(u, grid) on the device copy.
  void overrelax();
  // plaquette(u, &comm) of the device copy (its halo is filled after sweep and overrelax).
  double plaquette(Communicator& comm);
  // The device copy to u (every link of the box, halo included); u must have this object's geometry.
  void download(HostGauge& u) const;
  // The device copy handed over as a DeviceGauge in the host field's layout (reordered on the device, halo filled
  // from the halo layers or the periodic images; no host copy); nothing else may be called afterwards.
  DeviceGauge release();

 private:
  void allocate();
  void upload_ext(Buffer<SU3<double>>& ext);
  SoaLinks links() const;
  ExtLinks ext_links(Buffer<SU3<double>>& ext) const;
  template <typename F>
  void update_block(const char* row, double flops_per_link, int mu, const F& f);
  void overrelax_pass();
  void refresh(int mu);
  void refresh_all();
  void exchange(int mu, int k);

  MetricsRegistry& metrics_;
  const Geometry& geom_;
  const ProcessGrid* grid_;
  int split_[4] = {0, 0, 0, 0};  // 1 where the direction is split over ranks (a halo layer to refresh)
  bool any_split_ = false;
  std::int64_t sites_ = 0;  // stored sites (the local block and the split directions' halo layers)
  Buffer<Complex<double>> u_;
  Buffer<double> plaq_terms_, plaq_blocks_;               // the plaquette's per-site terms and block sums
  Buffer<SU3<double>> low_, high_, from_fwd_, from_bwd_;  // device faces (split directions only)
  SU3<double>* stage_ = nullptr;                          // pinned host copies of the four faces
  std::size_t face_links_ = 0;                            // links per face buffer (the largest slab)
};

// thermalise(u, p, sweeps, grid, comm, first_sweep) through DeviceHeatbath: u uploaded, the sweeps run on the
// device with the plaquette after each, u downloaded. Collective over the grid.
std::vector<double> thermalise_on_device(MetricsRegistry& metrics, HostGauge& u, const HeatbathParams& p, int sweeps,
                                         const ProcessGrid* grid, Communicator& comm, std::uint64_t first_sweep = 0,
                                         LinkHaloPath halo = LinkHaloPath::Auto);

}  // namespace emprism
