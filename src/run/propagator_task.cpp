// propagator_task.cpp: the task of a [[solve]] of type propagator: the 12 spin-colour columns of the (smeared)
// point source, each solved like a point solve, then the meson correlators with their effective masses and the PCAC
// mass; the propagator (/solves/<name>) and its correlators (/correlators/<name>) are written together.
// The point source, its quark smearing, the solves and the contractions run on the device: the 12 columns stay there
// (src/physics/contraction_device.hpp) and only the correlators come back, the columns too when output.fields.
// The link smearing of the source's timeslice runs on the device too (src/physics/smearing_device.hpp); the device rows
// are smearing_slice_links, link_smearing, smearing_plaquette, point_source, quark_smearing, meson_contractions,
// meson_planes, propagator_download.
#include <spdlog/spdlog.h>

#include <chrono>

#include "src/physics/contraction_device.hpp"
#include "src/physics/smearing_device.hpp"
#include "src/run/parameters.hpp"
#include "src/run/progress.hpp"
#include "src/run/schema.hpp"
#include "src/run/tasks.hpp"

namespace emprism::run {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char* const kConvention =
    "C(p, t) = sum_{x: x_t = (x0_t + t) mod Lt} exp(-i p.(x - x0)) tr[G_sink S(x) G_source g5 S(x)^dag g5], "
    "p = 2 pi n / L; S(x) = M^-1 column of the source at x0 (sink spin, colour x source spin, colour); gamma "
    "matrices of the chiral basis (docs/conventions.md section 3), g1 g2 g3 g4 = x y z t, g5 = g1 g2 g3 g4; "
    "effective_mass: c(t)/c(t+1) = f(t)/f(t+1), f(t) = exp(-m t) + time_parity exp(-m (Lt - t)) on the real part; "
    "pcac_mass(t) = (C_axial(t+1) - C_axial(t-1)) / (4 C_pion(t))";

std::vector<double> real_parts(const std::vector<std::complex<double>>& values) {
  std::vector<double> re(values.size());
  for (std::size_t t = 0; t < re.size(); ++t) re[t] = values[t].real();
  return re;
}

// The meson correlators of a propagator with their effective masses and the PCAC mass (collective).
CorrelatorRecord correlator_record(const SolveConfig& sc, const TaskContext& ctx, const DevicePropagator& prop) {
  CorrelatorRecord rec;
  rec.name = sc.name;
  rec.source_site = sc.site;
  rec.channels = sc.channels;
  rec.momenta = sc.momenta;
  rec.convention = kConvention;
  const std::vector<Correlator> corr =
      meson_correlators_device(ctx.metrics, ctx.geom, prop, sc.site, sc.channels, sc.momenta, &ctx.comm);
  const Correlator* pion = nullptr;
  const Correlator* axial = nullptr;
  for (const Correlator& c : corr) {
    const MesonChannel* ch = find_meson_channel(c.channel);
    CorrelatorRecord::Entry e;
    e.channel = c.channel;
    e.momentum = c.momentum;
    e.values = c.values;
    e.gamma_sink = ch->gamma_sink;
    e.gamma_source = ch->gamma_source;
    e.time_parity = ch->time_parity;
    e.effective_mass = effective_mass(real_parts(c.values), ch->time_parity);
    rec.entries.push_back(std::move(e));
    if (c.momentum == std::array<int, 3>{0, 0, 0} && c.channel == "pion") pion = &c;
    if (c.momentum == std::array<int, 3>{0, 0, 0} && c.channel == "axial") axial = &c;
  }
  if (pion && axial) rec.pcac_mass = pcac_mass(real_parts(axial->values), real_parts(pion->values));
  return rec;
}

class PropagatorTask final : public Task {
 public:
  using Task::Task;
  double host_bytes(std::int64_t local_volume) const override {
    return 12.0 * 12.0 * 16.0 * static_cast<double>(local_volume);  // 12 columns, double (output.fields)
  }
  double device_bytes(std::int64_t local_volume) const override {
    return (13.0 * 12.0 * 16.0 + 7.0 * 16.0) * static_cast<double>(local_volume);  // 12 columns, source, traces
  }
  bool execute(TaskContext& ctx) const override;

 private:
  void log_start(const CgParams& cp, const SourceSmearing& smearer) const;
  // Column k of the propagator into prop and rec; true when it converged.
  bool solve_column(TaskContext& ctx, const SourceSmearing& smearing, int k, CgParams cp, SpinorField<double>& source,
                    DevicePropagator& prop, PropagatorRecord& rec) const;
  void log_end(const CorrelatorRecord& corr, bool all, double seconds) const;
};

void PropagatorTask::log_start(const CgParams& cp, const SourceSmearing& smearer) const {
  const SolveConfig& sc = solve_;
  const std::string smearing = choice_name(sc.smearing.kind);
  spdlog::info(
      "solve '{}': propagator of the {} source at ({}, {}, {}, {}), 12 spin-colour columns, tol {:.1e}, "
      "max_iter {} each",
      sc.name, smearing == "none" ? "point" : smearing + "-smeared", sc.site[0], sc.site[1], sc.site[2], sc.site[3],
      cp.tol, cp.max_iter);
  if (sc.smearing.kind == QuarkSmearingKind::None) return;
  spdlog::info(
      "solve '{}': {} smearing, {} steps, weight {}; links {} ({} steps, weight {}), spatial plaquette "
      "{:.12f} on timeslice {}",
      sc.name, smearing, sc.smearing.steps, sc.smearing.weight, choice_name(sc.smearing.link_kind),
      sc.smearing.link_steps, sc.smearing.link_weight, smearer.spatial_plaquette(), sc.site[3]);
}

bool PropagatorTask::solve_column(TaskContext& ctx, const SourceSmearing& smearing, int k, CgParams cp,
                                  SpinorField<double>& source, DevicePropagator& prop, PropagatorRecord& rec) const {
  const SolveConfig& sc = solve_;
  auto t = std::chrono::steady_clock::now();
  const int spin = k / 3, colour = k % 3;
  make_point_source_device(ctx.metrics, ctx.geom, sc.site, spin, colour, source);
  smearing.apply(source);
  backend::synchronize();  // the source's time is not the solve's
  cp.progress = [&](int it, double rel, double secs) {
    spdlog::info("solve '{}' column {} of 12 (spin {}, colour {}): iteration {:6d}  residual {:.3e}  {}", sc.name,
                 k + 1, spin, colour, it, rel, cg_progress_text(it, rel, secs, cp.tol));
  };
  add_time(ctx, &PhaseTimes::sources, t);
  const CgResult r = ctx.solver.solve_device(source, cp, prop.column(k));
  add_time(ctx, &PhaseTimes::solves, t);
  rec.residual_history[k] = r.history;
  rec.iterations[k] = r.iterations;
  rec.restarts[k] = r.reliable_updates;
  rec.true_residual[k] = r.true_residual;
  rec.seconds[k] = r.seconds;
  rec.converged[k] = r.converged;
  if (r.converged) {
    spdlog::info(
        "solve '{}' column {} of 12 (spin {}, colour {}): converged in {} iterations, true residual {:.3e}, "
        "{:.3f} s",
        sc.name, k + 1, spin, colour, r.iterations, r.true_residual, r.seconds);
  } else {
    spdlog::warn(
        "solve '{}' column {} of 12 (spin {}, colour {}): NOT converged after {} iterations: true residual {:.3e} > "
        "tol {:.1e}",
        sc.name, k + 1, spin, colour, r.iterations, r.true_residual, cp.tol);
  }
  return r.converged;
}

void PropagatorTask::log_end(const CorrelatorRecord& corr, bool all, double seconds) const {
  for (const auto& e : corr.entries) {
    if (e.momentum != std::array<int, 3>{0, 0, 0}) continue;
    const int lt = static_cast<int>(e.values.size());
    spdlog::info("solve '{}': {:<12} C(0) = {:+.6e}  C({}) = {:+.6e}  m_eff({}) = {:.5f}", solve_.name, e.channel,
                 e.values[0].real(), lt / 2, e.values[static_cast<std::size_t>(lt / 2)].real(), lt / 4,
                 e.effective_mass[static_cast<std::size_t>(lt / 4)]);
  }
  spdlog::info("solve '{}': propagator {} in {:.3f} s", solve_.name, all ? "complete" : "written (not converged)",
               seconds);
}

bool PropagatorTask::execute(TaskContext& ctx) const {
  const SolveConfig& sc = solve_;
  const auto t_start = std::chrono::steady_clock::now();
  auto t = t_start;
  const SourceSmearing smearing =
      ctx.gauge.device() ? SourceSmearing(ctx.metrics, ctx.gauge.device()->data(), ctx.geom, sc.site[3], sc.smearing,
                                          &ctx.grid, &ctx.comm)
                         : SourceSmearing(ctx.metrics, ctx.gauge.host(), sc.site[3], sc.smearing, &ctx.grid, &ctx.comm);
  PropagatorRecord rec;
  rec.name = sc.name;
  rec.single_precision = ctx.cfg.solver.precision == Precision::Single;
  rec.write_fields = ctx.cfg.output.fields;
  rec.inputs = solve_attributes(ctx.cfg, sc);
  rec.smeared_plaquette = smearing.spatial_plaquette();
  const CgParams cp = cg_params(ctx.cfg, sc);
  add_time(ctx, &PhaseTimes::sources, t);
  log_start(cp, smearing);
  DevicePropagator prop(ctx.geom);
  SpinorField<double> source(ctx.geom);
  bool all = true;
  const auto t_columns = std::chrono::steady_clock::now();
  for (int k = 0; k < 12; ++k) {
    all = solve_column(ctx, smearing, k, cp, source, prop, rec) && all;
    const double elapsed = seconds_since(t_columns);
    spdlog::info("solve '{}': column {} of 12 done, {} so far, {}", sc.name, k + 1, duration_text(elapsed),
                 eta_text(elapsed, k + 1, 12));
  }
  t = std::chrono::steady_clock::now();
  const CorrelatorRecord corr = correlator_record(sc, ctx, prop);
  add_time(ctx, &PhaseTimes::contractions, t);
  Propagator host;
  if (rec.write_fields) {
    host = prop.download(ctx.metrics);
    rec.columns = &host.columns;
  }
  write_propagator(ctx.file, rec, BlockLayout{ctx.geom.global(), ctx.geom.local(), ctx.geom.origin()});
  write_correlators(ctx.file, corr);
  add_time(ctx, &PhaseTimes::io, t);
  log_end(corr, all, seconds_since(t_start));
  return all;
}

}  // namespace

std::unique_ptr<Task> make_propagator_task(const SolveConfig& solve) { return std::make_unique<PropagatorTask>(solve); }

}  // namespace emprism::run
