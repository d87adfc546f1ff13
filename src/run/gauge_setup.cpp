// gauge_setup.cpp: the run's gauge field and the gauge generation task (see gauge_setup.hpp).
#include "src/run/gauge_setup.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/physics/heatbath.hpp"
#include "src/physics/heatbath_device.hpp"
#include "src/run/progress.hpp"

namespace emprism::run {

namespace {

HeatbathParams heatbath_params(const GaugeConfig& g) {
  HeatbathParams p;
  p.beta = g.beta;
  p.or_per_sweep = g.or_per_sweep;
  p.seed = g.seed;
  return p;
}

// Heatbath sweeps first, first + 1, ... (`sweeps` of them) on the device (src/physics/heatbath_device.hpp), each logged
// as it ends (rank 0, flushed): "heatbath sweep k of n: plaquette P, s/sweep, ETA", n counting the thermalisation and
// [generate] together.
void run_sweeps(DeviceHeatbath& hb, const Config& cfg, int sweeps, std::uint64_t first, Communicator& comm) {
  const HeatbathParams p = heatbath_params(cfg.gauge);
  const GenerateConfig& gen = cfg.generate;
  const std::uint64_t total =
      static_cast<std::uint64_t>(cfg.gauge.sweeps) + (gen.enabled ? std::uint64_t(gen.count) * gen.every : 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < sweeps; ++i) {
    hb.sweep(p, first + static_cast<std::uint64_t>(i));
    const double plaq = hb.plaquette(comm);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("heatbath sweep {} of {}: plaquette {:.12f}, {:.3f} s/sweep, {}", first + i + 1, total, plaq,
                 elapsed / (i + 1), eta_text(elapsed, i + 1, static_cast<double>(total - first)));
  }
}

// run_sweeps on a host field: u uploaded, swept, downloaded.
void run_sweeps(HostGauge& u, const Config& cfg, int sweeps, std::uint64_t first, const ProcessGrid& grid,
                Communicator& comm, MetricsRegistry& metrics) {
  DeviceHeatbath hb(metrics, u, &grid);
  run_sweeps(hb, cfg, sweeps, first, comm);
  hb.download(u);
}

}  // namespace

std::string gauge_description(const Config& cfg) {
  const GaugeConfig& g = cfg.gauge;
  switch (g.source) {
    case GaugeSource::Random:
      return fmt::format("random (width {}, seed {})", g.width, g.seed);
    case GaugeSource::File:
      return "file " + g.file;
    case GaugeSource::Heatbath:
      return fmt::format("heatbath (beta {}, {} sweeps, {} overrelaxation per sweep, seed {})", g.beta, g.sweeps,
                         g.or_per_sweep, g.seed);
    case GaugeSource::Ensemble:
      return fmt::format("ensemble of {} configuration(s)", g.members.size());
    case GaugeSource::Unit:
      break;
  }
  return "unit";
}

HostGauge make_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                     MetricsRegistry& metrics, GaugeOrigin* origin, std::optional<GaugeObservables>* observed) {
  const GaugeConfig& g = cfg.gauge;
  switch (g.source) {
    case GaugeSource::Random: {  // halo included (each halo link generated where it lives)
      GaugeObservables obs;
      HostGauge u = make_random_gauge_on_device(metrics, geom, g.seed, g.width, &comm, observed ? &obs : nullptr);
      if (observed) *observed = obs;
      return u;
    }
    case GaugeSource::File: {
      HostGauge u(geom);
      io::GaugeFileInfo info;
      try {
        info = io::read_gauge_file(g.file, g.format, u, &grid, comm);
      } catch (const AgreedInputError& e) {  // "<file>: <reason>" on every rank alike: bad input, exit code 2
        throw AgreedInputError(std::string("gauge.file: ") + e.what());
      }
      spdlog::info("read {} ({}, {}-bit, checksum {})", g.file, info.format, info.precision_bits, info.checksum);
      if (origin) *origin = GaugeOrigin{g.file, info.format, info.checksum};
      return u;
    }
    case GaugeSource::Heatbath: {
      HostGauge u = make_unit_gauge(geom);
      u.fill_halo(&grid);
      run_sweeps(u, cfg, g.sweeps, 0, grid, comm, metrics);
      return u;
    }
    case GaugeSource::Ensemble:  // the run reads each member as gauge.source = "file" (ensemble_member())
      throw RuntimeFailure("make_gauge: an ensemble has one field per configuration; call it with ensemble_member()");
    case GaugeSource::Unit:
      break;
  }
  HostGauge u = make_unit_gauge(geom);
  u.fill_halo(&grid);
  return u;
}

HostGauge& RunGauge::host() {
  if (!host_) host_.emplace(download_gauge(*metrics_, *device_));
  return *host_;
}

namespace {

// gauge.source = "file" read straight to the device (io/gauge: the block with its halo, a timeslice at a time).
DeviceGauge read_gauge_device(const Config& cfg, const Geometry& geom, Communicator& comm, MetricsRegistry& metrics,
                              GaugeOrigin* origin, std::optional<GaugeObservables>* observed) {
  const GaugeConfig& g = cfg.gauge;
  DeviceGauge u(geom);
  io::GaugeFileInfo info;
  try {
    info = io::read_gauge_file(g.file, g.format, u, metrics, comm);
  } catch (const AgreedInputError& e) {  // "<file>: <reason>" on every rank alike: bad input, exit code 2
    throw AgreedInputError(std::string("gauge.file: ") + e.what());
  }
  spdlog::info("read {} ({}, {}-bit, checksum {})", g.file, info.format, info.precision_bits, info.checksum);
  if (origin) *origin = GaugeOrigin{g.file, info.format, info.checksum};
  if (observed) *observed = GaugeObservables{info.plaquette, info.link_trace};
  return u;
}

// u as a RunGauge, its plaquette and link trace computed on the device into `observed` (optional).
RunGauge observed_on_device(DeviceGauge u, Communicator& comm, MetricsRegistry& metrics,
                            std::optional<GaugeObservables>* observed) {
  if (observed) *observed = device_gauge_observables(metrics, u.geometry(), u.data(), &comm, "setup_gauge_observables");
  return RunGauge(std::move(u), metrics);
}

}  // namespace

RunGauge make_run_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                        MetricsRegistry& metrics, GaugeOrigin* origin, std::optional<GaugeObservables>* observed) {
  const GaugeConfig& g = cfg.gauge;
  if (cfg.generate.enabled || g.source == GaugeSource::Ensemble)
    return RunGauge(make_gauge(cfg, geom, grid, comm, metrics, origin, observed));
  switch (g.source) {
    case GaugeSource::Random: {
      GaugeObservables obs;  // halo included (each halo link generated where it lives)
      DeviceGauge u = make_random_gauge_device(metrics, geom, g.seed, g.width, &comm, observed ? &obs : nullptr);
      if (observed) *observed = obs;
      return RunGauge(std::move(u), metrics);
    }
    case GaugeSource::File:
      return RunGauge(read_gauge_device(cfg, geom, comm, metrics, origin, observed), metrics);
    case GaugeSource::Heatbath: {  // from the unit field on the device, handed over where it ends (no download)
      DeviceHeatbath hb(metrics, make_unit_gauge_device(metrics, geom), &grid);
      run_sweeps(hb, cfg, g.sweeps, 0, comm);
      return observed_on_device(hb.release(), comm, metrics, observed);
    }
    default:  // the unit field (halo included)
      return observed_on_device(make_unit_gauge_device(metrics, geom), comm, metrics, observed);
  }
}

std::string generate_path(const Config& cfg, int c) {
  const GenerateConfig& gen = cfg.generate;
  const std::int64_t sweep = std::int64_t(cfg.gauge.sweeps) + std::int64_t(gen.every) * (c + 1);
  return fmt::format("{}_{:06d}.{}", gen.prefix, sweep, gen.format == GaugeFormat::Ildg ? "ildg" : "nersc");
}

void check_generate_output(const Config& cfg) {
  if (!cfg.generate.enabled) return;
  const std::filesystem::path first(generate_path(cfg, 0));
  const std::string dir = first.parent_path().empty() ? std::string(".") : first.parent_path().string();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError("generate.prefix: directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError("generate.prefix: directory '" + dir + "' is not writable");
  if (cfg.output.overwrite) return;
  for (int c = 0; c < cfg.generate.count; ++c) {
    const std::string path = generate_path(cfg, c);
    if (std::filesystem::exists(path, ec))
      throw InputError("generate.prefix: '" + path + "' exists; set output.overwrite = true to replace it");
  }
}

void GenerateTask::execute(HostGauge& u, const ProcessGrid& grid, Communicator& comm, GaugeOrigin* origin) const {
  const GenerateConfig& gen = cfg_.generate;
  std::uint64_t sweep = static_cast<std::uint64_t>(cfg_.gauge.sweeps);
  for (int c = 0; c < gen.count; ++c) {
    run_sweeps(u, cfg_, gen.every, sweep, grid, comm, metrics_);
    sweep += static_cast<std::uint64_t>(gen.every);
    const std::string path = generate_path(cfg_, c);
    io::write_gauge_file(path, gen.format, u, &grid, comm);
    spdlog::info("configuration {} of {}: wrote {} (plaquette {:.12f})", c + 1, gen.count, path, plaquette(u, &comm));
    if (origin) *origin = GaugeOrigin{path, gen.format == GaugeFormat::Ildg ? "ildg" : "nersc", "written"};
  }
}

}  // namespace emprism::run
