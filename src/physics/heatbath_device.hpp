// heatbath_device.hpp: the quenched heatbath of src/physics/heatbath.hpp run on the device: the same conventions,
// blocks, RNG counters and per-link code (kernels/heatbath.hpp's functors, one launch per (mu, parity) block over its
// sites), on a double-precision copy of the field in the host field's extended layout (the local block with its
// one-site halo). After each block the halo copies of U_mu are refreshed on the device: by the periodic wrap (one
// launch) when no direction is split over ranks, else direction by direction as comm's fill_host_halo does (the
// faces of U_mu packed on the device, swapped with the neighbours through a pinned host copy by exchange_faces,
// unpacked; the periodic copy for unsplit directions). On the CPU backend fill_host_halo itself does it (LinkHaloPath).
// On the CPU backend the result has heatbath_sweep's bits; on a GPU it agrees to rounding (contracted multiply-adds).
// The field does not depend on the process grid. Metrics rows: "heatbath_update" and "heatbath_overrelax" (each block;
// flops and minimum bytes of kernels/heatbath.hpp), "heatbath_halo" (each refresh of one direction's halo),
// "heatbath_reunitarise", "heatbath_plaquette" (the device's plaquette and its sums), "heatbath_upload" and
// "heatbath_download". Who may call: the constructor and download are rank-local; sweep, overrelax and thermalise are
// collective over the grid (halo exchange), plaquette over comm.
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

// How the halo of U_mu is refreshed: Auto = the kernels on a GPU, the host's fill_host_halo on the CPU backend (its
// device memory is host memory: the host path itself, without a parallel region per refresh); Kernels = the kernels
// on any backend (tests of the kernels' exchange on CPU ranks).
enum class LinkHaloPath { Auto, Kernels };

class DeviceHeatbath {
 public:
  // Copies u (every link of the box; the halo need not be filled: sweep refreshes it first) to the device. grid as
  // heatbath_sweep's (nullptr: one rank, periodic wrap); it must outlive this object, and so must metrics.
  DeviceHeatbath(MetricsRegistry& metrics, const HostGauge& u, const ProcessGrid* grid,
                 LinkHaloPath halo = LinkHaloPath::Auto);
  // The same from a field already on the device (taken over: no copy).
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
  // The device copy handed over as a DeviceGauge (halo filled after a sweep; no copy); nothing else may be called
  // afterwards.
  DeviceGauge release();

 private:
  ExtLinks links() const;
  void make_faces();
  template <typename F>
  void update_block(const char* row, double flops_per_link, int mu, const F& f);
  void overrelax_pass();
  void refresh(int mu);
  void refresh_all();
  void exchange(int mu, int k);

  MetricsRegistry& metrics_;
  const Geometry& geom_;
  const ProcessGrid* grid_;
  bool host_halo_;      // refresh through fill_host_halo (LinkHaloPath::Auto on the CPU backend)
  bool split_ = false;  // some direction is split over ranks
  Buffer<SU3<double>> u_;
  Buffer<SU3<double>> low_, high_, from_fwd_, from_bwd_;  // device faces (split directions only)
  SU3<double>* stage_ = nullptr;                          // pinned host copies of the four faces
  std::size_t face_links_ = 0;                            // links per face buffer (the largest slab)
  DeviceGaugeObservables observables_;                    // the plaquette's buffers, kept between sweeps
};

// thermalise(u, p, sweeps, grid, comm, first_sweep) through DeviceHeatbath: u uploaded, the sweeps run on the
// device with the plaquette after each, u downloaded. Collective over the grid.
std::vector<double> thermalise_on_device(MetricsRegistry& metrics, HostGauge& u, const HeatbathParams& p, int sweeps,
                                         const ProcessGrid* grid, Communicator& comm, std::uint64_t first_sweep = 0,
                                         LinkHaloPath halo = LinkHaloPath::Auto);

}  // namespace emprism
