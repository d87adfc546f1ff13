// gauge_setup.cpp: the run's gauge field and the gauge generation task (see gauge_setup.hpp).
#include "src/run/gauge_setup.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/physics/heatbath.hpp"

namespace emprism::run {

namespace {

HeatbathParams heatbath_params(const GaugeConfig& g) {
  HeatbathParams p;
  p.beta = g.beta;
  p.or_per_sweep = g.or_per_sweep;
  p.seed = g.seed;
  return p;
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
    case GaugeSource::Unit:
      break;
  }
  return "unit";
}

HostGauge make_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm,
                     MetricsRegistry& metrics) {
  const GaugeConfig& g = cfg.gauge;
  switch (g.source) {
    case GaugeSource::Random:  // halo included (each halo link generated where it lives)
      return make_random_gauge_on_device(metrics, geom, g.seed, g.width);
    case GaugeSource::File: {
      HostGauge u(geom);
      const io::GaugeFileInfo info = io::read_gauge_file(g.file, g.format, u, &grid, comm);
      spdlog::info("read {} ({}, {}-bit, checksum {})", g.file, info.format, info.precision_bits, info.checksum);
      return u;
    }
    case GaugeSource::Heatbath: {
      HostGauge u = make_unit_gauge(geom);
      u.fill_halo(&grid);
      const std::vector<double> plaq = thermalise(u, heatbath_params(g), g.sweeps, &grid, comm);
      for (std::size_t i = 0; i < plaq.size(); ++i)
        spdlog::info("heatbath sweep {:5d}: plaquette {:.12f}", i + 1, plaq[i]);
      return u;
    }
    case GaugeSource::Unit:
      break;
  }
  HostGauge u = make_unit_gauge(geom);
  u.fill_halo(&grid);
  return u;
}

void GenerateTask::execute(HostGauge& u, const ProcessGrid& grid, Communicator& comm) const {
  const GenerateConfig& gen = cfg_.generate;
  const bool ildg = gen.format == GaugeFormat::Ildg;
  std::uint64_t sweep = static_cast<std::uint64_t>(cfg_.gauge.sweeps);
  for (int c = 0; c < gen.count; ++c) {
    const std::vector<double> plaq = thermalise(u, heatbath_params(cfg_.gauge), gen.every, &grid, comm, sweep);
    for (double p : plaq) spdlog::info("heatbath sweep {:5d}: plaquette {:.12f}", ++sweep, p);
    const std::string path = fmt::format("{}_{:06d}.{}", gen.prefix, sweep, ildg ? "ildg" : "nersc");
    io::write_gauge_file(path, gen.format, u, &grid, comm);
    spdlog::info("configuration {} of {}: wrote {} (plaquette {:.12f})", c + 1, gen.count, path, plaq.back());
  }
}

}  // namespace emprism::run
