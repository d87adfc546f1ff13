// toml_config.hpp: the TOML input reader. Turns the input file into a checked emprism::Config.
//   parse_config  parse TOML text and validate every key (docs/conventions.md section 12)
//   load_config   read a file, then parse_config
// Every failure throws one emprism::InputError whose what() is one line starting with the full key path
// ("solve[1].spin: expected an integer, got string") or, for syntax errors, "<file>:<line>:<col>: TOML syntax error:
// ...". The first error found is reported: top-level unknown keys, then [lattice], [comm], [gauge], [dirac], [solver],
// [output], [log], [metrics], [[solve]] in that order; inside a table unknown keys come before values. Convention:
// extents, sites and momenta are (x, y, z, t) = mu 0..3 (docs/conventions.md section 1). Who may call: main (once,
// before any work) and tests; no MPI, no logging.
#pragma once

#include <string>
#include <string_view>

#include "src/config.hpp"

namespace emprism::io {

// Parses and validates toml_text. origin_path names the text in syntax errors and is stored in Config::input_path;
// Config::input_text receives toml_text unchanged. Throws InputError.
Config parse_config(std::string_view toml_text, const std::string& origin_path);

// Reads the file at path and parses it. A missing or unreadable file throws
// InputError("<path>: cannot read input file: <reason>").
Config load_config(const std::string& path);

// The inputs that decide the content of the output file, as canonical text: one "key = value" line each, in a fixed
// order, with defaults filled in and numbers in shortest round-trip form, so that formatting, comments and key order
// of the TOML file do not matter. Left out: what does not change the physics or the stored data (lattice.procs,
// [comm], [log], [metrics], output.file, output.overwrite, output.io, output.resume). A resumed run must have
// exactly the same text as the run that wrote the partial file (io/h5_output.hpp). Pure function.
std::string physics_inputs(const Config& config);

// 64-bit FNV-1a hash of text as 16 lowercase hex digits (the file's input_hash attribute).
std::string text_hash(const std::string& text);

}  // namespace emprism::io
