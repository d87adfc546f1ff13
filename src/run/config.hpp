// config.hpp: the checked run configuration: plain storage for the values of the input, one struct per TOML table.
// What each key means, its type, default, rule and documentation are declared once, in src/run/parameters.cpp; the
// reader (src/run/input.hpp) fills these structs from that declaration only, so they carry no defaults of their own
// (value-initialised). Every field here has been validated before any work starts.
// Convention: extents, coordinates and momenta are (x, y, z, t) = mu 0..3 (docs/conventions.md section 1).
// Who may call: anyone in the run layer; no MPI, no I/O.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "io/h5/file.hpp"
#include "src/physics/smearing.hpp"
#include "src/physics/sources.hpp"

namespace emprism {

enum class Precision { Single, Double, Mixed };  // mixed: double outer residual, single CG
// mixed: the sloppy CG's fields in fp32, in 16-bit fixed point, or in fp32 with fp64 arithmetic (kernels/half.hpp)
enum class Sloppy { Single, Half, SingleFp64 };
enum class Stop { Full, Normal };  // solver.stop: the residual that must meet tol (src/physics/cg.hpp)
enum class GaugeSource { Unit, Random, File, Heatbath, Ensemble };
enum class SolveKind { Point, Random, PlaneWave, Propagator };
using io::GaugeFormat;             // gauge.format, generate.format
using OutputIo = io::h5::FieldIo;  // output.io

struct LatticeConfig {
  std::array<int, 4> extents{};             // global (Lx, Ly, Lz, Lt)
  std::optional<std::array<int, 4>> procs;  // absent: chosen by comm/process_grid.cpp
};

struct CommConfig {
  std::array<bool, 4> force_halo{};
  // How faces travel (comm/halo_policy.hpp): auto (tuned per operator), staged, gpu_aware, peer.
  enum class Transport { Auto, Staged, GpuAware, Peer };
  Transport transport{};
  // The older key comm.gpu_aware: true = transport "gpu_aware", "auto" = "auto", false = "auto" without handing
  // device memory to MPI. transport_key names the key that was given (for the halo policy's errors).
  bool gpu_aware_in_auto{};
  std::string transport_key;
};

// One configuration of an ensemble (gauge.source = "ensemble"): its id (the group /configs/<id>) and its file.
struct EnsembleMember {
  std::string id;
  std::string file;
};

struct GaugeConfig {
  GaugeSource source{};
  double width{};
  std::uint64_t seed{};
  std::string file;
  GaugeFormat format{};
  double beta{};
  int sweeps{};
  int or_per_sweep{};
  // Ensemble (src/run/ensemble.hpp): files (a glob, or an explicit list) or pattern with first/last/step, as given;
  // members is the expanded, checked list in order.
  std::vector<std::string> files;
  bool files_glob{};  // files was one string (a glob)
  std::string pattern;
  std::optional<int> first, last, step;
  std::vector<EnsembleMember> members;
};

// [generate]: an ensemble of heatbath configurations written as <prefix>_<sweep>.<ildg|nersc>.
struct GenerateConfig {
  bool enabled{};  // the table is present
  int count{};
  int every{};
  GaugeFormat format{};
  std::string prefix;
};

struct DiracConfig {
  double kappa{};
  double csw{};
  std::array<double, 4> theta_over_pi{};
  int reconstruct{18};  // reals per stored link: 18, 12 or 8
};

struct SolverConfig {
  Precision precision{};
  Sloppy sloppy{};  // only with precision = mixed (input_limits.cpp)
  double tol{};
  int max_iter{};
  double reliable_delta{};
  Stop stop{};
};

struct SolveConfig {
  std::string name;
  SolveKind kind{};
  std::array<int, 4> site{};  // point and propagator
  int spin{}, colour{};       // point
  std::uint64_t seed{};       // random
  NoiseKind noise{};
  std::array<int, 4> momentum{};                  // plane wave
  std::array<std::complex<double>, 12> spinor{};  // plane wave
  SmearingParams smearing;                        // propagator
  std::vector<std::string> channels;              // propagator
  std::vector<std::array<int, 3>> momenta;        // propagator; momenta[0] = (0, 0, 0)
  std::optional<double> tol;                      // per-solve overrides of [solver]
  std::optional<int> max_iter;
};

struct OutputConfig {
  std::string file;
  bool overwrite{};
  bool write_gauge{};
  bool fields{};
  OutputIo io{};
  bool resume{};
};

struct LogConfig {
  std::string level;
  int progress_every{};
  bool per_rank{};
};

struct MetricsConfig {
  bool peak{};
};

struct TuneConfig {
  std::string cache;  // "" = not given (then $EMPRISM_TUNE_CACHE, else no file)
  bool enabled{};
};

struct Config {
  std::string input_text;  // the TOML text as given (written to /input)
  std::string input_path;
  LatticeConfig lattice;
  CommConfig comm;
  GaugeConfig gauge;
  GenerateConfig generate;
  DiracConfig dirac;
  SolverConfig solver;
  std::vector<SolveConfig> solves;  // at least one, unless [generate] is given
  OutputConfig output;
  LogConfig log;
  MetricsConfig metrics;
  TuneConfig tune;
};

}  // namespace emprism
