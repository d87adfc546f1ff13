// input.hpp: the run's input: the TOML file read into a checked Config by walking the parameter declaration
// (src/run/parameters.hpp), and the canonical text of its physics inputs.
// Every failure throws one emprism::InputError whose what() is one line starting with the full key path
// ("solve[1].spin: expected an integer, got string") or, for syntax errors, "<file>:<line>:<col>: TOML syntax
// error: ...". The first error found is reported: top-level unknown keys, then the tables in declaration order
// ([lattice], [comm], [gauge], [generate], [dirac], [solver], [output], [log], [metrics], [[solve]]); inside a table:
// unknown keys, then the keys others depend on (gauge.source, a solve's type and smearing), then keys given where
// they do not apply, then the values in declaration order.
// Who may call: the driver (once, before any work) and tests; no MPI, no logging.
#pragma once

#include <string>
#include <string_view>

#include "src/run/config.hpp"

namespace emprism::run {

// Parses and validates toml_text. origin_path names the text in syntax errors and is stored in Config::input_path;
// Config::input_text receives toml_text unchanged. Throws InputError.
Config parse_config(std::string_view toml_text, const std::string& origin_path);

// The checks that involve several keys, run by parse_config after every key is read (src/run/input_limits.cpp):
// values that would overflow in the chosen precision (dirac.kappa, dirac.csw, dirac.theta_over_pi, a plane wave's
// spinor, a propagator's smearing_weight). Throws InputError naming the key.
void check_input_limits(const Config& config);

// Reads the file at path and parses it. A missing or unreadable file throws
// InputError("<path>: cannot read input file: <reason>").
Config load_config(const std::string& path);

// The inputs that decide the content of the output file, as canonical text: one "key = value" line each, in the
// declaration's order, with defaults filled in and numbers in shortest round-trip form, so that formatting, comments
// and key order of the TOML file do not matter. Only the keys declared as physics (where they apply) appear; left
// out are those that do not change the physics or the stored data (lattice.procs, [comm], [log], [metrics],
// output.file, output.overwrite, output.io, output.resume). A resumed run must have exactly the same text as the run
// that wrote the partial file (src/run/checkpoint.hpp). Pure function.
std::string physics_inputs(const Config& config);

// 64-bit FNV-1a hash of text as 16 lowercase hex digits (the file's input_hash attribute).
std::string text_hash(const std::string& text);

}  // namespace emprism::run
