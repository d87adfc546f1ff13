// logging.hpp: spdlog set-up. Rank 0 logs at the configured level to stdout (warnings and errors to
// stderr); other ranks log only warnings and errors. print_error() writes the one-line error report
// ("emprism-mpi: ERROR: <message>") used before or instead of the logger.
// Who may call: main (setup once per rank), anyone (print_error).
#pragma once

#include <string>

namespace emprism::io {

// level: trace|debug|info|warn|error. Throws InputError("log.level: ...") for an unknown level.
void setup_logging(const std::string& level, int rank);
void print_error(const std::string& message);

}  // namespace emprism::io
