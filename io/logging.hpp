// logging.hpp: spdlog set-up. Rank 0 logs at the configured level to stdout (warnings and errors to
// stderr); other ranks log only warnings and errors. print_error() writes the one-line error report
// ("emprism-mpi: ERROR: <message>") used before or instead of the logger.
// Who may call: main (setup once per rank), anyone (print_error).
#pragma once

#include <string>

namespace emprism::io {

// level: trace|debug|info|warn|error. Throws InputError("log.level: ...") for an unknown level. A non-empty
// per_rank_base makes every rank log everything also to "<per_rank_base>.rank<N>.log" (log.per_rank).
void setup_logging(const std::string& level, int rank, const std::string& per_rank_base = std::string());
void print_error(const std::string& message);

}  // namespace emprism::io
