// toml_config.cpp: the TOML input reader and validator (toml++ 3.x), filling emprism::Config.
//   parse_config   parse the text, then validate section by section in a fixed order
//   load_config    read the whole file (C stdio, errno for the reason), then parse_config
// Helpers (file-local): fail() throws the one InputError; read_* check one key's type and range;
// Section rejects unknown keys (suggesting the closest known key) and finds required ones.
// Rules: docs/conventions.md s. 12. Float keys take integers (kappa = 1) but never NaN or inf; integer keys never
// accept floats (max_iter = 100.0 is an error). Messages are one line: control characters in user text are escaped.
// Convention: (x, y, z, t) = mu 0..3 for extents, sites and momenta (docs/conventions.md section 1).
// Who may call: through io/toml_config.hpp only.
#include "io/toml_config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "src/contractions.hpp"
#include "src/errors.hpp"
#include "src/sources.hpp"

namespace emprism::io {
namespace {

using KeyList = std::vector<std::string_view>;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();
constexpr const char* kExtentNames[4] = {"Lx", "Ly", "Lz", "Lt"};
constexpr const char* kCoordNames[4] = {"x", "y", "z", "t"};

[[noreturn]] void fail(const std::string& path, const std::string& reason) { throw InputError(path + ": " + reason); }

// User text made safe for a one-line message: control characters become escapes.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string quoted(std::string_view text) { return "'" + printable(text) + "'"; }

// Shortest round-trip form: -0.1 prints as "-0.1", not "-0.10000000000000001".
std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    default:
      return "nothing";
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent transpositions cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// The known word closest to given: edit distance <= 2 (case-insensitive, first of equals wins), otherwise a
// known word of 3+ characters that is a prefix of given or vice versa ("tolerance" -> "tol", "warning" -> "warn").
std::optional<std::string_view> closest(std::string_view given, const KeyList& known) {
  const std::string g = lower(given);
  std::optional<std::string_view> best;
  std::size_t best_distance = 3;
  for (std::string_view k : known) {
    const std::string kl = lower(k);
    const std::size_t d = edit_distance(g, kl);
    if (d < best_distance && d < kl.size()) {
      best = k;
      best_distance = d;
    }
  }
  if (best) return best;
  for (std::string_view k : known) {
    const std::string kl = lower(k);
    const std::size_t shorter = std::min(g.size(), kl.size());
    if (shorter >= 3 && g.compare(0, shorter, kl, 0, shorter) == 0) return k;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view given, const KeyList& known) {
  const auto suggestion = closest(given, known);
  return suggestion ? " (did you mean '" + std::string(*suggestion) + "'?)" : "";
}

// ---- scalar readers: type first, then value ----

std::int64_t read_integer(const toml::node& node, const std::string& path) {
  if (!node.is_integer()) fail(path, "expected an integer, got " + type_name(node));
  return node.as_integer()->get();
}

// An integer in [lo, hi]; the message says the bound that was broken.
std::int64_t read_integer_in(const toml::node& node, const std::string& path, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = read_integer(node, path);
  if (v >= lo && v <= hi) return v;
  const bool lower_bound_only = (hi == kIntMax || hi == std::numeric_limits<std::int64_t>::max()) && lo != kIntMin;
  std::string rule;
  if (!lower_bound_only) {
    rule = "must be in " + std::to_string(lo) + ".." + std::to_string(hi);
  } else if (v > hi) {
    rule = "must be <= " + std::to_string(hi);
  } else {
    rule = lo == 1 ? std::string("must be > 0") : "must be >= " + std::to_string(lo);
  }
  fail(path, rule + ", got " + std::to_string(v));
}

int read_int(const toml::node& node, const std::string& path, std::int64_t lo, std::int64_t hi) {
  return static_cast<int>(read_integer_in(node, path, lo, hi));
}

std::uint64_t read_seed(const toml::node& node, const std::string& path) {
  return static_cast<std::uint64_t>(read_integer_in(node, path, 0, std::numeric_limits<std::int64_t>::max()));
}

// A finite float; integers are accepted and converted.
double read_float(const toml::node& node, const std::string& path) {
  double v = 0.0;
  if (node.is_integer()) {
    v = static_cast<double>(node.as_integer()->get());
  } else if (node.is_floating_point()) {
    v = node.as_floating_point()->get();
  } else {
    fail(path, "expected a float, got " + type_name(node));
  }
  if (!std::isfinite(v)) fail(path, "must be finite, got " + format_double(v));
  return v;
}

bool read_bool(const toml::node& node, const std::string& path) {
  if (!node.is_boolean()) fail(path, "expected a boolean, got " + type_name(node));
  return node.as_boolean()->get();
}

std::string read_string(const toml::node& node, const std::string& path) {
  if (!node.is_string()) fail(path, "expected a string, got " + type_name(node));
  return node.as_string()->get();
}

template <typename E>
E read_choice(const toml::node& node, const std::string& path,
              const std::vector<std::pair<std::string_view, E>>& choices) {
  const std::string v = read_string(node, path);
  KeyList names;
  std::string listed;
  for (const auto& [name, value] : choices) {
    if (v == name) return value;
    names.push_back(name);
    listed += (listed.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  fail(path, "must be one of " + listed + ", got " + quoted(v) + did_you_mean(v, names));
}

// An array of exactly count elements; what describes them for the message ("4 integers").
const toml::array& read_array(const toml::node& node, const std::string& path, std::size_t count,
                              const std::string& what) {
  if (!node.is_array()) fail(path, "expected an array of " + what + ", got " + type_name(node));
  const toml::array& array = *node.as_array();
  if (array.size() != count)
    fail(path, "expected an array of " + what + ", got " + std::to_string(array.size()) +
                   (array.size() == 1 ? " element" : " elements"));
  return array;
}

std::string element_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::array<std::int64_t, 4> read_int4(const toml::node& node, const std::string& path) {
  const toml::array& array = read_array(node, path, 4, "4 integers");
  std::array<std::int64_t, 4> out{};
  for (std::size_t mu = 0; mu < 4; ++mu) out[mu] = read_integer(*array.get(mu), element_path(path, mu));
  return out;
}

std::array<double, 4> read_float4(const toml::node& node, const std::string& path) {
  const toml::array& array = read_array(node, path, 4, "4 floats");
  std::array<double, 4> out{};
  for (std::size_t mu = 0; mu < 4; ++mu) out[mu] = read_float(*array.get(mu), element_path(path, mu));
  return out;
}

// ---- tables ----

// One TOML table (possibly absent) and its key path.
class Section {
 public:
  Section(const toml::table* table, std::string path) : table_(table), path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  std::string key_path(std::string_view key) const {
    return path_.empty() ? printable(key) : path_ + "." + printable(key);
  }

  const toml::node* get(std::string_view key) const { return table_ ? table_->get(key) : nullptr; }
  bool present() const { return table_ != nullptr; }

  const toml::node& require(std::string_view key) const {
    const toml::node* node = get(key);
    if (!node) fail(key_path(key), "required key is missing");
    return *node;
  }

  // The key not in allowed that comes first in the file, or null.
  const toml::key* first_key_not_in(const KeyList& allowed) const {
    if (!table_) return nullptr;
    const toml::key* first = nullptr;
    for (auto&& [key, node] : *table_) {
      (void)node;
      if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
      if (!first || before(key, *first)) first = &key;
    }
    return first;
  }

  void reject_unknown(const KeyList& known) const {
    if (const toml::key* key = first_key_not_in(known))
      fail(key_path(key->str()), "unknown key" + did_you_mean(key->str(), known));
  }

 private:
  static bool before(const toml::key& a, const toml::key& b) {
    const auto& pa = a.source().begin;
    const auto& pb = b.source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  }

  const toml::table* table_;
  std::string path_;
};

// A top-level section: absent is fine (all defaults), anything but a table is an error.
Section section(const toml::table& root, std::string_view key) {
  const toml::node* node = root.get(key);
  if (node && !node->is_table()) fail(std::string(key), "expected a table, got " + type_name(*node));
  return Section(node ? node->as_table() : nullptr, std::string(key));
}

void read_lattice(const Section& s, LatticeConfig& out) {
  s.reject_unknown({"extents", "procs"});
  const std::string path = s.key_path("extents");
  const auto extents = read_int4(s.require("extents"), path);
  for (int mu = 0; mu < 4; ++mu) {
    const std::string named = std::string(kExtentNames[mu]) + " = " + std::to_string(extents[mu]);
    if (extents[mu] < 2) fail(path, named + " is too small; every extent must be even and >= 2");
    if (extents[mu] > kIntMax) fail(path, named + " is too large; every extent must be <= " + std::to_string(kIntMax));
    if (extents[mu] % 2 != 0) fail(path, named + " is odd; every extent must be even");
    out.extents[mu] = static_cast<int>(extents[mu]);
  }
  // Only shape and sign here: whether the grid divides the extents into even local extents and matches the rank
  // count is checked by comm/process_grid.cpp, which knows the rank count.
  if (const auto* n = s.get("procs")) {
    const std::string procs_path = s.key_path("procs");
    const toml::array& array = read_array(*n, procs_path, 4, "4 integers");
    std::array<int, 4> procs{};
    for (std::size_t mu = 0; mu < 4; ++mu)
      procs[mu] = read_int(*array.get(mu), element_path(procs_path, mu), 1, kIntMax);
    out.procs = procs;
  }
}

void read_comm(const Section& s, CommConfig& out) {
  s.reject_unknown({"force_halo", "transport", "gpu_aware"});
  if (s.get("transport") && s.get("gpu_aware"))
    fail(s.key_path("gpu_aware"), "give comm.transport or the older comm.gpu_aware, not both");
  if (const auto* n = s.get("transport"))
    out.transport = read_choice<CommConfig::Transport>(*n, s.key_path("transport"),
                                                       {{"auto", CommConfig::Transport::Auto},
                                                        {"staged", CommConfig::Transport::Staged},
                                                        {"gpu_aware", CommConfig::Transport::GpuAware},
                                                        {"peer", CommConfig::Transport::Peer}});
  if (const auto* n = s.get("gpu_aware")) {
    const std::string path = s.key_path("gpu_aware");
    out.transport_key = path;
    if (n->is_boolean()) {
      const bool on = n->as_boolean()->get();
      out.transport = on ? CommConfig::Transport::GpuAware : CommConfig::Transport::Auto;
      out.gpu_aware_in_auto = on;
    } else if (n->is_string() && n->as_string()->get() == "auto") {
      out.transport = CommConfig::Transport::Auto;
    } else {
      fail(path, "expected true, false or \"auto\", got " +
                     (n->is_string() ? "'" + n->as_string()->get() + "'" : type_name(*n)));
    }
  }
  if (const auto* n = s.get("force_halo")) {
    const std::string path = s.key_path("force_halo");
    const toml::array& array = read_array(*n, path, 4, "4 booleans");
    for (std::size_t mu = 0; mu < 4; ++mu) out.force_halo[mu] = read_bool(*array.get(mu), element_path(path, mu));
  }
}

void read_gauge(const Section& s, GaugeConfig& out) {
  s.reject_unknown({"source", "width", "seed", "file", "format", "beta", "sweeps", "or_per_sweep"});
  if (const auto* n = s.get("source"))
    out.source = read_choice<GaugeSource>(*n, s.key_path("source"),
                                          {{"unit", GaugeSource::Unit},
                                           {"random", GaugeSource::Random},
                                           {"file", GaugeSource::File},
                                           {"heatbath", GaugeSource::Heatbath}});
  // Keys that belong to another source are errors (they would be silently ignored).
  auto only_for = [&](const char* key, GaugeSource src, const char* name) {
    if (s.get(key) && out.source != src) fail(s.key_path(key), std::string("only for gauge.source = \"") + name + "\"");
  };
  only_for("file", GaugeSource::File, "file");
  only_for("format", GaugeSource::File, "file");
  only_for("beta", GaugeSource::Heatbath, "heatbath");
  only_for("sweeps", GaugeSource::Heatbath, "heatbath");
  only_for("or_per_sweep", GaugeSource::Heatbath, "heatbath");
  if (const auto* n = s.get("width")) {
    out.width = read_float(*n, s.key_path("width"));
    if (out.width < 0.0 || out.width > 1.0)
      fail(s.key_path("width"), "must be in [0, 1], got " + format_double(out.width));
  }
  if (const auto* n = s.get("seed")) out.seed = read_seed(*n, s.key_path("seed"));
  if (out.source == GaugeSource::File) {
    out.file = read_string(s.require("file"), s.key_path("file"));
    if (out.file.empty()) fail(s.key_path("file"), "must not be empty");
    if (std::FILE* f = std::fopen(out.file.c_str(), "rb")) {
      std::fclose(f);
    } else {
      fail(s.key_path("file"), "cannot read '" + out.file + "': " + std::strerror(errno));
    }
    if (const auto* n = s.get("format"))
      out.format = read_choice<GaugeFileFormat>(*n, s.key_path("format"),
                                                {{"auto", GaugeFileFormat::Auto},
                                                 {"ildg", GaugeFileFormat::Ildg},
                                                 {"nersc", GaugeFileFormat::Nersc},
                                                 {"openqcd", GaugeFileFormat::OpenQcd},
                                                 {"milc", GaugeFileFormat::Milc}});
  }
  if (const auto* n = s.get("beta")) {
    out.beta = read_float(*n, s.key_path("beta"));
    if (!(out.beta > 0.0)) fail(s.key_path("beta"), "must be > 0, got " + format_double(out.beta));
  }
  if (const auto* n = s.get("sweeps")) out.sweeps = static_cast<int>(read_int(*n, s.key_path("sweeps"), 0, kIntMax));
  if (const auto* n = s.get("or_per_sweep"))
    out.or_per_sweep = static_cast<int>(read_int(*n, s.key_path("or_per_sweep"), 0, 1000));
}

void read_generate(const Section& s, const GaugeConfig& gauge, GenerateConfig& out) {
  if (!s.present()) return;
  s.reject_unknown({"count", "every", "format", "prefix"});
  out.enabled = true;
  if (gauge.source != GaugeSource::Heatbath)
    fail("generate", "needs gauge.source = \"heatbath\" (an ensemble is generated by the heatbath)");
  if (const auto* n = s.get("count")) out.count = static_cast<int>(read_int(*n, s.key_path("count"), 1, kIntMax));
  if (const auto* n = s.get("every")) out.every = static_cast<int>(read_int(*n, s.key_path("every"), 1, kIntMax));
  if (const auto* n = s.get("format"))
    out.format = read_choice<GaugeFileFormat>(*n, s.key_path("format"),
                                              {{"ildg", GaugeFileFormat::Ildg}, {"nersc", GaugeFileFormat::Nersc}});
  if (const auto* n = s.get("prefix")) {
    out.prefix = read_string(*n, s.key_path("prefix"));
    if (out.prefix.empty()) fail(s.key_path("prefix"), "must not be empty");
  }
}

void read_dirac(const Section& s, DiracConfig& out) {
  s.reject_unknown({"kappa", "csw", "theta_over_pi"});
  out.kappa = read_float(s.require("kappa"), s.key_path("kappa"));
  if (!(out.kappa > 0.0)) fail(s.key_path("kappa"), "must be > 0, got " + format_double(out.kappa));
  if (const auto* n = s.get("csw")) {
    out.csw = read_float(*n, s.key_path("csw"));
    if (out.csw < 0.0) fail(s.key_path("csw"), "must be >= 0, got " + format_double(out.csw));
  }
  if (const auto* n = s.get("theta_over_pi")) out.theta_over_pi = read_float4(*n, s.key_path("theta_over_pi"));
}

double read_tol(const toml::node& node, const std::string& path) {
  const double tol = read_float(node, path);
  if (!(tol > 0.0 && tol < 1.0)) fail(path, "must be > 0 and < 1, got " + format_double(tol));
  return tol;
}

void read_solver(const Section& s, SolverConfig& out) {
  s.reject_unknown({"precision", "tol", "max_iter"});
  if (const auto* n = s.get("precision"))
    out.precision = read_choice<Precision>(
        *n, s.key_path("precision"),
        {{"single", Precision::Single}, {"double", Precision::Double}, {"mixed", Precision::Mixed}});
  if (const auto* n = s.get("tol")) out.tol = read_tol(*n, s.key_path("tol"));
  if (const auto* n = s.get("max_iter")) out.max_iter = read_int(*n, s.key_path("max_iter"), 1, kIntMax);
}

void read_output(const Section& s, OutputConfig& out) {
  s.reject_unknown({"file", "overwrite", "write_gauge", "fields", "io", "resume"});
  out.file = read_string(s.require("file"), s.key_path("file"));
  if (out.file.empty()) fail(s.key_path("file"), "must not be empty");
  if (out.file.find('\0') != std::string::npos) fail(s.key_path("file"), "must not contain a NUL character");
  if (const auto* n = s.get("overwrite")) out.overwrite = read_bool(*n, s.key_path("overwrite"));
  if (const auto* n = s.get("write_gauge")) out.write_gauge = read_bool(*n, s.key_path("write_gauge"));
  if (const auto* n = s.get("fields")) out.fields = read_bool(*n, s.key_path("fields"));
  if (const auto* n = s.get("io"))
    out.io = read_choice<OutputIo>(
        *n, s.key_path("io"),
        {{"auto", OutputIo::Auto}, {"collective", OutputIo::Collective}, {"gather", OutputIo::Gather}});
  if (const auto* n = s.get("resume")) out.resume = read_bool(*n, s.key_path("resume"));
}

void read_log(const Section& s, LogConfig& out) {
  s.reject_unknown({"level", "progress_every", "per_rank"});
  if (const auto* n = s.get("level"))
    out.level = std::string(read_choice<std::string_view>(
        *n, s.key_path("level"),
        {{"trace", "trace"}, {"debug", "debug"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}}));
  if (const auto* n = s.get("progress_every"))
    out.progress_every = read_int(*n, s.key_path("progress_every"), 1, kIntMax);
  if (const auto* n = s.get("per_rank")) out.per_rank = read_bool(*n, s.key_path("per_rank"));
}

void read_metrics(const Section& s, MetricsConfig& out) {
  s.reject_unknown({"peak"});
  if (const auto* n = s.get("peak")) out.peak = read_bool(*n, s.key_path("peak"));
}

// ---- [[solve]] ----

const KeyList kSolveCommonKeys = {"name", "type", "tol", "max_iter"};
const KeyList kPointKeys = {"site", "spin", "colour"};
const KeyList kRandomKeys = {"seed", "distribution"};
const KeyList kPlaneWaveKeys = {"momentum", "spinor"};
// "site" is shared with point (a key of both kinds is allowed for both).
const KeyList kPropagatorKeys = {"site",
                                 "channels",
                                 "momenta",
                                 "smearing",
                                 "smearing_steps",
                                 "smearing_weight",
                                 "link_smearing",
                                 "link_smearing_steps",
                                 "link_smearing_weight"};
constexpr SourceKind kAllKinds[] = {SourceKind::Point, SourceKind::Random, SourceKind::PlaneWave,
                                    SourceKind::Propagator};

std::string_view kind_name(SourceKind kind) { return source_kind_name(kind); }  // src/sources.hpp

const KeyList& kind_keys(SourceKind kind) {
  switch (kind) {
    case SourceKind::Point:
      return kPointKeys;
    case SourceKind::Random:
      return kRandomKeys;
    case SourceKind::PlaneWave:
      return kPlaneWaveKeys;
    case SourceKind::Propagator:
      break;
  }
  return kPropagatorKeys;
}

// Keys of the solve's own type and the common ones are allowed; a key of another type says which type it belongs to.
void reject_unknown_solve_keys(const Section& s, SourceKind kind) {
  KeyList allowed = kSolveCommonKeys;
  const KeyList& own = kind_keys(kind);
  allowed.insert(allowed.end(), own.begin(), own.end());
  const toml::key* key = s.first_key_not_in(allowed);
  if (!key) return;
  for (SourceKind other : kAllKinds) {
    const KeyList& keys = kind_keys(other);
    if (std::find(keys.begin(), keys.end(), key->str()) != keys.end())
      fail(s.key_path(key->str()), "not allowed for type '" + std::string(kind_name(kind)) + "' (it belongs to type '" +
                                       std::string(kind_name(other)) + "')");
  }
  fail(s.key_path(key->str()), "unknown key" + did_you_mean(key->str(), allowed));
}

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  if (name.find_first_not_of('.') == std::string::npos)
    return false;  // names of dots only ("." and "..") read as path steps
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

void read_site(const Section& s, const LatticeConfig& lattice, SolveConfig& out) {
  if (const auto* n = s.get("site")) {
    const std::string path = s.key_path("site");
    const auto site = read_int4(*n, path);
    for (int mu = 0; mu < 4; ++mu) {
      if (site[mu] < 0 || site[mu] >= lattice.extents[mu])
        fail(path, std::string(kCoordNames[mu]) + " = " + std::to_string(site[mu]) + " is outside the lattice (0 <= " +
                       kCoordNames[mu] + " < " + kExtentNames[mu] + " = " + std::to_string(lattice.extents[mu]) + ")");
      out.site[mu] = static_cast<int>(site[mu]);
    }
  }
}

void read_point(const Section& s, const LatticeConfig& lattice, SolveConfig& out) {
  read_site(s, lattice, out);
  if (const auto* n = s.get("spin")) out.spin = read_int(*n, s.key_path("spin"), 0, 3);
  if (const auto* n = s.get("colour")) out.colour = read_int(*n, s.key_path("colour"), 0, 2);
}

void read_random(const Section& s, SolveConfig& out) {
  if (const auto* n = s.get("seed")) out.seed = read_seed(*n, s.key_path("seed"));
  if (const auto* n = s.get("distribution"))
    out.noise = read_choice<NoiseKind>(*n, s.key_path("distribution"),
                                       {{"gaussian", NoiseKind::Gaussian}, {"z2", NoiseKind::Z2}});
}

void read_plane_wave(const Section& s, SolveConfig& out) {
  if (const auto* n = s.get("momentum")) {
    const std::string path = s.key_path("momentum");
    const toml::array& array = read_array(*n, path, 4, "4 integers");
    for (std::size_t mu = 0; mu < 4; ++mu)
      out.momentum[mu] = read_int(*array.get(mu), element_path(path, mu), kIntMin, kIntMax);
  }
  const std::string path = s.key_path("spinor");
  const toml::array& spinor = read_array(s.require("spinor"), path, 12, "12 [re, im] pairs");
  bool all_zero = true;
  for (std::size_t k = 0; k < 12; ++k) {
    const std::string pair_path = element_path(path, k);
    const toml::node& entry = *spinor.get(k);
    const toml::array& pair = read_array(entry, pair_path, 2, "2 floats [re, im]");
    const double re = read_float(*pair.get(0), element_path(pair_path, 0));
    const double im = read_float(*pair.get(1), element_path(pair_path, 1));
    out.spinor[k] = {re, im};
    if (re != 0.0 || im != 0.0) all_zero = false;
  }
  if (all_zero) fail(path, "must not be all zero");
}

// channels: a non-empty array of distinct known channel names (src/contractions.hpp).
std::vector<std::string> read_channels(const toml::node& node, const std::string& path) {
  if (!node.is_array()) fail(path, "expected an array of channel names, got " + type_name(node));
  const toml::array& array = *node.as_array();
  if (array.empty()) fail(path, "must name at least one channel (leave the key out for all channels)");
  KeyList known;
  std::string listed;
  for (const MesonChannel& c : meson_channels()) {
    known.push_back(c.name);
    listed += (listed.empty() ? "'" : ", '") + c.name + "'";
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string p = element_path(path, i);
    const std::string name = read_string(*array.get(i), p);
    if (!find_meson_channel(name))
      fail(p, "unknown channel " + quoted(name) + did_you_mean(name, known) + "; known: " + listed);
    if (std::find(out.begin(), out.end(), name) != out.end()) fail(p, "channel " + quoted(name) + " is listed twice");
    out.push_back(name);
  }
  return out;
}

// momenta: an array of [nx, ny, nz] integer triples (units of 2 pi / L), distinct; (0, 0, 0) always comes first.
std::vector<std::array<int, 3>> read_momenta(const toml::node& node, const std::string& path) {
  if (!node.is_array()) fail(path, "expected an array of [nx, ny, nz] integer triples, got " + type_name(node));
  const toml::array& array = *node.as_array();
  std::vector<std::array<int, 3>> out{{0, 0, 0}};
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string p = element_path(path, i);
    const toml::array& triple = read_array(*array.get(i), p, 3, "3 integers [nx, ny, nz]");
    std::array<int, 3> n{};
    for (std::size_t k = 0; k < 3; ++k) n[k] = read_int(*triple.get(k), element_path(p, k), -1000000, 1000000);
    if (n == std::array<int, 3>{0, 0, 0}) continue;  // always computed
    if (std::find(out.begin(), out.end(), n) != out.end())
      fail(p, "momentum [" + std::to_string(n[0]) + ", " + std::to_string(n[1]) + ", " + std::to_string(n[2]) +
                  "] is listed twice");
    out.push_back(n);
  }
  return out;
}

void read_propagator(const Section& s, const LatticeConfig& lattice, SolveConfig& out) {
  read_site(s, lattice, out);
  if (const auto* n = s.get("channels")) {
    out.channels = read_channels(*n, s.key_path("channels"));
  } else {
    for (const MesonChannel& c : meson_channels()) out.channels.push_back(c.name);
  }
  if (const auto* n = s.get("momenta")) out.momenta = read_momenta(*n, s.key_path("momenta"));

  SmearingConfig& sm = out.smearing;
  if (const auto* n = s.get("smearing"))
    sm.kind = read_choice<QuarkSmearingKind>(*n, s.key_path("smearing"),
                                             {{"none", QuarkSmearingKind::None},
                                              {"wuppertal", QuarkSmearingKind::Wuppertal},
                                              {"jacobi", QuarkSmearingKind::Jacobi}});
  if (const auto* n = s.get("link_smearing"))
    sm.link_kind = read_choice<LinkSmearingKind>(
        *n, s.key_path("link_smearing"),
        {{"none", LinkSmearingKind::None}, {"ape", LinkSmearingKind::Ape}, {"stout", LinkSmearingKind::Stout}});
  // Keys of a smearing that is off would be silently ignored: errors.
  if (sm.kind == QuarkSmearingKind::None) {
    for (const char* key : {"smearing_steps", "smearing_weight"})
      if (s.get(key)) fail(s.key_path(key), "only with smearing = \"wuppertal\" or \"jacobi\"");
    if (sm.link_kind != LinkSmearingKind::None)
      fail(s.key_path("link_smearing"),
           "smeared links are used by the source smearing only; set smearing = \"wuppertal\" or \"jacobi\" too");
  } else {
    sm.steps = read_int(s.require("smearing_steps"), s.key_path("smearing_steps"), 1, 100000);
    const std::string wpath = s.key_path("smearing_weight");
    sm.weight = read_float(s.require("smearing_weight"), wpath);
    if (!(sm.weight > 0.0)) fail(wpath, "must be > 0, got " + format_double(sm.weight));
  }
  if (sm.link_kind == LinkSmearingKind::None) {
    for (const char* key : {"link_smearing_steps", "link_smearing_weight"})
      if (s.get(key)) fail(s.key_path(key), "only with link_smearing = \"ape\" or \"stout\"");
  } else {
    sm.link_steps = read_int(s.require("link_smearing_steps"), s.key_path("link_smearing_steps"), 1, 100000);
    const std::string wpath = s.key_path("link_smearing_weight");
    sm.link_weight = read_float(s.require("link_smearing_weight"), wpath);
    if (sm.link_kind == LinkSmearingKind::Ape && !(sm.link_weight > 0.0 && sm.link_weight <= 1.0))
      fail(wpath, "APE alpha must be in (0, 1], got " + format_double(sm.link_weight));
    if (sm.link_kind == LinkSmearingKind::Stout && !(sm.link_weight > 0.0))
      fail(wpath, "stout rho must be > 0, got " + format_double(sm.link_weight));
  }
}

struct NameUse {
  std::string name;
  bool is_default;
};

void read_solves(const toml::table& root, const LatticeConfig& lattice, bool optional, std::vector<SolveConfig>& out) {
  const toml::node* node = root.get("solve");
  if (!node && optional) return;
  if (!node) fail("solve", "required key is missing (add at least one [[solve]] table)");
  if (!node->is_array()) fail("solve", "expected an array of tables ([[solve]]), got " + type_name(*node));
  const toml::array& solves = *node->as_array();
  if (solves.empty()) fail("solve", "at least one [[solve]] table is required");

  std::vector<NameUse> names;
  for (std::size_t i = 0; i < solves.size(); ++i) {
    const std::string path = element_path("solve", i);
    const toml::node& entry = *solves.get(i);
    if (!entry.is_table()) fail(path, "expected a table, got " + type_name(entry));
    const Section s(entry.as_table(), path);
    SolveConfig solve;

    solve.kind = read_choice<SourceKind>(s.require("type"), s.key_path("type"),
                                         {{"point", SourceKind::Point},
                                          {"random", SourceKind::Random},
                                          {"plane_wave", SourceKind::PlaneWave},
                                          {"propagator", SourceKind::Propagator}});
    reject_unknown_solve_keys(s, solve.kind);

    const bool named = s.get("name") != nullptr;
    if (named) {
      solve.name = read_string(*s.get("name"), s.key_path("name"));
      if (!valid_name(solve.name))
        fail(s.key_path("name"), quoted(solve.name) +
                                     " is not a valid name; use letters, digits, '_', '.', '-' "
                                     "(not only dots)");
    } else {
      solve.name = "solve" + std::to_string(i);
    }
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (names[j].name != solve.name) continue;
      const std::string user = element_path("solve", j);
      if (named)
        fail(s.key_path("name"),
             quoted(solve.name) + " is used by " + user + (names[j].is_default ? " (its default name)" : ""));
      fail(s.key_path("name"),
           "default name " + quoted(solve.name) + " is used by " + user + "; give " + path + " a name");
    }
    names.push_back({solve.name, !named});

    if (const auto* n = s.get("tol")) solve.tol = read_tol(*n, s.key_path("tol"));
    if (const auto* n = s.get("max_iter")) solve.max_iter = read_int(*n, s.key_path("max_iter"), 1, kIntMax);

    switch (solve.kind) {
      case SourceKind::Point:
        read_point(s, lattice, solve);
        break;
      case SourceKind::Random:
        read_random(s, solve);
        break;
      case SourceKind::PlaneWave:
        read_plane_wave(s, solve);
        break;
      case SourceKind::Propagator:
        read_propagator(s, lattice, solve);
        break;
    }
    out.push_back(std::move(solve));
  }
}

toml::table parse_toml(std::string_view text, const std::string& origin_path) {
  const std::string origin = origin_path.empty() ? "<input>" : origin_path;
  auto syntax_error = [&](const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return InputError(printable(origin) + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                      ": TOML syntax error: " + printable(e.description()));
  };
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw syntax_error(e);
  }
#else
  toml::parse_result result = toml::parse(text, origin);
  if (!result) throw syntax_error(result.error());
  return std::move(result).table();
#endif
}

}  // namespace

Config parse_config(std::string_view toml_text, const std::string& origin_path) {
  const toml::table root = parse_toml(toml_text, origin_path);
  Config config;
  config.input_text = std::string(toml_text);
  config.input_path = origin_path;

  Section(&root, "").reject_unknown(
      {"lattice", "comm", "gauge", "generate", "dirac", "solver", "output", "log", "metrics", "solve"});
  read_lattice(section(root, "lattice"), config.lattice);
  read_comm(section(root, "comm"), config.comm);
  read_gauge(section(root, "gauge"), config.gauge);
  read_generate(section(root, "generate"), config.gauge, config.generate);
  read_dirac(section(root, "dirac"), config.dirac);
  read_solver(section(root, "solver"), config.solver);
  read_output(section(root, "output"), config.output);
  read_log(section(root, "log"), config.log);
  read_metrics(section(root, "metrics"), config.metrics);
  read_solves(root, config.lattice, config.generate.enabled, config.solves);
  return config;
}

Config load_config(const std::string& path) {
  auto cannot_read = [&](int err) { return InputError(path + ": cannot read input file: " + std::strerror(err)); };
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) throw cannot_read(errno != 0 ? errno : ENOENT);
  std::string text;
  char buf[65536];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, file)) > 0) text.append(buf, got);
  const int read_errno = errno;
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw cannot_read(read_errno != 0 ? read_errno : EIO);
  return parse_config(text, path);
}

namespace {

std::string str(double v) { return format_double(v); }
std::string str(int v) { return std::to_string(v); }
std::string str(std::uint64_t v) { return std::to_string(v); }
std::string str(bool v) { return v ? "true" : "false"; }
std::string str(const std::string& v) { return "\"" + printable(v) + "\""; }
template <typename T, std::size_t N>
std::string str(const std::array<T, N>& a) {
  std::string out = "[";
  for (std::size_t i = 0; i < N; ++i) out += (i ? ", " : "") + str(a[i]);
  return out + "]";
}

}  // namespace

std::string physics_inputs(const Config& c) {
  std::string out;
  auto line = [&](const std::string& key, const std::string& value) { out += key + " = " + value + "\n"; };
  line("lattice.extents", str(c.lattice.extents));
  const GaugeConfig& g = c.gauge;
  line("gauge.source", str(std::string(gauge_source_name(g.source))));
  switch (g.source) {
    case GaugeSource::Random:
      line("gauge.width", str(g.width));
      line("gauge.seed", str(g.seed));
      break;
    case GaugeSource::File:
      line("gauge.file", str(g.file));
      line("gauge.format", str(std::string(gauge_file_format_name(g.format))));
      break;
    case GaugeSource::Heatbath:
      line("gauge.beta", str(g.beta));
      line("gauge.sweeps", str(g.sweeps));
      line("gauge.or_per_sweep", str(g.or_per_sweep));
      line("gauge.seed", str(g.seed));
      break;
    case GaugeSource::Unit:
      break;
  }
  if (c.generate.enabled) {
    line("generate.count", str(c.generate.count));
    line("generate.every", str(c.generate.every));
    line("generate.format", str(std::string(gauge_file_format_name(c.generate.format))));
    line("generate.prefix", str(c.generate.prefix));
  }
  line("dirac.kappa", str(c.dirac.kappa));
  line("dirac.csw", str(c.dirac.csw));
  line("dirac.theta_over_pi", str(c.dirac.theta_over_pi));
  line("solver.precision", str(std::string(precision_name(c.solver.precision))));
  line("solver.tol", str(c.solver.tol));
  line("solver.max_iter", str(c.solver.max_iter));
  line("output.fields", str(c.output.fields));
  line("output.write_gauge", str(c.output.write_gauge));
  for (std::size_t i = 0; i < c.solves.size(); ++i) {
    const SolveConfig& s = c.solves[i];
    const std::string p = element_path("solve", i) + ".";
    line(p + "name", str(s.name));
    line(p + "type", str(std::string(kind_name(s.kind))));
    if (s.tol) line(p + "tol", str(*s.tol));
    if (s.max_iter) line(p + "max_iter", str(*s.max_iter));
    switch (s.kind) {
      case SourceKind::Point:
        line(p + "site", str(s.site));
        line(p + "spin", str(s.spin));
        line(p + "colour", str(s.colour));
        break;
      case SourceKind::Random:
        line(p + "seed", str(s.seed));
        line(p + "distribution", str(std::string(s.noise == NoiseKind::Z2 ? "z2" : "gaussian")));
        break;
      case SourceKind::PlaneWave: {
        line(p + "momentum", str(s.momentum));
        std::string spinor = "[";
        for (std::size_t k = 0; k < 12; ++k)
          spinor += (k ? ", [" : "[") + str(s.spinor[k].real()) + ", " + str(s.spinor[k].imag()) + "]";
        line(p + "spinor", spinor + "]");
        break;
      }
      case SourceKind::Propagator: {
        line(p + "site", str(s.site));
        std::string channels = "[";
        for (std::size_t k = 0; k < s.channels.size(); ++k) channels += (k ? ", " : "") + str(s.channels[k]);
        line(p + "channels", channels + "]");
        std::string momenta = "[";
        for (std::size_t k = 0; k < s.momenta.size(); ++k) momenta += (k ? ", " : "") + str(s.momenta[k]);
        line(p + "momenta", momenta + "]");
        const SmearingConfig& sm = s.smearing;
        line(p + "smearing", str(std::string(quark_smearing_name(sm.kind))));
        if (sm.kind != QuarkSmearingKind::None) {
          line(p + "smearing_steps", str(sm.steps));
          line(p + "smearing_weight", str(sm.weight));
        }
        line(p + "link_smearing", str(std::string(link_smearing_name(sm.link_kind))));
        if (sm.link_kind != LinkSmearingKind::None) {
          line(p + "link_smearing_steps", str(sm.link_steps));
          line(p + "link_smearing_weight", str(sm.link_weight));
        }
        break;
      }
    }
  }
  return out;
}

std::string text_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace emprism::io
