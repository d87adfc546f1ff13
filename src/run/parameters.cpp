// parameters.cpp: the declaration's tables, solve types and choice lists, and what derives from them besides the
// reader and the reference: the choice names, the keys of a solve type, the solve attributes. The keys themselves
// are declared in parameters_run.cpp (lattice .. metrics) and parameters_solve.cpp ([[solve]]).
#include "src/run/parameters.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "src/run/ensemble.hpp"
#include "src/run/parameters_detail.hpp"

namespace emprism::run {

namespace detail {

const ChoiceList<Precision>& precisions() {
  static const ChoiceList<Precision> c{
      {{"single", Precision::Single}, {"double", Precision::Double}, {"mixed", Precision::Mixed}}};
  return c;
}

const ChoiceList<Sloppy>& sloppies() {
  static const ChoiceList<Sloppy> c{
      {{"single", Sloppy::Single}, {"half", Sloppy::Half}, {"single_fp64", Sloppy::SingleFp64}}};
  return c;
}

const ChoiceList<Stop>& stops() {
  static const ChoiceList<Stop> c{{{"full", Stop::Full}, {"normal", Stop::Normal}}};
  return c;
}

const ChoiceList<GaugeSource>& gauge_sources() {
  static const ChoiceList<GaugeSource> c{{{"unit", GaugeSource::Unit},
                                          {"random", GaugeSource::Random},
                                          {"file", GaugeSource::File},
                                          {"heatbath", GaugeSource::Heatbath},
                                          {"ensemble", GaugeSource::Ensemble}}};
  return c;
}

const ChoiceList<SolveKind>& solve_kind_list() {
  static const ChoiceList<SolveKind> c{{{"point", SolveKind::Point},
                                        {"random", SolveKind::Random},
                                        {"plane_wave", SolveKind::PlaneWave},
                                        {"propagator", SolveKind::Propagator}}};
  return c;
}

const ChoiceList<NoiseKind>& noise_kinds() {
  static const ChoiceList<NoiseKind> c{{{"gaussian", NoiseKind::Gaussian}, {"z2", NoiseKind::Z2}}};
  return c;
}

const ChoiceList<QuarkSmearingKind>& quark_smearings() {
  static const ChoiceList<QuarkSmearingKind> c{{{"none", QuarkSmearingKind::None},
                                                {"wuppertal", QuarkSmearingKind::Wuppertal},
                                                {"jacobi", QuarkSmearingKind::Jacobi}}};
  return c;
}

const ChoiceList<LinkSmearingKind>& link_smearings() {
  static const ChoiceList<LinkSmearingKind> c{
      {{"none", LinkSmearingKind::None}, {"ape", LinkSmearingKind::Ape}, {"stout", LinkSmearingKind::Stout}}};
  return c;
}

namespace {

// The words of the gauge formats are io/gauge's own (gauge_format_name).
ChoiceList<GaugeFormat> formats(std::initializer_list<GaugeFormat> list) {
  ChoiceList<GaugeFormat> c;
  for (GaugeFormat f : list) c.items.emplace_back(io::gauge_format_name(f), f);
  return c;
}

}  // namespace

const ChoiceList<GaugeFormat>& gauge_formats() {
  static const ChoiceList<GaugeFormat> c =
      formats({GaugeFormat::Auto, GaugeFormat::Ildg, GaugeFormat::Nersc, GaugeFormat::OpenQcd, GaugeFormat::Milc});
  return c;
}

const ChoiceList<GaugeFormat>& generate_formats() {
  static const ChoiceList<GaugeFormat> c = formats({GaugeFormat::Ildg, GaugeFormat::Nersc});
  return c;
}

const ChoiceList<OutputIo>& output_ios() {
  static const ChoiceList<OutputIo> c{
      {{"auto", OutputIo::Auto}, {"collective", OutputIo::Collective}, {"gather", OutputIo::Gather}}};
  return c;
}

const ChoiceList<CommConfig::Transport>& transports() {
  using T = CommConfig::Transport;
  static const ChoiceList<T> c{
      {{"auto", T::Auto}, {"staged", T::Staged}, {"gpu_aware", T::GpuAware}, {"peer", T::Peer}}};
  return c;
}

const ChoiceList<std::string>& log_levels() {
  static const ChoiceList<std::string> c{
      {{"trace", "trace"}, {"debug", "debug"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}}};
  return c;
}

std::uint64_t read_seed(const io::InputValue& v) {
  return static_cast<std::uint64_t>(v.integer_in(0, std::numeric_limits<std::int64_t>::max()));
}

double read_positive(const io::InputValue& v) {
  const double x = v.real();
  if (!(x > 0.0)) v.fail("must be > 0, got " + io::format_double(x));
  return x;
}

double read_tol(const io::InputValue& v) {
  const double tol = v.real();
  if (!(tol > 0.0 && tol < 1.0)) v.fail("must be > 0 and < 1, got " + io::format_double(tol));
  return tol;
}

std::array<int, 4> read_int4(const io::InputValue& v, std::int64_t lo, std::int64_t hi) {
  const std::vector<io::InputValue> a = v.array(4, "4 integers");
  std::array<int, 4> out{};
  for (std::size_t mu = 0; mu < 4; ++mu) out[mu] = a[mu].int_in(lo, hi);
  return out;
}

std::array<double, 4> read_float4(const io::InputValue& v) {
  const std::vector<io::InputValue> a = v.array(4, "4 floats");
  std::array<double, 4> out{};
  for (std::size_t mu = 0; mu < 4; ++mu) out[mu] = a[mu].real();
  return out;
}

std::array<bool, 4> read_bool4(const io::InputValue& v) {
  const std::vector<io::InputValue> a = v.array(4, "4 booleans");
  std::array<bool, 4> out{};
  for (std::size_t mu = 0; mu < 4; ++mu) out[mu] = a[mu].boolean();
  return out;
}

std::string read_nonempty(const io::InputValue& v) {
  std::string s = v.string();
  if (s.empty()) v.fail("must not be empty");
  return s;
}

std::string str(double v) { return io::format_double(v); }
std::string str(int v) { return std::to_string(v); }
std::string str(std::uint64_t v) { return std::to_string(v); }
std::string str(bool v) { return v ? "true" : "false"; }
std::string str(const std::string& v) { return "\"" + io::printable(v) + "\""; }

}  // namespace detail

using namespace detail;

const std::vector<TableInfo>& tables() {
  static const std::vector<TableInfo> t = [] {
    std::vector<TableInfo> out = {{"lattice", "", false, true, nullptr},
                                  {"comm", "", false, true, nullptr},
                                  {"gauge", "", false, true, nullptr},
                                  {"generate",
                                   "Write an ensemble of heatbath configurations (needs gauge.source = \"heatbath\"): "
                                   "after the thermalisation, `count` configurations, one every `every` sweeps, as "
                                   "<prefix>_<sweep>.<ildg|nersc>; the last one is the one solved on. The table "
                                   "present switches it on; [[solve]] tables are then optional.",
                                   true, false, nullptr},
                                  {"dirac", "", false, true, nullptr},
                                  {"solver", "", false, true, nullptr},
                                  {"output", "", false, true, nullptr},
                                  {"log", "", false, true, nullptr},
                                  {"metrics", "", false, true, nullptr},
                                  {"tune",
                                   "The kernel autotuner: the hot kernels' launch variant (block size; for the fp32 "
                                   "operator's also a launch bound, README) is timed on first use per kernel, "
                                   "precision, links format, local volume and device, and kept in a tune-cache file "
                                   "that later runs reuse.",
                                   false, true, nullptr},
                                  {"solve",
                                   "One [[solve]] table per right-hand side; at least one is required (unless "
                                   "[generate] is given). A key of another type (spin on a random solve, say) is an "
                                   "error.",
                                   false, true, nullptr}};
    auto info = [&](const char* name) -> TableInfo& {
      return *std::find_if(out.begin(), out.end(), [&](const TableInfo& t) { return t.name == name; });
    };
    info("comm").begin = [](const io::InputTable& table, Target&) {
      if (table.get("transport") && table.get("gpu_aware"))
        io::fail(table.key_path("gpu_aware"), "give comm.transport or the older comm.gpu_aware, not both");
    };
    info("gauge").end = [](const io::InputTable& table, Target& t) { resolve_ensemble(t.cfg.gauge, table); };
    info("generate").begin = [](const io::InputTable&, Target& t) {
      t.cfg.generate.enabled = true;
      if (t.cfg.gauge.source != GaugeSource::Heatbath)
        io::fail("generate", "needs gauge.source = \"heatbath\" (an ensemble is generated by the heatbath)");
    };
    return out;
  }();
  return t;
}

const std::vector<KindInfo>& solve_kinds() {
  static const std::vector<KindInfo> k = {
      {SolveKind::Point, "point_origin", "Point source: one at site, spin, colour, zero elsewhere."},
      {SolveKind::Random, "noise.z2", "Random source on every site, spin and colour."},
      {SolveKind::PlaneWave, "plane-wave",
       "Plane-wave source psi(x) = exp(i p.x) eta with p_mu = (2 pi n_mu + theta_mu) / L_mu."},
      {SolveKind::Propagator, "pion.smeared",
       "Propagator: the 12 spin-colour solves of a point source at site (each like a point solve, the tolerances "
       "per column), then the meson two-point correlators of /correlators/<name> (README: Propagators and "
       "correlators)."}};
  return k;
}

const std::vector<Param>& parameters() {
  static const std::vector<Param> p = [] {
    std::vector<Param> out;
    declare_run_keys(out);
    declare_solve_keys(out);
    return out;
  }();
  return p;
}

std::string choice_name(Precision v) { return precisions().name(v); }
std::string choice_name(Sloppy v) { return sloppies().name(v); }
std::string choice_name(Stop v) { return stops().name(v); }
std::string choice_name(GaugeSource v) { return gauge_sources().name(v); }
std::string choice_name(SolveKind v) { return solve_kind_list().name(v); }
std::string choice_name(NoiseKind v) { return noise_kinds().name(v); }
std::string choice_name(QuarkSmearingKind v) { return quark_smearings().name(v); }
std::string choice_name(LinkSmearingKind v) { return link_smearings().name(v); }
std::string choice_name(GaugeFormat v) { return gauge_formats().name(v); }
std::string choice_name(OutputIo v) { return output_ios().name(v); }

bool for_kind(const Param& p, SolveKind kind) { return p.kinds == 0 || (p.kinds & kind_bit(kind)) != 0; }

io::KeyList solve_keys(SolveKind kind) {
  io::KeyList keys;
  for (const Param& p : parameters())
    if (p.table == "solve" && p.kinds == 0) keys.push_back(p.key);
  for (const Param& p : parameters())
    if (p.table == "solve" && p.kinds != 0 && for_kind(p, kind)) keys.push_back(p.key);
  return keys;
}

std::vector<InputAttribute> solve_attributes(const Config& cfg, const SolveConfig& solve) {
  std::vector<InputAttribute> out;
  const View view{cfg, &solve};
  for (const Param& p : parameters()) {
    if (p.attribute.empty() || !p.value) continue;
    if (p.table == "solve" && !for_kind(p, solve.kind)) continue;
    if (p.attribute_kinds != 0 && (p.attribute_kinds & kind_bit(solve.kind)) == 0) continue;
    out.push_back(InputAttribute{p.attribute, p.value(view)});
  }
  return out;
}

}  // namespace emprism::run
