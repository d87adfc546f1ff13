// progress.cpp: the words of the progress lines (see progress.hpp).
#include "src/run/progress.hpp"

#include <spdlog/fmt/fmt.h>

#include <cmath>

namespace emprism::run {

std::string duration_text(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "unknown";
  if (s < 60) return fmt::format("{:.2f} s", s);
  const long total = std::lround(s);
  if (total < 3600) return fmt::format("{} min {:02d} s", total / 60, static_cast<int>(total % 60));
  return fmt::format("{} h {:02d} min", total / 3600, static_cast<int>(total % 3600 / 60));
}

std::string eta_text(double elapsed, double done, double total) {
  if (!(done > 0)) return "ETA unknown";
  return "ETA " + duration_text(elapsed / done * (total - done));
}

std::string cg_progress_text(int iterations, double residual, double seconds, double tol) {
  const double rate = seconds > 0 ? iterations / seconds : 0;
  std::string out = fmt::format("({:.1f} it/s, ", rate);
  const double fall_per_iteration = iterations > 0 && residual > 0 ? -std::log(residual) / iterations : 0;
  if (!(fall_per_iteration > 0) || !(rate > 0)) return out + "ETA unknown)";
  const double left = residual > tol ? std::log(residual / tol) / fall_per_iteration : 0;
  return out + fmt::format("ETA {} to tol {:.1e})", duration_text(left / rate), tol);
}

}  // namespace emprism::run
