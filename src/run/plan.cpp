// plan.cpp: the --dry-run listing of the solves and their estimated times (see plan.hpp).
#include "src/run/plan.hpp"

#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <utility>

#include "kernels/backend/runtime.hpp"
#include "src/physics/costs.hpp"
#include "src/run/gauge_setup.hpp"
#include "src/run/parameters.hpp"

namespace emprism::run {

namespace {

std::string site_str(const std::array<int, 4>& s) { return fmt::format("({}, {}, {}, {})", s[0], s[1], s[2], s[3]); }

// The source(s) of a solve in words.
std::string sources(const SolveConfig& s) {
  switch (s.kind) {
    case SolveKind::Point:
      return fmt::format("1 source: point at {}, spin {}, colour {}", site_str(s.site), s.spin, s.colour);
    case SolveKind::Random:
      return fmt::format("1 source: {} noise, seed {}", choice_name(s.noise), s.seed);
    case SolveKind::PlaneWave:
      return fmt::format("1 source: plane wave, momentum {}", site_str(s.momentum));
    case SolveKind::Propagator:
      break;
  }
  std::string smearing = choice_name(s.smearing.kind);
  if (s.smearing.kind != QuarkSmearingKind::None) smearing += fmt::format(" ({} steps)", s.smearing.steps);
  return fmt::format("12 columns (4 spins x 3 colours): point at {}, smearing {}; channels: {}, momenta: {}",
                     site_str(s.site), smearing, s.channels.size(), s.momenta.size());
}

std::string seconds_str(double s) {
  if (s < 60) return fmt::format("{:.2g} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// One CG iteration of the solver's precision (a mixed solve's: the sloppy one, with the run's links format), per even
// site, and that precision's name.
std::pair<SiteCost, const char*> iteration_cost(const Config& cfg, int ranks) {
  const int rc = cfg.dirac.reconstruct;
  switch (cfg.solver.precision) {
    case Precision::Double:
      return {cg_iteration_cost<double>(rc, ranks), "fp64"};
    case Precision::Single:
      return {cg_iteration_cost<float>(rc, ranks), "fp32"};
    case Precision::Mixed:
      break;
  }
  switch (cfg.solver.sloppy) {
    case Sloppy::Half:
      return {cg_iteration_cost<Half>(rc, ranks), "half sloppy"};
    case Sloppy::SingleFp64:
      return {cg_iteration_cost<Fp32Fp64>(rc, ranks), "fp32/fp64 sloppy"};
    case Sloppy::Single:
      break;
  }
  return {cg_iteration_cost<float>(rc, ranks), "fp32 sloppy"};
}

}  // namespace

AssumedBandwidth nominal_bandwidth() {
  if (backend::device_is_host())
    return {20,
            "assumed 20 GB/s per rank (a nominal figure for a CPU socket's share; not measured: set "
            "metrics.peak = true to measure)"};
  return {1000,
          "assumed 1000 GB/s per rank (a nominal figure below an H100's or an MI250X GCD's; not measured: set "
          "metrics.peak = true to measure)"};
}

std::string solve_plan(const Config& cfg, const ProcessGrid& grid, const AssumedBandwidth& bw,
                       const std::set<std::string>& complete) {
  const Extents local = grid.local_extents(cfg.lattice.extents);
  const double half_volume = std::int64_t(local[0]) * local[1] * local[2] * local[3] / 2.0;
  const int ranks = grid.dims[0] * grid.dims[1] * grid.dims[2] * grid.dims[3];
  const auto [cost, precision] = iteration_cost(cfg, ranks);
  const double per_iteration = cost.bytes * half_volume / (bw.gbs * 1e9);
  std::string out = fmt::format(
      "dry run: estimated times: one CG iteration ({}, links of {} reals) moves {:.0f} bytes per even site ({:.0f} "
      "flops) of the local lattice {}x{}x{}x{} at {}: {:.3g} ms per iteration; halo exchange, set-up, I/O and a mixed "
      "solve's reliable updates not counted; the iteration count is not known before solving, so each solve shows "
      "per 1000 iterations and the bound at max_iter\n",
      precision, cfg.dirac.reconstruct, cost.bytes, cost.flops, local[0], local[1], local[2], local[3], bw.source,
      1e3 * per_iteration);
  out += "dry run: gauge field: " + gauge_description(cfg) + "\n";
  if (cfg.generate.enabled)
    out += fmt::format("dry run: [generate]: {} configuration(s), {} sweeps apart, written as {}_<sweep>.{}\n",
                       cfg.generate.count, cfg.generate.every, cfg.generate.prefix, choice_name(cfg.generate.format));
  const auto& members = cfg.gauge.members;
  if (cfg.gauge.source == GaugeSource::Ensemble && !members.empty())  // complete: "<id>/<name>" (checkpoint.hpp)
    out += fmt::format(
        "dry run: every solve below runs on each of the {} configurations (ids {} .. {}, in this order); {} of "
        "these {} solves are complete in the partial file and not solved again\n",
        members.size(), members.front().id, members.back().id, complete.size(), members.size() * cfg.solves.size());
  out += fmt::format("dry run: {} solve(s), in this order:\n", cfg.solves.size());
  for (std::size_t i = 0; i < cfg.solves.size(); ++i) {
    const SolveConfig& s = cfg.solves[i];
    const double tol = s.tol.value_or(cfg.solver.tol);
    const int max_iter = s.max_iter.value_or(cfg.solver.max_iter);
    const int columns = s.kind == SolveKind::Propagator ? 12 : 1;
    out += fmt::format("  {}. '{}': {}, precision {}, tol {:.1e}, max_iter {}; {}; ", i + 1, s.name,
                       choice_name(s.kind), choice_name(cfg.solver.precision), tol, max_iter, sources(s));
    if (complete.count(s.name)) {
      out += "complete in the partial file: not solved again\n";
    } else {
      const std::string all =
          columns > 1 ? fmt::format(" per column, {} for the 12", seconds_str(1000 * columns * per_iteration)) : "";
      out += fmt::format("~{} per 1000 iterations{}; at most {} (max_iter)\n", seconds_str(1000 * per_iteration), all,
                         seconds_str(max_iter * columns * per_iteration));
    }
  }
  return out;
}

}  // namespace emprism::run
