// reference.cpp: jobs/examples/full_reference.toml rendered from the parameter declaration (reference_toml() of
// parameters.hpp): every table and key in declaration order, each key with its documentation, type, rule and default
// as comments (wrapped at 118 columns) and its example value, commented out where it does not fit the example's
// other choices; the [[solve]] keys of every type once in a preamble, then one example table per solve type.
#include <sstream>

#include "src/run/parameters_detail.hpp"

namespace emprism::run {

namespace {

constexpr std::size_t kWidth = 118;

const char* const kHeader =
    "full_reference.toml: every input key EmPRiSM-MPI accepts, each with its meaning, rule and default. It is "
    "written from the declaration of the keys (src/run/parameters*.cpp), and ctest fails when it differs from it "
    "(tests/test_config.cpp, Config.FullReferenceIsRenderedFromTheDeclaration): edit the declaration, not this file.\n"
    "Tables and keys may come in any order. A key not listed here is an error, as is a wrong type or an impossible "
    "value: the program stops with one line naming the key (exit code 2) before any work or output.\n"
    "Float keys accept integers (kappa = 1); integer keys do not accept floats (max_iter = 100.0 is an error).\n"
    "Directions are (x, y, z, t) = mu 0..3 everywhere.\n"
    "Keys shown commented out (# key = value) do not fit the choices of this example (another gauge.source, say); "
    "they are read like any other key when given.";

// Words of text in lines of at most kWidth characters: the first line starts with `first`, the others with `next`.
std::string wrap(const std::string& text, const std::string& first, const std::string& next) {
  std::string out, line = first;
  bool empty = true;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!empty && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = next;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return out + line + "\n";
}

// Every paragraph (newline-separated) of text wrapped as comment lines.
std::string comment(const std::string& text) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  while (std::getline(paragraphs, paragraph)) out += wrap(paragraph, "# ", "# ");
  return out;
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// "<doc> <Type>, <rule>. Default <def>." / "Required."
std::string describe(const Param& p) {
  std::string text = p.doc + " " + capitalised(p.type) + (p.rule.empty() ? "" : ", " + p.rule) + ".";
  if (p.required) {
    text += " Required.";
  } else if (!p.def_doc.empty()) {
    text += " Default: " + p.def_doc + ".";
  } else if (!p.def.empty()) {
    text += " Default " + p.def + ".";
  }
  return text;
}

// "key = example", commented out when inactive (every line of a multi-line example).
std::string assignment(const Param& p, bool active) {
  const std::string text = p.key + " = " + p.example;
  if (active) return text + "\n";
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) out += "# " + line + "\n";
  return out;
}

std::string render_table(const TableInfo& t) {
  std::string out = (t.example_active ? "[" : "# [") + t.name + "]\n";
  if (!t.doc.empty()) out += comment(t.doc);
  for (const Param& p : parameters()) {
    if (p.table != t.name) continue;
    out += comment(describe(p));
    out += assignment(p, t.example_active && p.example_active);
  }
  return out;
}

std::string render_solves(const TableInfo& t) {
  std::string out = comment(t.doc) + "# Keys of every type:\n";
  for (const Param& p : parameters()) {
    if (p.table != "solve" || p.kinds != 0) continue;
    std::string key = "#   " + p.key;
    key.resize(std::max<std::size_t>(key.size() + 1, 14), ' ');
    out += wrap(describe(p), key, "#" + std::string(13, ' '));
  }
  bool first = true;
  for (const KindInfo& kind : solve_kinds()) {
    out += "\n[[solve]]\nname = " + detail::str(kind.example_name) + "\ntype = " + detail::str(choice_name(kind.kind)) +
           "\n";
    for (const Param& p : parameters())  // the examples of the keys of every type, in the first table
      if (first && p.table == "solve" && p.kinds == 0 && !p.example.empty()) out += assignment(p, true);
    first = false;
    out += comment(kind.doc);
    for (const Param& p : parameters()) {
      if (p.table != "solve" || p.kinds == 0 || !for_kind(p, kind.kind)) continue;
      out += comment(describe(p));
      out += assignment(p, p.example_active);
    }
  }
  return out;
}

}  // namespace

std::string reference_toml() {
  std::string out = comment(kHeader);
  for (const TableInfo& t : tables()) out += "\n" + (t.name == "solve" ? render_solves(t) : render_table(t));
  return out;
}

}  // namespace emprism::run
