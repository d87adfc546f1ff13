// overrides.hpp: `--set table.key=value` on the command line (job scripts scanning kappa, say): each assignment is
// made over the input file's text before it is read, so the key is checked exactly as if it were in the file (its
// type and rule from the parameter declaration, src/run/parameters.hpp), and the file's /input, physics_inputs and a
// resume see the effective input. [[solve]] keys are set as solve[i].key (i from 0, in the file's order).
// Value text: as TOML ("0.1365", "[1, 1, 2, 2]", "true", "\"x\""); a key the declaration types as a string also
// takes the bare word (gauge.source=heatbath), a 4-vector also takes "1,1,2,2" without brackets.
// Errors are InputError, one line starting "--set <path>: " (unknown key, bad value, no such [[solve]]).
// Who may call: the driver and tests (no MPI, no logging).
#pragma once

#include <string>
#include <vector>

#include "io/toml_reader.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

// "table.key=value" or "solve[i].key=value" checked against the declaration (the key exists in that table).
io::Assignment parse_setting(const std::string& arg);

// The input file read with the settings made over it. Config::input_text is the file's text when there are none,
// else the effective input as TOML text headed by a comment naming the file and the settings.
Config load_config(const std::string& path, const std::vector<std::string>& settings);

}  // namespace emprism::run
