// parameters_detail.hpp: INTERNAL header of the parameter declaration (src/run/parameters*.cpp): the choice lists
// (each choice's word stated once), the typed reads with the rules the declarations share, and the canonical text of
// values (physics_inputs: shortest round-trip numbers, quoted strings, [a, b] arrays).
// Who may call: src/run/parameters*.cpp only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/toml_reader.hpp"
#include "src/run/parameters.hpp"

namespace emprism::run::detail {

// The words of one choice key and the values they stand for, in the order the documentation lists them.
template <typename E>
struct ChoiceList {
  std::vector<std::pair<std::string, E>> items;
  io::KeyList names() const {
    io::KeyList out;
    for (const auto& item : items) out.push_back(item.first);
    return out;
  }
  E read(const io::InputValue& v) const {
    const std::string word = v.choice(names());
    for (const auto& item : items)
      if (item.first == word) return item.second;
    return items.front().second;  // not reached: choice() throws for other words
  }
  std::string name(E value) const {
    for (const auto& item : items)
      if (item.second == value) return item.first;
    return "unknown";
  }
  // "\"a\", \"b\" or \"c\"" for the documentation.
  std::string listed() const {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
      out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + ("\"" + items[i].first + "\"");
    return out;
  }
};

const ChoiceList<Precision>& precisions();
const ChoiceList<Sloppy>& sloppies();
const ChoiceList<Stop>& stops();
const ChoiceList<GaugeSource>& gauge_sources();
const ChoiceList<SolveKind>& solve_kind_list();
const ChoiceList<NoiseKind>& noise_kinds();
const ChoiceList<QuarkSmearingKind>& quark_smearings();
const ChoiceList<LinkSmearingKind>& link_smearings();
const ChoiceList<GaugeFormat>& gauge_formats();     // gauge.format: every format io/gauge reads, and auto
const ChoiceList<GaugeFormat>& generate_formats();  // generate.format: the formats io/gauge writes
const ChoiceList<OutputIo>& output_ios();
const ChoiceList<CommConfig::Transport>& transports();
const ChoiceList<std::string>& log_levels();

// ---- typed reads shared by the declarations (InputError naming the key on a broken rule)
constexpr std::int64_t kIntMax = 2147483647;
std::uint64_t read_seed(const io::InputValue& v);  // integer >= 0
double read_positive(const io::InputValue& v);     // float > 0
double read_tol(const io::InputValue& v);          // float in (0, 1)
std::array<int, 4> read_int4(const io::InputValue& v, std::int64_t lo, std::int64_t hi);
std::array<double, 4> read_float4(const io::InputValue& v);
std::array<bool, 4> read_bool4(const io::InputValue& v);
std::string read_nonempty(const io::InputValue& v);

// ---- canonical text of values
std::string str(double v);
std::string str(int v);
std::string str(std::uint64_t v);
std::string str(bool v);
std::string str(const std::string& v);  // "quoted", control characters escaped
template <typename T, std::size_t N>
std::string str(const std::array<T, N>& a) {
  std::string out = "[";
  for (std::size_t i = 0; i < N; ++i) out += (i ? ", " : "") + str(a[i]);
  return out + "]";
}

// The declarations of the tables' keys (parameters_run.cpp) and of the [[solve]] keys (parameters_solve.cpp).
void declare_run_keys(std::vector<Param>& out);
void declare_solve_keys(std::vector<Param>& out);

}  // namespace emprism::run::detail
