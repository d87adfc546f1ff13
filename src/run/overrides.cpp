// overrides.cpp: --set assignments over the input text (see overrides.hpp).
#include "src/run/overrides.hpp"

#include <cctype>

#include "kernels/errors.hpp"
#include "src/run/input.hpp"
#include "src/run/parameters.hpp"

namespace emprism::run {

namespace {

[[noreturn]] void fail_setting(const std::string& what, const std::string& reason) {
  throw InputError("--set " + io::printable(what) + ": " + reason);
}

const Param* find_param(const std::string& table, const std::string& key) {
  for (const Param& p : parameters())
    if (p.table == table && p.key == key) return &p;
  return nullptr;
}

// "table[i]" -> ("table", i); "table" -> ("table", -1).
void split_table(const std::string& arg, const std::string& head, io::Assignment& a) {
  const auto open = head.find('[');
  a.table = head.substr(0, open);
  if (open == std::string::npos) return;
  const std::string digits = head.substr(open + 1, head.size() - open - 2);
  if (head.back() != ']' || digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    fail_setting(arg, "expected table.key=value or solve[i].key=value");
  a.index = std::stol(digits);
}

std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return quoted + "\"";
}

// The value as TOML text, typed by the declaration: bare words of string keys quoted, "1,2,3,4" and "pion,rho"
// bracketed (and quoted) for vectors and lists of strings.
std::string typed_value(const Param& p, const std::string& value) {
  const bool bare_list = !value.empty() && value[0] != '[';
  if (p.type == "array of strings" && bare_list) {
    std::string out = "[";
    std::size_t start = 0;
    for (std::size_t comma = value.find(','); start <= value.size(); comma = value.find(',', start)) {
      const std::size_t end = comma == std::string::npos ? value.size() : comma;
      out += (start ? ", " : "") + toml_string(value.substr(start, end - start));
      start = end + 1;
    }
    return out + "]";
  }
  if (!p.type.empty() && std::isdigit(static_cast<unsigned char>(p.type[0])) && bare_list) return "[" + value + "]";
  const bool takes_string = p.type.find("string") != std::string::npos || p.type.find('"') != std::string::npos;
  if (takes_string && !io::is_toml_value(value)) return toml_string(value);
  return value;
}

}  // namespace

io::Assignment parse_setting(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string path = arg.substr(0, eq);
  const auto dot = path.rfind('.');
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == path.size())
    fail_setting(arg, "expected table.key=value (e.g. --set dirac.kappa=0.1365)");
  io::Assignment a;
  split_table(arg, path.substr(0, dot), a);
  a.key = path.substr(dot + 1);
  if ((a.index >= 0) != (a.table == "solve"))
    fail_setting(path, a.table == "solve" ? "a [[solve]] key is set as solve[i].key (i from 0)"
                                          : "only [[solve]] tables are indexed");
  const Param* p = find_param(a.table, a.key);
  if (p == nullptr) {
    io::KeyList known;
    std::vector<std::string> names;
    for (const Param& q : parameters()) names.push_back(q.table + "." + q.key);
    for (const std::string& n : names) known.push_back(n);
    const std::string plain = a.table + "." + a.key;
    fail_setting(path, "unknown key" + io::did_you_mean(plain, known));
  }
  a.value = typed_value(*p, arg.substr(eq + 1));
  if (!io::is_toml_value(a.value))
    fail_setting(path, "expected " + p->type + ", got " + io::quoted(arg.substr(eq + 1)));
  return a;
}

Config load_config(const std::string& path, const std::vector<std::string>& settings) {
  if (settings.empty()) return load_config(path);
  std::vector<io::Assignment> assignments;
  std::string header = "# " + path + " with";
  for (const std::string& s : settings) {
    assignments.push_back(parse_setting(s));
    header += " --set " + s;
  }
  const std::string file_text = io::read_input_file(path);
  std::string text;
  try {
    text = io::assign(file_text, path, assignments);
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.rfind(path + ":", 0) == 0) throw;  // a syntax error of the file itself
    throw InputError("--set " + what);
  }
  try {
    Config cfg = parse_config(text, path);
    cfg.input_text = io::printable(header) + " (the effective input, as read)\n" + text;
    return cfg;
  } catch (const InputError& e) {
    // An error on a key that was set names the option.
    const std::string what = e.what();
    for (const io::Assignment& a : assignments)
      if (what.rfind(a.path() + ":", 0) == 0 || what.rfind(a.path() + "[", 0) == 0) throw InputError("--set " + what);
    throw;
  }
}

}  // namespace emprism::run
