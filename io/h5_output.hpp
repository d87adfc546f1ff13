// h5_output.hpp: the run's HDF5 output file (DESIGN.md section 5), written with the HDF5 C API.
// Complex numbers are the h5py compound {r, i}; fields are in global natural order
// [Lt][Lz][Ly][Lx][4][3] (spinors) and [Lt][Lz][Ly][Lx][4][3][3] (links), x fastest.
// The file is written under a temporary name beside the target and renamed by commit();
// destroying an uncommitted OutputFile removes the temporary file, so a failed run leaves nothing.
// Who may call: rank 0 only (serial HDF5).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/metrics.hpp"

namespace emprism::io {

// Attributes of the root group "/".
struct RootInfo {
  std::string program_version;
  std::string git_hash;
  std::string date;  // ISO 8601, UTC
  std::string backend;
  std::string device;
  int ranks = 1;
  std::array<int, 4> process_grid{1, 1, 1, 1};
  std::array<int, 4> extents{};  // global (Lx, Ly, Lz, Lt)
  std::string precision;         // "single" | "double"
};

struct GaugeInfo {
  std::string source;  // "unit" | "random" ...
  double plaquette = 0;
  double link_trace = 0;  // average Re tr U / 3
  // Optional links in natural order [Lt][Lz][Ly][Lx][mu][row][col]; empty = not written.
  std::vector<std::complex<double>> links;
};

struct SolveRecord {
  std::string name;
  std::string source_kind;  // "point" | "random" | "plane_wave"
  bool single_precision = true;  // store fields as float32 compounds, else float64
  std::vector<std::complex<double>> solution;  // V*12, natural order, index ((site*4)+spin)*3+colour
  std::vector<std::complex<double>> source;    // same shape
  std::vector<double> residual_history;        // relative residual per CG iteration
  int iterations = 0;
  double true_residual = 0;
  bool converged = false;
  double seconds = 0;
  double kappa = 0, csw = 0, tol = 0;
  int restarts = 0;
};

struct RankTimes {
  int rank = 0;
  double compute_s = 0, halo_wait_s = 0, reduction_s = 0;
};

class OutputFile {
 public:
  // Opens "<dir>/.<name>.tmp-<pid>" for writing. Throws emprism::InputError naming `final_path`
  // when it exists and !overwrite, or its directory is not writable.
  OutputFile(const std::string& final_path, bool overwrite);
  ~OutputFile();  // not committed: closes and deletes the temporary file
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write_root(const RootInfo& info);
  void write_input(const std::string& toml_text);  // dataset /input, a scalar variable-length string
  void write_gauge(const GaugeInfo& gauge, const std::array<int, 4>& extents);
  void write_solve(const SolveRecord& rec, const std::array<int, 4>& extents);
  void write_metrics(const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                     const std::vector<RankTimes>& ranks);
  void flush();
  // Closes the file and renames it to final_path (atomic on one file system).
  void commit();

  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string final_path_, temp_path_;
  std::int64_t file_ = -1;  // hid_t
  bool committed_ = false;
  bool overwrite_ = false;  // re-checked by commit(): a target that appeared meanwhile is not replaced
};

// Checks before any work that final_path may be written: throws InputError("output.file: ...").
void check_output_path(const std::string& final_path, bool overwrite);

}  // namespace emprism::io
