// input.cpp: the reader of the run's input (see input.hpp): defaults, tables and [[solve]] tables read by walking the
// parameter declaration; physics_inputs; the FNV-1a hash.
#include "src/run/input.hpp"

#include <algorithm>
#include <cstdio>

#include "io/toml_reader.hpp"
#include "src/run/parameters.hpp"

namespace emprism::run {

namespace {

std::vector<const Param*> table_params(const std::string& table) {
  std::vector<const Param*> out;
  for (const Param& p : parameters())
    if (p.table == table) out.push_back(&p);
  return out;
}

bool applies(const Param& p, const View& view) { return p.applies == nullptr || p.applies(view); }

// The declared default of p, read like a value of the input.
void apply_default(const Param& p, Target& target) {
  if (p.def.empty() || p.read == nullptr) return;
  const io::Document doc(p.key + " = " + p.def, "the default of " + p.table + "." + p.key);
  p.read(doc.root().require(p.key), target);
}

// The keys of one table: those others depend on, then keys given where they do not apply, then the values.
void read_keys(const io::InputTable& table, const std::vector<const Param*>& params, Target& target) {
  const View view{target.cfg, target.solve};
  for (const Param* p : params) {
    if (!p->selector) continue;
    if (const auto v = table.get(p->key)) p->read(*v, target);
  }
  for (const Param* p : params)
    if (table.get(p->key) && !applies(*p, view)) io::fail(table.key_path(p->key), p->only);
  for (const Param* p : params) {
    if (p->selector || !applies(*p, view)) continue;
    if (const auto v = table.get(p->key)) {
      p->read(*v, target);
    } else if (p->required) {
      io::fail(table.key_path(p->key), "required key is missing");
    }
  }
}

void read_table(const io::InputTable& root, const TableInfo& info, Config& cfg) {
  const io::InputTable table = root.section(info.name);
  if (info.optional_block && !table.present()) return;
  const std::vector<const Param*> params = table_params(info.name);
  io::KeyList keys;
  for (const Param* p : params) keys.push_back(p->key);
  table.reject_unknown(keys);
  Target target{cfg, nullptr};
  if (info.begin) info.begin(table, target);
  read_keys(table, params, target);
  if (info.end) info.end(table, target);
}

// A key of another solve type says which type it belongs to.
void reject_unknown_solve_keys(const io::InputTable& table, SolveKind kind) {
  const io::KeyList allowed = solve_keys(kind);
  const auto key = table.first_key_not_in(allowed);
  if (!key) return;
  for (const KindInfo& other : solve_kinds())
    for (const Param& p : parameters())
      if (p.table == "solve" && p.kinds != 0 && p.key == *key && for_kind(p, other.kind))
        io::fail(table.key_path(*key), "not allowed for type '" + choice_name(kind) + "' (it belongs to type '" +
                                           choice_name(other.kind) + "')");
  io::fail(table.key_path(*key), "unknown key" + io::did_you_mean(*key, allowed));
}

// name: given (valid, unique) or "solve<i>"; names[j] = solve j's name and whether it was its default.
void read_solve_name(const io::InputTable& table, std::size_t i, std::vector<std::pair<std::string, bool>>& names,
                     const Param& name_param, Target& target) {
  SolveConfig& s = *target.solve;
  const auto given = table.get("name");
  if (given) {
    name_param.read(*given, target);
  } else {
    s.name = "solve" + std::to_string(i);
  }
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (names[j].first != s.name) continue;
    const std::string user = io::element_path("solve", j);
    if (given)
      io::fail(table.key_path("name"),
               io::quoted(s.name) + " is used by " + user + (names[j].second ? " (its default name)" : ""));
    io::fail(table.key_path("name"), "default name " + io::quoted(s.name) + " is used by " + user + "; give " +
                                         io::element_path("solve", i) + " a name");
  }
  names.emplace_back(s.name, !given);
}

SolveConfig read_solve(const io::InputValue& entry, std::size_t i, std::vector<std::pair<std::string, bool>>& names,
                       Config& cfg) {
  if (!entry.is_table()) entry.fail("expected a table, got " + entry.type_name());
  const io::InputTable table = entry.table();
  SolveConfig s;
  Target target{cfg, &s};
  const Param* name_param = nullptr;
  std::vector<const Param*> params;
  for (const Param* p : table_params("solve")) {
    if (p->key == "type") p->read(table.require("type"), target);
  }
  reject_unknown_solve_keys(table, s.kind);
  for (const Param* p : table_params("solve")) {
    if (!for_kind(*p, s.kind)) continue;
    apply_default(*p, target);
    if (p->key == "name") {
      name_param = p;
    } else if (p->key != "type") {
      params.push_back(p);
    }
  }
  read_solve_name(table, i, names, *name_param, target);
  read_keys(table, params, target);
  return s;
}

void read_solves(const io::InputTable& root, Config& cfg) {
  const auto node = root.get("solve");
  if (!node && cfg.generate.enabled) return;
  if (!node) io::fail("solve", "required key is missing (add at least one [[solve]] table)");
  if (!node->is_array()) io::fail("solve", "expected an array of tables ([[solve]]), got " + node->type_name());
  const std::vector<io::InputValue> entries = node->array_of("tables");
  if (entries.empty()) io::fail("solve", "at least one [[solve]] table is required");
  std::vector<std::pair<std::string, bool>> names;
  for (std::size_t i = 0; i < entries.size(); ++i) cfg.solves.push_back(read_solve(entries[i], i, names, cfg));
}

}  // namespace

Config parse_config(std::string_view toml_text, const std::string& origin_path) {
  const io::Document doc(toml_text, origin_path);
  Config cfg;
  cfg.input_text = std::string(toml_text);
  cfg.input_path = origin_path;
  Target target{cfg, nullptr};
  for (const Param& p : parameters())
    if (p.table != "solve") apply_default(p, target);
  const io::InputTable root = doc.root();
  io::KeyList names;
  for (const TableInfo& t : tables()) names.push_back(t.name);
  root.reject_unknown(names);
  for (const TableInfo& t : tables()) {
    if (t.name == "solve") {
      read_solves(root, cfg);
    } else {
      read_table(root, t, cfg);
    }
  }
  check_input_limits(cfg);
  return cfg;
}

Config load_config(const std::string& path) { return parse_config(io::read_input_file(path), path); }

std::string physics_inputs(const Config& c) {
  std::string out;
  const View top{c, nullptr};
  for (const Param& p : parameters())
    if (p.table != "solve" && p.physics && p.physics(top)) out += p.table + "." + p.key + " = " + p.show(top) + "\n";
  for (std::size_t i = 0; i < c.solves.size(); ++i) {
    const View view{c, &c.solves[i]};
    for (const Param& p : parameters()) {
      if (p.table != "solve" || !for_kind(p, c.solves[i].kind) || !p.physics || !p.physics(view)) continue;
      out += io::element_path("solve", i) + "." + p.key + " = " + p.show(view) + "\n";
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

}  // namespace emprism::run
