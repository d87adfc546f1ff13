// ensemble.cpp: the configurations of an ensemble input (see ensemble.hpp): natural sort, glob, ids, name
// patterns, and the checks of the expanded list.
#include "src/run/ensemble.hpp"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "kernels/errors.hpp"

namespace emprism::run {

namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The digit run of s starting at i, and where it ends.
std::string digits_at(const std::string& s, std::size_t& i) {
  const std::size_t start = i;
  while (i < s.size() && digit(s[i])) ++i;
  return s.substr(start, i - start);
}

// Compares two digit runs as numbers; equal values compare by length (fewer leading zeros first). <0, 0, >0.
int compare_numbers(const std::string& a, const std::string& b) {
  const std::size_t za = std::min(a.find_first_not_of('0'), a.size());
  const std::size_t zb = std::min(b.find_first_not_of('0'), b.size());
  const std::string va = a.substr(za), vb = b.substr(zb);
  if (va.size() != vb.size()) return va.size() < vb.size() ? -1 : 1;
  if (va != vb) return va < vb ? -1 : 1;
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return 0;
}

// The digit runs of a file's name (its last path component).
std::vector<std::string> name_numbers(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < name.size();) {
    if (digit(name[i])) {
      out.push_back(digits_at(name, i));
    } else {
      ++i;
    }
  }
  return out;
}

std::string without_leading_zeros(const std::string& d) {
  const std::size_t z = d.find_first_not_of('0');
  return z == std::string::npos ? "0" : d.substr(z);
}

// A readable regular file, or the reason it is not.
std::string unreadable(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return "'" + file + "' does not exist";
  if (std::filesystem::is_directory(file, ec)) return "'" + file + "' is a directory, not a gauge configuration file";
  if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
    std::fclose(f);
    return "";
  }
  return "cannot read '" + file + "': " + std::strerror(errno);
}

std::vector<EnsembleMember> from_pattern(const GaugeConfig& g, const io::InputTable& table) {
  const std::string key = table.key_path("pattern");
  std::string why;
  if (pattern_path(g.pattern, 0, &why).empty()) io::fail(key, why);
  if (!g.first || !g.last) io::fail(table.key_path(g.first ? "last" : "first"), "required with gauge.pattern");
  if (*g.last < *g.first)
    io::fail(table.key_path("last"),
             std::to_string(*g.last) + " is smaller than gauge.first = " + std::to_string(*g.first));
  const long long step = g.step.value_or(1);
  std::vector<EnsembleMember> out;
  for (long long n = *g.first; n <= *g.last; n += step) out.push_back({std::to_string(n), pattern_path(g.pattern, n)});
  return out;
}

std::vector<EnsembleMember> from_files(const GaugeConfig& g, const io::InputTable& table) {
  const std::string key = table.key_path("files");
  for (const char* k : {"first", "last", "step"})
    if (table.get(k)) io::fail(table.key_path(k), "only with gauge.pattern (gauge.files lists the files itself)");
  std::vector<std::string> files = g.files;
  if (g.files_glob) {
    files = glob_files(g.files.front());
    if (files.empty()) io::fail(key, "'" + g.files.front() + "' matches no file");
  }
  if (files.empty()) io::fail(key, "lists no file");
  const std::vector<std::string> ids = ensemble_ids(files);
  std::vector<EnsembleMember> out;
  for (std::size_t i = 0; i < files.size(); ++i) out.push_back({ids[i], files[i]});
  return out;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      const int c = compare_numbers(digits_at(a, i), digits_at(b, j));
      if (c != 0) return c < 0;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> glob_files(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t k = 0; k < g.gl_pathc; ++k) out.emplace_back(g.gl_pathv[k]);
  ::globfree(&g);
  std::sort(out.begin(), out.end(), natural_less);
  return out;
}

std::vector<std::string> ensemble_ids(const std::vector<std::string>& files) {
  bool numbered = true;
  for (const std::string& f : files) numbered = numbered && name_numbers(f).size() == 1;
  std::vector<std::string> ids;
  for (const std::string& f : files)
    ids.push_back(numbered ? without_leading_zeros(name_numbers(f).front())
                           : std::filesystem::path(f).filename().stem().string());
  return ids;
}

std::string pattern_path(const std::string& pattern, long long n, std::string* why) {
  std::string out;
  int placeholders = 0;
  auto bad = [&](const std::string& reason) {
    if (why) *why = "'" + pattern + "' " + reason;
    return std::string();
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%', ++i;
      continue;
    }
    std::size_t k = i + 1;
    std::string width;
    if (k < pattern.size() && pattern[k] == '0') width = digits_at(pattern, k);
    if (k >= pattern.size() || pattern[k] != 'd' || width.size() == 1 || width.size() > 3)
      return bad("has a '%' that is not %d, %0<width>d or %%");
    if (width.empty()) {
      out += std::to_string(n);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%0*lld", std::stoi(width), n);
      out += buf;
    }
    ++placeholders, i = k;
  }
  if (placeholders != 1) return bad("must hold exactly one %d or %0<width>d (the configuration number)");
  return out;
}

void resolve_ensemble(GaugeConfig& g, const io::InputTable& table) {
  if (g.source != GaugeSource::Ensemble) return;
  const bool files = table.get("files").has_value(), pattern = table.get("pattern").has_value();
  if (files == pattern)
    io::fail(table.key_path(files ? "pattern" : "files"),
             files ? "give gauge.files or gauge.pattern, not both"
                   : "required for gauge.source = \"ensemble\" (or gauge.pattern with first, last, step)");
  g.members = files ? from_files(g, table) : from_pattern(g, table);
  const std::string key = table.key_path(files ? "files" : "pattern");
  std::set<std::string> seen;
  for (const EnsembleMember& m : g.members) {
    if (!seen.insert(m.id).second)
      io::fail(key, "two configurations have the id '" + m.id + "' (the second is '" + m.file +
                        "'); ids come from the numbers in the file names (README: Ensembles)");
    const std::string why = unreadable(m.file);
    if (!why.empty()) io::fail(key, why);
  }
}

std::string ensemble_text(const std::vector<EnsembleMember>& members) {
  std::string out = "[";
  for (std::size_t i = 0; i < members.size(); ++i)
    out += (i ? ", \"" : "\"") + io::printable(members[i].id + "=" + members[i].file) + "\"";
  return out + "]";
}

}  // namespace emprism::run
