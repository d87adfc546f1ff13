// gauge_setup.hpp: the gauge field a run solves on: unit, random, read from a file, or thermalised by the heatbath
// (gauge.source); and the gauge generation task of [generate], which continues the heatbath and writes an ensemble
// of configuration files. The plaquette of every heatbath sweep is logged.
// Who may call: every rank (collective over the process grid: halo exchanges, reductions, distributed file I/O).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

// Where the field solved on comes from, for /gauge's attributes file, format and checksum: the file read ("ok": its
// checksums matched the links read; "none": it has none) or the last configuration [generate] wrote ("written": with
// the checksums of these links); "none" for unit, random and heatbath fields.
struct GaugeOrigin {
  std::string file = "none", format = "none", checksum = "none";
};

// This rank's block of the gauge field, halo filled (collective); `origin` (optional) says where it came from. The
// heatbath runs on the device (src/physics/heatbath_device.hpp, timed in metrics) and logs each sweep as it ends
// (sweep k of n, plaquette, seconds per sweep, ETA). Random fields are generated on the device (timed in metrics),
// with their plaquette and link trace: `observed` (optional) receives those where the field was made with them
// (random fields; left empty otherwise).
HostGauge make_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                     MetricsRegistry& metrics, GaugeOrigin* origin = nullptr,
                     std::optional<GaugeObservables>* observed = nullptr);

// The field a run solves on, where it was made: on the device for a unit, random, read or thermalised field (its
// operator and the smearing read it there, no host copy), on the host with [generate] or an ensemble member. host()
// makes the host copy on its first call (row "setup_gauge_download"): only host-only consumers call it
// (output.write_gauge, links of 12 or 8 reals checked on the host, [generate]).
class RunGauge {
 public:
  explicit RunGauge(HostGauge u) : host_(std::move(u)) {}
  RunGauge(DeviceGauge u, MetricsRegistry& metrics) : device_(std::move(u)), metrics_(&metrics) {}
  const Geometry& geometry() const { return device_ ? device_->geometry() : host_->geometry(); }
  HostGauge& host();
  const DeviceGauge* device() const { return device_ ? &*device_ : nullptr; }

 private:
  std::optional<DeviceGauge> device_;
  std::optional<HostGauge> host_;
  MetricsRegistry* metrics_ = nullptr;
};

// make_gauge's field as a RunGauge (collective). Without [generate] it is made on the device and stays there: the
// unit and random fields generated there, a file read straight to the device (io/gauge: a timeslice at a time, no
// host copy of the block; `observed` receives its plaquette and link trace), the heatbath's field handed over by the
// device heatbath (no download). With [generate], and for ensembles, as make_gauge makes it.
RunGauge make_run_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                        MetricsRegistry& metrics, GaugeOrigin* origin, std::optional<GaugeObservables>* observed);

// "random (width 0.5, seed 3)", "file conf.lime", "heatbath (beta 6, 200 sweeps, ...)", "unit": for the log.
std::string gauge_description(const Config& cfg);

// [generate]: after the thermalisation, `count` configurations `every` sweeps apart, each written to a file
// <prefix>_<sweep>.<ildg|nersc> (collective). The last configuration is the one solved on.
// The path of [generate]'s configuration c (0-based): "<prefix>_<sweep, 6 digits>.<ildg|nersc>".
std::string generate_path(const Config& cfg, int c);
// Before any work (local): [generate]'s directory exists and is writable, and no configuration file it will write
// exists unless output.overwrite. InputError naming generate.prefix otherwise.
void check_generate_output(const Config& cfg);

class GenerateTask {
 public:
  // The sweeps run on the device (src/physics/heatbath_device.hpp), timed in metrics.
  GenerateTask(const Config& cfg, MetricsRegistry& metrics) : cfg_(cfg), metrics_(metrics) {}
  // `origin` (optional) receives the last file written (the field solved on).
  void execute(HostGauge& u, const ProcessGrid& grid, Communicator& comm, GaugeOrigin* origin = nullptr) const;

 private:
  const Config& cfg_;
  MetricsRegistry& metrics_;
};

}  // namespace emprism::run
