// ensemble.hpp: the configurations of an ensemble input (gauge.source = "ensemble", README: Ensembles), expanded
// from the keys of [gauge] into an ordered list of (id, file):
//   - files = "cfg/conf.*.lime": a glob (POSIX glob(3)), its matches sorted naturally (digit runs compare as numbers:
//     conf.9 before conf.10); files = ["a.lime", "b.lime"]: an explicit list, in the order given. Ids: when the name
//     (the last path component) of every file holds exactly one run of digits, that integer (decimal, no leading
//     zeros: "cfg_000010.ildg" has id "10"); otherwise the file's stem (its name without the last extension).
//   - pattern = "cfg/conf.%d.lime" (or "%06d": zero-padded to 6 digits) with first, last and step (default 1), as
//     openQCD's [Configurations] first last step: the files first, first + step, ... <= last; id = the integer.
// Ids must be unique, every file must be a readable regular file. Errors are InputError naming the key
// ("gauge.files: ...", "gauge.pattern: ...").
// Who may call: the input reader (src/run/parameters*.cpp) and tests; local, no MPI.
#pragma once

#include <string>
#include <vector>

#include "io/toml_reader.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

// Natural order: digit runs compare as numbers (then by length, so "007" after "7"), everything else bytewise.
bool natural_less(const std::string& a, const std::string& b);

// The paths matching a glob, sorted naturally (empty when none match).
std::vector<std::string> glob_files(const std::string& pattern);

// The id of each file (see above), in order.
std::vector<std::string> ensemble_ids(const std::vector<std::string>& files);

// The path of configuration n of a pattern with one placeholder %d or %0<w>d; "" when pattern is malformed, with
// the reason in *why (a pattern must hold exactly one placeholder; "%%" is a literal '%').
std::string pattern_path(const std::string& pattern, long long n, std::string* why = nullptr);

// After [gauge] is read: expands and checks the ensemble into g.members (nothing when the source is not
// "ensemble"). `table` names the keys in errors. Throws InputError.
void resolve_ensemble(GaugeConfig& g, const io::InputTable& table);

// The canonical text of the members for physics_inputs: ["<id>=<file>", ...].
std::string ensemble_text(const std::vector<EnsembleMember>& members);

}  // namespace emprism::run
