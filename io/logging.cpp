// logging.cpp: spdlog set-up with a level-routing sink (see logging.hpp).
#include "io/logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/errors.hpp"

namespace emprism::io {

namespace {

// info and below to stdout, warn and above to stderr; flushed per line so Slurm logs stay current.
class RoutingSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    std::FILE* out = msg.level >= spdlog::level::warn ? stderr : stdout;
    std::fwrite(buf.data(), 1, buf.size(), out);
    std::fflush(out);
  }
  void flush_() override {
    std::fflush(stdout);
    std::fflush(stderr);
  }
};

}  // namespace

void check_log_level(const std::string& level) {
  const spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw InputError("unknown level '" + level + "' (use trace, debug, info, warn or error)");
}

void setup_logging(const std::string& level, int rank, const std::string& per_rank_base) {
  check_log_level(level);
  const spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  auto console = std::make_shared<RoutingSink>();
  console->set_level(rank == 0 ? lvl : std::max(lvl, spdlog::level::warn));
  std::vector<spdlog::sink_ptr> sinks{console};
  if (!per_rank_base.empty()) {
    const std::string path = per_rank_base + ".rank" + std::to_string(rank) + ".log";
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true));
    } catch (const spdlog::spdlog_ex& e) {
      throw InputError("cannot open '" + path + "': " + e.what());
    }
    sinks.back()->set_level(lvl);
  }
  auto logger = std::make_shared<spdlog::logger>("emprism", sinks.begin(), sinks.end());
  logger->set_pattern(rank == 0 ? "[%Y-%m-%d %H:%M:%S.%e] [%l] %v"
                                : "[%Y-%m-%d %H:%M:%S.%e] [%l] [rank " + std::to_string(rank) + "] %v");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void print_error(const std::string& message) {
  // One line whatever the message holds (HDF5's and the system's texts may end in or embed newlines).
  std::string line;
  for (const char c : message) {
    if (c != '\n' && c != '\r') {
      line += c;
    } else if (!line.empty() && line.back() != ' ') {
      line += ' ';
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::fprintf(stderr, "emprism-mpi: ERROR: %s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace emprism::io
