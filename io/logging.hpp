// logging.hpp: spdlog set-up. Rank 0 logs at the configured level to stdout (warnings and errors to
// stderr); other ranks log only warnings and errors. print_error() writes the one-line error report
// ("emprism-mpi: ERROR: <message>") used before or instead of the logger.
// Who may call: main (setup once per rank), anyone (print_error).
#pragma once

#include <string>

namespace emprism::io {

// level: trace|debug|info|warn|error; check_log_level throws InputError("unknown level '<level>' (use ...)") for
// another word. A non-empty per_rank_base makes every rank log everything also to "<per_rank_base>.rank<N>.log"
// (InputError("cannot open '<file>': <reason>") when it cannot). The caller names the key in front of these.
void check_log_level(const std::string& level);
void setup_logging(const std::string& level, int rank, const std::string& per_rank_base = std::string());
void print_error(const std::string& message);

}  // namespace emprism::io
