// parameters.hpp: every key of the input, declared once: its table, name, type, default, rule, one-line
// documentation, when it may be given, whether it is part of the physics inputs, which /solves attribute it becomes,
// and how it is read into the configuration and written back as canonical text. Everything else derives from this
// declaration (src/run/parameters.cpp):
//   - the reader (src/run/input.hpp): known and unknown keys, types, ranges, defaults, required keys, key order;
//   - physics_inputs(): the canonical text a resumed run must match;
//   - the input attributes of each /solves/<name> group (solve_attributes());
//   - the names of the input's choices (choice_name(): logs and attributes use the input's words);
//   - jobs/examples/full_reference.toml (reference_toml(); tests/test_config.cpp fails when the file differs).
// Who may call: anyone in the run layer; pure (no MPI, no I/O).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/toml_reader.hpp"
#include "src/run/config.hpp"
#include "src/run/schema.hpp"

namespace emprism::run {

// Where a key's value goes while reading, and where it is read from afterwards.
struct Target {
  Config& cfg;
  SolveConfig* solve;  // the [[solve]] table being read (null for the other tables)
};
struct View {
  const Config& cfg;
  const SolveConfig* solve;
};

// A set of solve kinds (bit 1 << kind); 0 = every kind.
using KindSet = unsigned;
constexpr KindSet kind_bit(SolveKind k) { return 1u << static_cast<unsigned>(k); }

struct Param {
  std::string table;  // "lattice", "comm", "gauge", "generate", "dirac", "solver", "output", "log", "metrics", "solve"
  std::string key;
  KindSet kinds = 0;                       // [[solve]] keys: the solve types the key belongs to (0: every type)
  std::string type;                        // what the value is ("float", "4 integers", ...), for the reference
  std::string def;                         // the default as a TOML value, applied through read(); "" = none
  std::string def_doc;                     // the default in words where it is not a plain value ("" = def)
  bool required = false;                   // must be given where it applies
  std::string rule;                        // the rule of the value, for the reference ("> 0", "in [0, 1]")
  std::string doc;                         // what the key means, one line (the reference wraps it)
  std::string example;                     // the value full_reference.toml shows
  bool example_active = true;              // false: shown commented out (it does not fit the example's other keys)
  bool selector = false;                   // read before the others (their applicability depends on it)
  bool (*applies)(const View&) = nullptr;  // where it may be given (null: always)
  std::string only;                        // the error when given where it does not apply
  bool (*physics)(const View&) = nullptr;  // where it is part of physics_inputs (null: never)
  std::string attribute;                   // the /solves/<name> attribute it becomes ("" = none)
  KindSet attribute_kinds = 0;             // the solve types that have the attribute (0: every type)
  void (*read)(const io::InputValue&, Target&) = nullptr;
  std::string (*show)(const View&) = nullptr;             // the canonical value text (physics_inputs)
  InputAttribute::Value (*value)(const View&) = nullptr;  // the attribute value
};

// A table of the input, for the reader and the reference.
struct TableInfo {
  std::string name;
  std::string doc;              // for the reference (may be empty)
  bool optional_block = false;  // [generate]: only read when present, which switches it on
  bool example_active = true;   // false: the whole table is shown commented out in the reference
  void (*begin)(const io::InputTable&, Target&) = nullptr;  // after the unknown-key check, before the keys
  void (*end)(const io::InputTable&, Target&) = nullptr;    // after the keys (checks that involve several)
};

// A solve type, for the reference: its name in the example, and what it does.
struct KindInfo {
  SolveKind kind;
  std::string example_name;
  std::string doc;
};

// The declaration, in the order the tables and keys are read, printed in physics_inputs and documented.
const std::vector<Param>& parameters();
const std::vector<TableInfo>& tables();
const std::vector<KindInfo>& solve_kinds();

// The input's words for its choices (as written in the TOML file, the logs and the output's attributes).
std::string choice_name(Precision v);
std::string choice_name(Sloppy v);
std::string choice_name(Stop v);
std::string choice_name(GaugeSource v);
std::string choice_name(SolveKind v);
std::string choice_name(NoiseKind v);
std::string choice_name(QuarkSmearingKind v);
std::string choice_name(LinkSmearingKind v);
std::string choice_name(GaugeFormat v);
std::string choice_name(OutputIo v);

// The keys of a table a [[solve]] of this kind may hold (common keys first), in declaration order.
io::KeyList solve_keys(SolveKind kind);
// Whether a parameter belongs to a solve of this kind.
bool for_kind(const Param& p, SolveKind kind);

// The /solves/<name> attributes of the input (kappa, csw, tol, and for a propagator its source and smearing).
std::vector<InputAttribute> solve_attributes(const Config& cfg, const SolveConfig& solve);

// The documented reference input (jobs/examples/full_reference.toml) rendered from the declaration.
std::string reference_toml();

}  // namespace emprism::run
