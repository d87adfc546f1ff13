// gauge_setup.cpp: the run's gauge field and the gauge generation task (see gauge_setup.hpp).
#include "src/run/gauge_setup.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"
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

HostGauge make_gauge(const Config& cfg, const Geometry& geom, const ProcessGrid& grid, Communicator& comm) {
  const GaugeConfig& g = cfg.gauge;
  switch (g.source) {
    case GaugeSource::Random: {
      HostGauge u = make_random_gauge(geom, g.seed, g.width);
      u.fill_halo(&grid);
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

void GenerateTask::execute(HostGauge& u, const ProcessGrid& grid, Communicator& comm) const {
  const GenerateConfig& gen = cfg_.generate;
  std::uint64_t sweep = static_cast<std::uint64_t>(cfg_.gauge.sweeps);
  for (int c = 0; c < gen.count; ++c) {
    const std::vector<double> plaq = thermalise(u, heatbath_params(cfg_.gauge), gen.every, &grid, comm, sweep);
    for (double p : plaq) spdlog::info("heatbath sweep {:5d}: plaquette {:.12f}", ++sweep, p);
    const std::string path = generate_path(cfg_, c);
    io::write_gauge_file(path, gen.format, u, &grid, comm);
    spdlog::info("configuration {} of {}: wrote {} (plaquette {:.12f})", c + 1, gen.count, path, plaq.back());
  }
}

}  // namespace emprism::run
