// toml_reader.cpp: the TOML reader of toml_reader.hpp over toml++ 3.x: parsing, typed reads with their messages,
// unknown keys with the closest known key suggested (optimal-string-alignment distance <= 2, or a prefix).
#include "io/toml_reader.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "kernels/errors.hpp"

namespace emprism::io {

namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();

const toml::node& node_of(const void* p) { return *static_cast<const toml::node*>(p); }
const toml::table* table_of(const void* p) { return static_cast<const toml::table*>(p); }

std::string type_name_of(const toml::node& node) {
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

bool before(const toml::key& a, const toml::key& b) {
  const auto& pa = a.source().begin;
  const auto& pb = b.source().begin;
  return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
}

}  // namespace

// ---- helpers

void fail(const std::string& path, const std::string& reason) { throw InputError(path + ": " + reason); }

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

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string did_you_mean(std::string_view given, const KeyList& known) {
  const auto suggestion = closest(given, known);
  return suggestion ? " (did you mean '" + std::string(*suggestion) + "'?)" : "";
}

std::string element_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string read_input_file(const std::string& path) {
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
  return text;
}

// ---- InputValue

std::string InputValue::type_name() const { return type_name_of(node_of(node_)); }
bool InputValue::is_boolean() const { return node_of(node_).is_boolean(); }
bool InputValue::is_string() const { return node_of(node_).is_string(); }
bool InputValue::is_array() const { return node_of(node_).is_array(); }
bool InputValue::is_table() const { return node_of(node_).is_table(); }

void InputValue::fail(const std::string& reason) const { io::fail(path_, reason); }

std::int64_t InputValue::integer() const {
  const toml::node& n = node_of(node_);
  if (!n.is_integer()) fail("expected an integer, got " + type_name());
  return n.as_integer()->get();
}

std::int64_t InputValue::integer_in(std::int64_t lo, std::int64_t hi) const {
  const std::int64_t v = integer();
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
  fail(rule + ", got " + std::to_string(v));
}

double InputValue::real() const {
  const toml::node& n = node_of(node_);
  double v = 0.0;
  if (n.is_integer()) {
    v = static_cast<double>(n.as_integer()->get());
  } else if (n.is_floating_point()) {
    v = n.as_floating_point()->get();
  } else {
    fail("expected a float, got " + type_name());
  }
  if (!std::isfinite(v)) fail("must be finite, got " + format_double(v));
  return v;
}

bool InputValue::boolean() const {
  const toml::node& n = node_of(node_);
  if (!n.is_boolean()) fail("expected a boolean, got " + type_name());
  return n.as_boolean()->get();
}

std::string InputValue::string() const {
  const toml::node& n = node_of(node_);
  if (!n.is_string()) fail("expected a string, got " + type_name());
  return n.as_string()->get();
}

std::string InputValue::choice(const KeyList& names) const {
  const std::string v = string();
  std::string listed;
  for (std::string_view name : names) {
    if (v == name) return v;
    listed += (listed.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  fail("must be one of " + listed + ", got " + quoted(v) + did_you_mean(v, names));
}

std::vector<InputValue> InputValue::array_of(const std::string& what) const {
  const toml::node& n = node_of(node_);
  if (!n.is_array()) fail("expected an array of " + what + ", got " + type_name());
  const toml::array& a = *n.as_array();
  std::vector<InputValue> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.emplace_back(a.get(i), element_path(path_, i));
  return out;
}

std::vector<InputValue> InputValue::array(std::size_t count, const std::string& what) const {
  std::vector<InputValue> out = array_of(what);
  if (out.size() != count)
    fail("expected an array of " + what + ", got " + std::to_string(out.size()) +
         (out.size() == 1 ? " element" : " elements"));
  return out;
}

InputTable InputValue::table() const {
  const toml::node& n = node_of(node_);
  if (!n.is_table()) fail("expected a table, got " + type_name());
  return InputTable(n.as_table(), path_);
}

// ---- InputTable

std::string InputTable::key_path(std::string_view key) const {
  return path_.empty() ? printable(key) : path_ + "." + printable(key);
}

std::optional<InputValue> InputTable::get(std::string_view key) const {
  const toml::node* n = table_ ? table_of(table_)->get(key) : nullptr;
  if (!n) return std::nullopt;
  return InputValue(n, key_path(key));
}

InputValue InputTable::require(std::string_view key) const {
  const auto v = get(key);
  if (!v) io::fail(key_path(key), "required key is missing");
  return *v;
}

std::optional<std::string> InputTable::first_key_not_in(const KeyList& allowed) const {
  if (!table_) return std::nullopt;
  const toml::key* first = nullptr;
  for (auto&& [key, node] : *table_of(table_)) {
    (void)node;
    if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
    if (!first || before(key, *first)) first = &key;
  }
  if (!first) return std::nullopt;
  return std::string(first->str());
}

void InputTable::reject_unknown(const KeyList& known) const {
  if (const auto key = first_key_not_in(known)) io::fail(key_path(*key), "unknown key" + did_you_mean(*key, known));
}

InputTable InputTable::section(std::string_view key) const {
  const auto v = get(key);
  if (!v) return InputTable(nullptr, key_path(key));
  if (!v->is_table()) io::fail(key_path(key), "expected a table, got " + v->type_name());
  return v->table();
}

// ---- Document

struct Document::Impl {
  toml::table table;
};

Document::Document(std::string_view text, const std::string& origin_path) : impl_(new Impl) {
  const std::string origin = origin_path.empty() ? "<input>" : origin_path;
  auto syntax_error = [&](const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return InputError(printable(origin) + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                      ": TOML syntax error: " + printable(e.description()));
  };
#if TOML_EXCEPTIONS
  try {
    impl_->table = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw syntax_error(e);
  }
#else
  toml::parse_result result = toml::parse(text, origin);
  if (!result) throw syntax_error(result.error());
  impl_->table = std::move(result).table();
#endif
}

Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

InputTable Document::root() const { return InputTable(&impl_->table, ""); }

// ---- assignments over a text

std::string Assignment::path() const { return (index < 0 ? table : element_path(table, index)) + "." + key; }

namespace {

// `v = <value>` parsed, or nullopt when it is not valid TOML.
std::optional<toml::table> parse_value(std::string_view value) {
  const std::string text = "v = " + std::string(value) + "\n";
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text);
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
#else
  toml::parse_result r = toml::parse(text);
  if (!r) return std::nullopt;
  return std::move(r).table();
#endif
}

// The table an assignment goes to (created when a plain table is absent).
toml::table& assignment_table(toml::table& root, const Assignment& a) {
  toml::node* node = root.get(a.table);
  if (a.index < 0) {
    if (node == nullptr) node = root.insert_or_assign(a.table, toml::table{}).first->second.as_table();
    if (!node->is_table()) fail(a.table, "expected a table, got " + type_name_of(*node));
    return *node->as_table();
  }
  toml::array* array = node ? node->as_array() : nullptr;
  const std::size_t count = array ? array->size() : 0;
  if (array == nullptr || static_cast<std::size_t>(a.index) >= count || !(*array)[a.index].is_table())
    fail(element_path(a.table, a.index), "no such table (the input has " + std::to_string(count) + " [[" + a.table +
                                             "]] table" + (count == 1 ? "" : "s") + ")");
  return *(*array)[a.index].as_table();
}

}  // namespace

bool is_toml_value(std::string_view value) {
  const auto t = parse_value(value);
  return t && t->size() == 1;
}

std::string assign(std::string_view text, const std::string& origin, const std::vector<Assignment>& assignments) {
  Document doc(text, origin);
  toml::table& root = doc.impl_->table;
  for (const Assignment& a : assignments) {
    auto value = parse_value(a.value);
    if (!value || value->size() != 1) fail(a.path(), "not a TOML value: " + quoted(a.value));
    toml::table& target = assignment_table(root, a);
    value->get("v")->visit([&](auto& v) { target.insert_or_assign(a.key, v); });
  }
  std::ostringstream out;
  out << root << "\n";
  return out.str();
}

}  // namespace emprism::io
