// app.cpp: command line (CLI11), input, set-up, the solves and the output file (see app.hpp).
// Order of work: parse the command line; read and validate the whole input and the output path (no file is
// touched before this succeeds); set up logging; measure the peak bandwidth; build the gauge field and the
// clover term; solve each [[solve]] in turn (a propagator is 12 solves, then its meson correlators), writing each
// to the partial file "<output.file>.partial" as soon as it is complete (a checkpoint: a killed run loses at most
// the solve in progress, and output.resume = true carries the complete ones over); rename the file when all are done.
// Test hook: the environment variable EMPRISM_TEST_CRASH_AFTER_SOLVES=k kills every rank (SIGKILL, no clean-up)
// right after the k-th solve of this run is complete, as a crash or a Slurm time limit would.
#include "src/app.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "comm/halo_policy.hpp"
#include "comm/process_grid.hpp"
#include "emprism_version.hpp"
#include "io/gauge_file.hpp"
#include "io/h5_output.hpp"
#include "io/logging.hpp"
#include "io/toml_config.hpp"
#include "kernels/backend/runtime.hpp"
#include "src/cg.hpp"
#include "src/contractions.hpp"
#include "src/errors.hpp"
#include "src/field_io.hpp"
#include "src/heatbath.hpp"
#include "src/peak.hpp"
#include "src/propagator.hpp"
#include "src/smearing.hpp"
#include "src/sources.hpp"

namespace emprism {

namespace {

constexpr double kPi = 3.14159265358979323846;

// The date of rank 0 on every rank (attributes must be identical on all ranks).
std::string utc_now(Communicator& comm) {
  long long now = static_cast<long long>(std::time(nullptr));
  MPI_Bcast(&now, 1, MPI_LONG_LONG, 0, comm.handle());
  const std::time_t t = static_cast<std::time_t>(now);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string extents_str(const Extents& e) {
  return std::to_string(e[0]) + "x" + std::to_string(e[1]) + "x" + std::to_string(e[2]) + "x" + std::to_string(e[3]);
}

// Bytes of device memory the solve needs (fields of precision R plus the double outer fields when mixed).
double memory_estimate(const Config& cfg, std::int64_t volume) {
  const double vh = volume / 2.0;
  auto per_precision = [&](double r) {
    const double gauge = 8 * vh * 18 * r, clover = 4 * vh * 72 * r, spinors = 16 * vh * 24 * r;
    return gauge + clover + spinors;
  };
  switch (cfg.solver.precision) {
    case Precision::Single:
      return per_precision(4);
    case Precision::Double:
      return per_precision(8);
    case Precision::Mixed:
      return per_precision(4) + per_precision(8);
  }
  return 0;
}

// Bytes of host memory a propagator solve holds besides the solver: its 12 columns in double precision.
double propagator_host_memory(const Config& cfg, std::int64_t volume) {
  const bool any = std::any_of(cfg.solves.begin(), cfg.solves.end(),
                               [](const SolveConfig& s) { return s.kind == SourceKind::Propagator; });
  return any ? 12.0 * 12.0 * 16.0 * static_cast<double>(volume) : 0.0;
}

struct SolveOutcome {
  io::SolveRecord record;
  bool converged = false;
};

template <typename Ro, typename Ri>
SolveOutcome run_solve(const Config& cfg, const SolveConfig& sc, const Geometry& geom, WilsonClover<Ro>& outer,
                       WilsonClover<Ri>& inner) {
  const auto source = make_source(geom, sc, outer.params().theta);
  SpinorField<Ro> b(geom), x(geom);
  spinor_from_natural(geom, source, b);
  CgParams cp;
  cp.tol = sc.tol.value_or(cfg.solver.tol);
  cp.max_iter = sc.max_iter.value_or(cfg.solver.max_iter);
  cp.progress_every = cfg.log.progress_every;
  cp.progress = [&](int it, double rel, double secs) {
    spdlog::info("solve '{}': iteration {:6d}  residual {:.3e}  ({:.1f} it/s)", sc.name, it, rel, it / secs);
  };
  spdlog::info("solve '{}': {} source, tol {:.1e}, max_iter {}", sc.name, source_kind_name(sc.kind), cp.tol,
               cp.max_iter);
  const CgResult r = solve_eo_cg(outer, inner, b, x, cp);

  SolveOutcome out;
  out.converged = r.converged;
  io::SolveRecord& rec = out.record;
  rec.name = sc.name;
  rec.source_kind = source_kind_name(sc.kind);
  rec.single_precision = cfg.solver.precision == Precision::Single;
  rec.write_fields = cfg.output.fields;
  if (cfg.output.fields) {
    rec.solution = spinor_to_natural(geom, x);
    rec.source = source;
  }
  rec.residual_history = r.history;
  rec.iterations = r.iterations;
  rec.true_residual = r.true_residual;
  rec.converged = r.converged;
  rec.seconds = r.seconds;
  rec.kappa = cfg.dirac.kappa;
  rec.csw = cfg.dirac.csw;
  rec.tol = cp.tol;
  rec.restarts = r.restarts;
  if (r.converged) {
    spdlog::info("solve '{}': converged in {} iterations ({} restarts), true residual {:.3e}, {:.3f} s", sc.name,
                 r.iterations, r.restarts, r.true_residual, r.seconds);
  } else {
    spdlog::warn("solve '{}': NOT converged after {} iterations: true residual {:.3e} > tol {:.1e}{}", sc.name,
                 r.iterations, r.true_residual, cp.tol,
                 r.stagnated ? " (the residual stagnates at the precision's limit; use solver.precision = \"mixed\" "
                               "or \"double\")"
                             : "");
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The meson correlators of a propagator with their effective masses and the PCAC mass (collective).
io::CorrelatorRecord correlator_record(const SolveConfig& sc, const Geometry& geom, const Propagator& prop,
                                       Communicator& comm, MetricsRegistry& metrics) {
  io::CorrelatorRecord rec;
  rec.name = sc.name;
  rec.source_site = sc.site;
  rec.channels = sc.channels;
  rec.momenta = sc.momenta;
  rec.convention =
      "C(p, t) = sum_{x: x_t = (x0_t + t) mod Lt} exp(-i p.(x - x0)) tr[G_sink S(x) G_source g5 S(x)^dag g5], "
      "p = 2 pi n / L; S(x) = M^-1 column of the source at x0 (sink spin, colour x source spin, colour); gamma "
      "matrices of the chiral basis (docs/conventions.md section 3), g1 g2 g3 g4 = x y z t, g5 = g1 g2 g3 g4; "
      "effective_mass: c(t)/c(t+1) = f(t)/f(t+1), f(t) = exp(-m t) + time_parity exp(-m (Lt - t)) on the real part; "
      "pcac_mass(t) = (C_axial(t+1) - C_axial(t-1)) / (4 C_pion(t))";
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Correlator> corr = meson_correlators(geom, prop, sc.site, sc.channels, sc.momenta, &comm);
  const ContractionCost cost = contraction_cost(geom.local_volume(), sc.channels, static_cast<int>(sc.momenta.size()));
  metrics.record("host_meson_contractions", seconds_since(t0), cost.flops, cost.bytes);
  const Correlator* pion = nullptr;
  const Correlator* axial = nullptr;
  for (const Correlator& c : corr) {
    const MesonChannel* ch = find_meson_channel(c.channel);
    io::CorrelatorRecord::Entry e;
    e.channel = c.channel;
    e.momentum = c.momentum;
    e.values = c.values;
    e.gamma_sink = ch->gamma_sink;
    e.gamma_source = ch->gamma_source;
    e.time_parity = ch->time_parity;
    std::vector<double> re(c.values.size());
    for (std::size_t t = 0; t < re.size(); ++t) re[t] = c.values[t].real();
    e.effective_mass = effective_mass(re, ch->time_parity);
    rec.entries.push_back(std::move(e));
    if (c.momentum == std::array<int, 3>{0, 0, 0} && c.channel == "pion") pion = &c;
    if (c.momentum == std::array<int, 3>{0, 0, 0} && c.channel == "axial") axial = &c;
  }
  if (pion && axial) {
    std::vector<double> a(pion->values.size()), p(pion->values.size());
    for (std::size_t t = 0; t < p.size(); ++t) {
      a[t] = axial->values[t].real();
      p[t] = pion->values[t].real();
    }
    rec.pcac_mass = pcac_mass(a, p);
  }
  return rec;
}

// A [[solve]] of type propagator: the 12 spin-colour columns of the (smeared) point source, each solved like a point
// solve, then the meson correlators; the propagator and its correlators go to the file together (collective).
template <typename Ro, typename Ri>
bool run_propagator(const Config& cfg, const SolveConfig& sc, Context& ctx, const Geometry& geom,
                    const HostGauge& gauge, WilsonClover<Ro>& outer, WilsonClover<Ri>& inner, io::OutputFile& file) {
  const auto t_start = std::chrono::steady_clock::now();
  const SourceSmearer smearer(gauge, sc.site[3], sc.smearing, &ctx.grid, &ctx.comm);
  const double slice = static_cast<double>(smearer.slice_sites());
  if (sc.smearing.link_kind != LinkSmearingKind::None) {
    const double steps = sc.smearing.link_steps;
    ctx.metrics.record("host_link_smearing", seconds_since(t_start), steps * slice * kLinkSmearingFlopsPerSite,
                       steps * slice * kLinkSmearingBytesPerSite);
  }
  io::PropagatorRecord rec;
  rec.name = sc.name;
  rec.single_precision = cfg.solver.precision == Precision::Single;
  rec.write_fields = cfg.output.fields;
  rec.kappa = cfg.dirac.kappa;
  rec.csw = cfg.dirac.csw;
  rec.source_site = sc.site;
  rec.smearing = quark_smearing_name(sc.smearing.kind);
  rec.smearing_steps = sc.smearing.steps;
  rec.smearing_weight = sc.smearing.weight;
  rec.link_smearing = link_smearing_name(sc.smearing.link_kind);
  rec.link_smearing_steps = sc.smearing.link_steps;
  rec.link_smearing_weight = sc.smearing.link_weight;
  rec.smeared_plaquette = smearer.spatial_plaquette();
  CgParams cp;
  cp.tol = sc.tol.value_or(cfg.solver.tol);
  cp.max_iter = sc.max_iter.value_or(cfg.solver.max_iter);
  cp.progress_every = cfg.log.progress_every;
  rec.tol = cp.tol;
  spdlog::info(
      "solve '{}': propagator of the {} source at ({}, {}, {}, {}), 12 spin-colour columns, tol {:.1e}, "
      "max_iter {} each",
      sc.name, rec.smearing == "none" ? "point" : rec.smearing + "-smeared", sc.site[0], sc.site[1], sc.site[2],
      sc.site[3], cp.tol, cp.max_iter);
  if (sc.smearing.kind != QuarkSmearingKind::None) {
    spdlog::info(
        "solve '{}': {} smearing, {} steps, weight {}; links {} ({} steps, weight {}), spatial plaquette "
        "{:.12f} on timeslice {}",
        sc.name, rec.smearing, sc.smearing.steps, sc.smearing.weight, rec.link_smearing, sc.smearing.link_steps,
        sc.smearing.link_weight, rec.smeared_plaquette, sc.site[3]);
  }
  Propagator prop;
  bool all = true;
  for (int k = 0; k < 12; ++k) {
    SolveConfig column = sc;
    column.spin = k / 3;
    column.colour = k % 3;
    std::vector<std::complex<double>> source = make_source(geom, column, outer.params().theta);
    if (sc.smearing.kind != QuarkSmearingKind::None) {
      const auto t0 = std::chrono::steady_clock::now();
      smearer.apply(source);
      const double steps = sc.smearing.steps;
      ctx.metrics.record("host_quark_smearing", seconds_since(t0), steps * slice * kQuarkSmearingFlopsPerSite,
                         steps * slice * kQuarkSmearingBytesPerSite);
    }
    SpinorField<Ro> b(geom), x(geom);
    spinor_from_natural(geom, source, b);
    cp.progress = [&](int it, double rel, double secs) {
      spdlog::info("solve '{}' (spin {}, colour {}): iteration {:6d}  residual {:.3e}  ({:.1f} it/s)", sc.name,
                   column.spin, column.colour, it, rel, it / secs);
    };
    const CgResult r = solve_eo_cg(outer, inner, b, x, cp);
    prop.columns[k] = spinor_to_natural(geom, x);
    rec.residual_history[k] = r.history;
    rec.iterations[k] = r.iterations;
    rec.restarts[k] = r.restarts;
    rec.true_residual[k] = r.true_residual;
    rec.seconds[k] = r.seconds;
    rec.converged[k] = r.converged;
    all = all && r.converged;
    if (r.converged) {
      spdlog::info("solve '{}' (spin {}, colour {}): converged in {} iterations, true residual {:.3e}, {:.3f} s",
                   sc.name, column.spin, column.colour, r.iterations, r.true_residual, r.seconds);
    } else {
      spdlog::warn(
          "solve '{}' (spin {}, colour {}): NOT converged after {} iterations: true residual {:.3e} > tol "
          "{:.1e}",
          sc.name, column.spin, column.colour, r.iterations, r.true_residual, cp.tol);
    }
  }
  const io::CorrelatorRecord corr = correlator_record(sc, geom, prop, ctx.comm, ctx.metrics);
  rec.columns = &prop.columns;
  file.write_propagator(rec, io::BlockLayout{geom.global(), geom.local(), geom.origin()});
  file.write_correlators(corr);
  for (const auto& e : corr.entries) {
    if (e.momentum != std::array<int, 3>{0, 0, 0}) continue;
    const int lt = static_cast<int>(e.values.size());
    spdlog::info("solve '{}': {:<12} C(0) = {:+.6e}  C({}) = {:+.6e}  m_eff({}) = {:.5f}", sc.name, e.channel,
                 e.values[0].real(), lt / 2, e.values[static_cast<std::size_t>(lt / 2)].real(), lt / 4,
                 e.effective_mass[static_cast<std::size_t>(lt / 4)]);
  }
  spdlog::info("solve '{}': propagator {} in {:.3f} s", sc.name, all ? "complete" : "written (not converged)",
               seconds_since(t_start));
  return all;
}

// The halo exchange of the run's operators: totals for /metrics/ranks and one /metrics/comm row per direction.
struct HaloStats {
  double wait_s = 0, exchange_s = 0;
  std::vector<io::CommRow> rows;
};

template <typename R>
void add_halo_stats(WilsonClover<R>& op, int rank, HaloStats& halo) {
  for (const auto& d : op.halo_stats()) {
    io::CommRow row;
    row.rank = rank;
    row.precision_bits = 8 * static_cast<int>(sizeof(R));
    row.direction = d.mu;
    row.transport = transport_name(d.transport);
    row.split_exterior = d.split_exterior;
    row.calls = d.calls;
    row.bytes_per_call = d.bytes_per_call;
    row.exchange_s = d.exchange_s;
    row.exposed_s = d.exposed_s;
    row.hidden_fraction = d.exchange_s > 0 ? std::max(0.0, 1.0 - d.exposed_s / d.exchange_s) : 1.0;
    halo.rows.push_back(row);
    halo.wait_s += d.exposed_s;
    halo.exchange_s += d.exchange_s;
  }
}

TransportRequest transport_request(const CommConfig& c) {
  TransportRequest r;
  switch (c.transport) {
    case CommConfig::Transport::Staged:
      r.choice = TransportRequest::Choice::Staged;
      break;
    case CommConfig::Transport::GpuAware:
      r.choice = TransportRequest::Choice::GpuAware;
      break;
    case CommConfig::Transport::Peer:
      r.choice = TransportRequest::Choice::Peer;
      break;
    case CommConfig::Transport::Auto:
      r.choice = TransportRequest::Choice::Auto;
      break;
  }
  r.gpu_aware_in_auto = c.gpu_aware_in_auto;
  r.key = c.transport_key;
  return r;
}

// EMPRISM_TEST_CRASH_AFTER_SOLVES (tests only): the number of complete solves after which the run is killed, or -1.
int crash_after_solves() {
  const char* v = std::getenv("EMPRISM_TEST_CRASH_AFTER_SOLVES");
  return v != nullptr && *v != '\0' ? std::atoi(v) : -1;
}

template <typename Ro, typename Ri>
bool run_all_solves(const Config& cfg, Context& ctx, const Geometry& geom, const HostGauge& gauge,
                    const HostClover& clover, io::OutputFile& file, HaloStats& halo) {
  DiracParams dp;
  dp.kappa = cfg.dirac.kappa;
  dp.csw = cfg.dirac.csw;
  for (int mu = 0; mu < 4; ++mu) dp.theta[mu] = cfg.dirac.theta_over_pi[mu] * kPi;
  dp.transport = transport_request(cfg.comm);
  dp.report = [](const std::string& line) { spdlog::info("{}", line); };
  WilsonClover<Ro> outer(ctx, geom, gauge, clover, dp);
  std::unique_ptr<WilsonClover<Ri>> inner_owned;
  WilsonClover<Ri>* inner = nullptr;
  if constexpr (std::is_same_v<Ro, Ri>) {
    inner = &outer;
  } else {
    inner_owned = std::make_unique<WilsonClover<Ri>>(ctx, geom, gauge, clover, dp);
    inner = inner_owned.get();
  }
  bool all = true;
  const int crash_after = crash_after_solves();
  int done = 0;
  for (const SolveConfig& sc : cfg.solves) {
    const auto& resumed = file.resumed();
    const auto it = std::find_if(resumed.begin(), resumed.end(), [&](const auto& c) { return c.name == sc.name; });
    if (it != resumed.end()) {
      spdlog::info("solve '{}': complete in the partial file of the interrupted run ({}), not solved again", sc.name,
                   it->converged ? "converged" : "not converged");
      all = all && it->converged;
      continue;
    }
    if (sc.kind == SourceKind::Propagator) {
      all = run_propagator(cfg, sc, ctx, geom, gauge, outer, *inner, file) && all;
    } else {
      const SolveOutcome o = run_solve(cfg, sc, geom, outer, *inner);
      file.write_solve(o.record, io::BlockLayout{geom.global(), geom.local(), geom.origin()});
      all = all && o.converged;
    }
    file.mark_complete(sc.name);  // flushed: a crash from here on does not lose this solve
    if (++done == crash_after) {
      spdlog::warn("test hook EMPRISM_TEST_CRASH_AFTER_SOLVES={}: killing the run now", crash_after);
      ctx.comm.barrier();
      std::raise(SIGKILL);
    }
  }
  add_halo_stats(outer, ctx.comm.rank(), halo);
  if constexpr (!std::is_same_v<Ro, Ri>) add_halo_stats(*inner, ctx.comm.rank(), halo);
  return all;
}

// Rank 0's /metrics/comm rows.
void log_comm_table(const std::vector<io::CommRow>& rows) {
  for (const io::CommRow& r : rows)
    spdlog::info(
        "halo {} (fp{}): {}, {} exterior, {:.2f} MB per call, {} calls, exchange {:.4f} s, exposed {:.4f} s "
        "({:.1f}% hidden)",
        "xyzt"[r.direction & 3], r.precision_bits, r.transport, r.split_exterior ? "split" : "fused",
        r.bytes_per_call / 1e6, r.calls, r.exchange_s, r.exposed_s, 100.0 * r.hidden_fraction);
}

void log_kernel_table(const MetricsRegistry& m) {
  spdlog::info("{:<24} {:>8} {:>12} {:>10} {:>10} {:>8}", "kernel", "calls", "ms/call", "GFLOP/s", "GB/s", "%peak");
  for (const auto& k : m.table()) {
    spdlog::info("{:<24} {:>8} {:>12.4f} {:>10.2f} {:>10.2f} {:>8.1f}", k.name, k.calls, 1e3 * k.mean_s,
                 k.total_s > 0 ? k.flops / k.total_s / 1e9 : 0.0, k.gbs, k.percent_of_peak);
  }
}

io::GaugeFormat file_format(GaugeFileFormat f) {
  switch (f) {
    case GaugeFileFormat::Ildg:
      return io::GaugeFormat::Ildg;
    case GaugeFileFormat::Nersc:
      return io::GaugeFormat::Nersc;
    case GaugeFileFormat::OpenQcd:
      return io::GaugeFormat::OpenQcd;
    case GaugeFileFormat::Milc:
      return io::GaugeFormat::Milc;
    case GaugeFileFormat::Auto:
      break;
  }
  return io::GaugeFormat::Auto;
}

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

HeatbathParams heatbath_params(const GaugeConfig& g) {
  HeatbathParams p;
  p.beta = g.beta;
  p.or_per_sweep = g.or_per_sweep;
  p.seed = g.seed;
  return p;
}

// This rank's block of the gauge field, halo filled (collective).
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
      const io::GaugeFileInfo info = io::read_gauge_file(g.file, file_format(g.format), u, &grid, comm);
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

// [generate]: after the thermalisation, `count` configurations `every` sweeps apart, each written to a file
// (collective); the plaquette of every sweep is logged. The last configuration is the one solved on.
void generate_ensemble(const Config& cfg, HostGauge& u, const ProcessGrid& grid, Communicator& comm) {
  const GenerateConfig& gen = cfg.generate;
  const bool ildg = gen.format == GaugeFileFormat::Ildg;
  std::uint64_t sweep = static_cast<std::uint64_t>(cfg.gauge.sweeps);
  for (int c = 0; c < gen.count; ++c) {
    const std::vector<double> plaq = thermalise(u, heatbath_params(cfg.gauge), gen.every, &grid, comm, sweep);
    for (double p : plaq) spdlog::info("heatbath sweep {:5d}: plaquette {:.12f}", ++sweep, p);
    const std::string path = fmt::format("{}_{:06d}.{}", gen.prefix, sweep, ildg ? "ildg" : "nersc");
    io::write_gauge_file(path, ildg ? io::GaugeFormat::Ildg : io::GaugeFormat::Nersc, u, &grid, comm);
    spdlog::info("configuration {} of {}: wrote {} (plaquette {:.12f})", c + 1, gen.count, path, plaq.back());
  }
}

// Per-rank times into /metrics/ranks, and one log line on the load balance and the hidden halo time.
io::RankTimes rank_times(Communicator& comm, const MetricsRegistry& metrics, const HaloStats& halo) {
  double kernels = 0;
  for (const auto& k : metrics.table()) kernels += k.total_s;
  const ReductionStats& red = metrics.reductions();
  io::RankTimes t{comm.rank(),
                  kernels - halo.wait_s,
                  halo.wait_s,
                  comm.reduction_seconds(),
                  red.cg_iterations > 0 ? static_cast<double>(red.cg_reductions) / red.cg_iterations : 0.0,
                  red.wait_s};
  double v[4] = {t.compute_s, t.compute_s, halo.wait_s, halo.exchange_s};
  MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, comm.handle());
  MPI_Allreduce(MPI_IN_PLACE, v + 1, 3, MPI_DOUBLE, MPI_SUM, comm.handle());
  const double mean = v[1] / comm.size();
  if (comm.size() > 1 || v[3] > 0) {
    spdlog::info(
        "ranks: compute max {:.3f} s, mean {:.3f} s (load balance {:.1f}%); halo exchange {:.3f} s, of "
        "which {:.1f}% hidden behind compute",
        v[0], mean, v[0] > 0 ? 100.0 * mean / v[0] : 100.0, v[3] / comm.size(),
        v[3] > 0 ? 100.0 * (1.0 - v[2] / v[3]) : 100.0);
  }
  return t;
}

int execute(const Config& cfg, Communicator& comm, const ProcessGrid& grid) {
  const auto t_start = std::chrono::steady_clock::now();
  const Extents& global = cfg.lattice.extents;
  const Geometry geom(global, grid.local_extents(global), grid.origin(global), grid.partitioned);
  MetricsRegistry metrics;
  Context ctx{metrics, comm, grid};

  if (cfg.metrics.peak) {
    const PeakBandwidth p = measure_peak_bandwidth();
    metrics.set_peak(p);
    spdlog::info("empirical peak bandwidth (rank 0): copy {:.1f}, triad {:.1f}, read {:.1f} GB/s; peak {:.1f} GB/s",
                 p.copy_gbs, p.triad_gbs, p.read_gbs, p.peak_gbs);
  }

  HostGauge gauge = make_gauge(cfg, geom, grid, comm);
  const double plaq = plaquette(gauge, &comm), ltrace = link_trace(gauge, &comm);
  spdlog::info("gauge field: {}, plaquette {:.12f}, link trace {:.12f}", gauge_description(cfg), plaq, ltrace);
  if (cfg.generate.enabled) generate_ensemble(cfg, gauge, grid, comm);
  const HostClover clover = make_clover(gauge, cfg.dirac.kappa, cfg.dirac.csw);

  io::OutputOptions options;
  options.overwrite = cfg.output.overwrite;
  options.resume = cfg.output.resume;
  options.physics_inputs = io::physics_inputs(cfg);
  options.plaquette = plaq;
  options.check_plaquette = true;
  io::OutputFile file(cfg.output.file, options, comm.handle(), cfg.output.io);
  if (!file.resumed().empty()) {
    spdlog::info("resume: {} of {} solve(s) complete in {} are kept", file.resumed().size(), cfg.solves.size(),
                 file.temp_path());
  }
  io::RootInfo root;
  root.program_version = EMPRISM_VERSION;
  root.git_hash = EMPRISM_GIT_HASH;
  root.date = utc_now(comm);
  root.backend = backend::name();
  root.device = backend::device_name();
  root.ranks = comm.size();
  root.process_grid = grid.dims;
  root.extents = global;
  root.precision = precision_name(cfg.solver.precision);
  root.physics_inputs = options.physics_inputs;
  root.input_hash = io::text_hash(options.physics_inputs);
  file.write_root(root);
  file.write_input(cfg.input_text);
  io::GaugeInfo gi;
  gi.source = gauge_source_name(cfg.gauge.source);
  gi.plaquette = plaq;
  gi.link_trace = ltrace;
  const io::BlockLayout block{global, geom.local(), geom.origin()};
  std::vector<std::complex<double>> links;
  if (cfg.output.write_gauge) links = gauge_to_natural(gauge);
  file.write_gauge(gi, block, cfg.output.write_gauge ? &links : nullptr);
  file.flush();

  bool all_converged = false;
  HaloStats halo;
  switch (cfg.solver.precision) {
    case Precision::Double:
      all_converged = run_all_solves<double, double>(cfg, ctx, geom, gauge, clover, file, halo);
      break;
    case Precision::Single:
      all_converged = run_all_solves<float, float>(cfg, ctx, geom, gauge, clover, file, halo);
      break;
    case Precision::Mixed:
      all_converged = run_all_solves<double, float>(cfg, ctx, geom, gauge, clover, file, halo);
      break;
  }

  const io::RankTimes mine = rank_times(comm, metrics, halo);
  file.write_metrics(metrics.table(), metrics.peak(), mine);
  file.write_comm_metrics(halo.rows);
  file.commit();

  const double total = seconds_since(t_start);
  spdlog::info(
      "timing summary (rank 0): {:.3f} s in total, {:.3f} s computing, {:.3f} s waiting for halos, "
      "{:.3f} s in reductions ({:.2f} per CG iteration, {:.3f} s waiting for the device's partial sums)",
      total, mine.compute_s, mine.halo_wait_s, mine.reduction_s, mine.reductions_per_iteration, mine.reduction_wait_s);
  log_comm_table(halo.rows);
  log_kernel_table(metrics);
  spdlog::info("wrote {}", cfg.output.file);
  return all_converged ? kExitOk : kExitNotConverged;
}

void log_setup(const Config& cfg, const Communicator& comm, const ProcessGrid& grid) {
  const Extents& e = cfg.lattice.extents;
  spdlog::info("emprism-mpi {} ({}), backend {}, {} rank(s); rank 0 device: {}", EMPRISM_VERSION, EMPRISM_GIT_HASH,
               backend::name(), comm.size(), backend::device_name());
  spdlog::info("input {}: lattice {} ({} sites), precision {}, kappa {}, csw {}, theta/pi ({}, {}, {}, {})",
               cfg.input_path, extents_str(e), std::int64_t(e[0]) * e[1] * e[2] * e[3],
               precision_name(cfg.solver.precision), cfg.dirac.kappa, cfg.dirac.csw, cfg.dirac.theta_over_pi[0],
               cfg.dirac.theta_over_pi[1], cfg.dirac.theta_over_pi[2], cfg.dirac.theta_over_pi[3]);
  spdlog::info("process grid {} (local lattice {}), halo exchange in x y z t: {} {} {} {}", extents_str(grid.dims),
               extents_str(grid.local_extents(e)), grid.partitioned[0] ? "yes" : "no",
               grid.partitioned[1] ? "yes" : "no", grid.partitioned[2] ? "yes" : "no",
               grid.partitioned[3] ? "yes" : "no");
  spdlog::info("{} solve(s), tol {:.1e}, max_iter {}; output {}", cfg.solves.size(), cfg.solver.tol,
               cfg.solver.max_iter, cfg.output.file);
}

// Resume against a complete output file: it must come from the same input and hold every solve (else InputError).
io::RunState finished_run_state(const std::string& path, const std::string& physics) {
  io::RunState state;
  try {
    state = io::read_run_state(path);
  } catch (const RuntimeFailure& e) {
    throw InputError(std::string("output.file: ") + e.what() + "; it exists and output.resume cannot continue it");
  }
  const std::string diff = io::input_difference(state.physics_inputs, physics);
  if (!diff.empty()) {
    throw InputError("output.resume: '" + path + "' exists and was written by a different input (" + diff +
                     "); set output.overwrite = true and output.resume = false to replace it");
  }
  return state;
}

}  // namespace

// `emprism-mpi gauge-info FILE [--format F]`: one JSON line describing a gauge configuration file (format,
// extents, precision, checksum status, plaquette, link trace); reads the whole file on rank 0.
int run_gauge_info(Communicator& comm, int argc, char** argv) {
  CLI::App cli{"Checks a gauge configuration file and prints one JSON line about it.", "emprism-mpi gauge-info"};
  std::string path, format = "auto";
  cli.add_option("file", path, "gauge configuration file")->required();
  cli.add_option("--format", format, "auto, ildg, nersc, openqcd or milc (default: detected from the file)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      if (comm.rank() == 0) cli.exit(e);
      return kExitOk;
    }
    if (comm.rank() == 0) io::print_error(std::string("gauge-info: ") + e.what() + " (see --help)");
    return kExitInput;
  }
  if (comm.rank() != 0) return kExitOk;
  try {
    const auto fmt = io::parse_gauge_format(format);
    if (!fmt) throw InputError("gauge-info: --format: '" + format + "' is not one of auto, ildg, nersc, openqcd, milc");
    std::printf("%s\n", io::gauge_info_json(io::inspect_gauge_file(path, *fmt)).c_str());
    return kExitOk;
  } catch (const InputError& e) {
    io::print_error(e.what());
    return kExitInput;
  } catch (const std::exception& e) {
    io::print_error(e.what());
    return kExitFailure;
  }
}

int run_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  Communicator comm;

  if (argc >= 2 && std::string(argv[1]) == "gauge-info") return run_gauge_info(comm, argc - 1, argv + 1);

  CLI::App cli{
      "EmPRiSM-MPI: even-odd preconditioned CG for the Wilson-clover Dirac equation.\n"
      "Output: one HDF5 file (see README.md). Exit codes: 0 converged, 1 failure, 2 bad input, "
      "3 not converged.",
      "emprism-mpi"};
  std::string input;
  bool dry_run = false, resume = false;
  std::string log_level;
  cli.add_option("input", input, "TOML input file")->required();
  cli.add_flag("--dry-run", dry_run, "validate the input, print the decomposition and memory estimate, and exit");
  cli.add_flag("--resume", resume,
               "as output.resume = true: continue an interrupted run from <output.file>.partial (same input)");
  cli.add_option("--log-level", log_level, "override log.level (trace, debug, info, warn, error)");
  cli.set_version_flag("--version", std::string("emprism-mpi ") + EMPRISM_VERSION + " (git " + EMPRISM_GIT_HASH +
                                        ", backend " + EMPRISM_BACKEND_NAME + ")");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      if (comm.rank() == 0) cli.exit(e);
      return kExitOk;
    }
    if (comm.rank() == 0) io::print_error(std::string("command line: ") + e.what() + " (see --help)");
    return kExitInput;
  }

  // Input checks run on every rank (all read the same file); the ranks agree on the outcome, so a bad input
  // ends every rank with exit code 2 and one error line, and never leaves some ranks waiting.
  Config cfg;
  ProcessGrid grid;
  struct CartGuard {  // the Cartesian communicator is freed before MPI_Finalize
    ProcessGrid& g;
    ~CartGuard() {
      if (g.cart != MPI_COMM_NULL) MPI_Comm_free(&g.cart);
    }
  } cart_guard{grid};
  std::string error;
  io::RunState previous;      // of the partial file to resume, or of the complete output file
  bool already_done = false;  // resume, and output.file already holds every solve of this input
  try {
    cfg = io::load_config(input);
    if (!log_level.empty()) cfg.log.level = log_level;
    if (resume) cfg.output.resume = true;
    io::setup_logging(cfg.log.level, comm.rank(), cfg.log.per_rank ? cfg.output.file : std::string());
    io::OutputOptions options;
    options.overwrite = cfg.output.overwrite;
    options.resume = cfg.output.resume;
    options.physics_inputs = io::physics_inputs(cfg);
    std::error_code ec;
    if (cfg.output.resume && std::filesystem::is_regular_file(cfg.output.file, ec)) {
      previous = finished_run_state(cfg.output.file, options.physics_inputs);
      already_done = true;
    } else {
      io::check_output_path(cfg.output.file, cfg.output.overwrite);
      previous = io::check_partial(cfg.output.file, options);
    }
    if (cfg.output.io == OutputIo::Collective && !io::OutputFile::collective_available())
      throw InputError(
          "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" or "
          "\"auto\"");
    grid = make_process_grid(comm, cfg.lattice.extents, cfg.lattice.procs, cfg.comm.force_halo);
  } catch (const InputError& e) {
    error = e.what();
    if (error.rfind(input, 0) != 0) error = input + ": " + error;
  }
  int failing_rank = error.empty() ? comm.size() : comm.rank();
  MPI_Allreduce(MPI_IN_PLACE, &failing_rank, 1, MPI_INT, MPI_MIN, comm.handle());
  if (failing_rank < comm.size()) {
    if (comm.rank() == failing_rank) io::print_error(error);
    return kExitInput;
  }
  // The transport needs the grid, and its check is collective: only now that every rank has one.
  try {
    check_transport_request(transport_request(cfg.comm), grid);
  } catch (const InputError& e) {
    error = input + ": " + e.what();
  }
  failing_rank = error.empty() ? comm.size() : comm.rank();
  MPI_Allreduce(MPI_IN_PLACE, &failing_rank, 1, MPI_INT, MPI_MIN, comm.handle());
  if (failing_rank < comm.size()) {
    if (comm.rank() == failing_rank) io::print_error(error);
    return kExitInput;
  }

  try {
    if (already_done) {
      bool converged = true;
      for (const io::CompleteSolve& c : previous.solves) converged = converged && c.converged;
      spdlog::info("resume: {} already holds all {} solve(s) of this input; nothing to do", cfg.output.file,
                   previous.solves.size());
      return converged ? kExitOk : kExitNotConverged;
    }
    backend::select_device(comm.local_rank());
    log_setup(cfg, comm, grid);
    if (cfg.output.resume) {
      spdlog::info("resume: {}", previous.solves.empty()
                                     ? "no complete solve to carry over; starting from the beginning"
                                     : fmt::format("{} of {} solve(s) complete in {}", previous.solves.size(),
                                                   cfg.solves.size(), io::partial_path(cfg.output.file)));
    }
    if (dry_run) {
      const Extents local = grid.local_extents(cfg.lattice.extents);
      const std::int64_t vol = std::int64_t(local[0]) * local[1] * local[2] * local[3];
      spdlog::info("dry run: input is valid; process grid {}, local lattice {}, estimated memory {:.1f} MiB per rank",
                   extents_str(grid.dims), extents_str(local), memory_estimate(cfg, vol) / (1024.0 * 1024.0));
      if (const double host = propagator_host_memory(cfg, vol); host > 0)
        spdlog::info("dry run: a propagator holds {:.1f} MiB of host memory per rank (12 columns, double)",
                     host / (1024.0 * 1024.0));
      return kExitOk;
    }
    return execute(cfg, comm, grid);
  } catch (const std::exception& e) {
    // A failure on one rank must not leave the others waiting in a collective: end the whole job.
    io::print_error(comm.size() > 1 ? "rank " + std::to_string(comm.rank()) + ": " + e.what() : e.what());
    std::error_code ec;
    if (comm.rank() == 0 && std::filesystem::exists(io::partial_path(cfg.output.file), ec)) {
      spdlog::info("the complete solves are kept in {}; run again with output.resume = true to continue",
                   io::partial_path(cfg.output.file));
    }
    if (comm.size() > 1) comm.abort(kExitFailure);
    return kExitFailure;
  }
}

}  // namespace emprism
