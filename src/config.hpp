// config.hpp: the checked run configuration, filled from the TOML input by io/toml_config.cpp.
// Plain structs with defaults; every field here has been validated before any work starts.
// Convention: extents and coordinates are (x, y, z, t) = mu 0..3 (docs/conventions.md section 1).
// Who may call: anyone; no MPI, no I/O.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace emprism {

enum class Precision { Single, Double, Mixed };  // mixed: double outer residual, single CG
enum class GaugeSource { Unit, Random, File, Heatbath };
enum class GaugeFileFormat { Auto, Ildg, Nersc, OpenQcd, Milc };
enum class SourceKind { Point, Random, PlaneWave, Propagator };
enum class NoiseKind { Gaussian, Z2 };
enum class QuarkSmearingKind { None, Wuppertal, Jacobi };
enum class LinkSmearingKind { None, Ape, Stout };

// The input's words for the choices above (as written in the TOML file and the output's attributes).
inline const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Single:
      return "single";
    case Precision::Double:
      return "double";
    case Precision::Mixed:
      break;
  }
  return "mixed";
}

inline const char* gauge_source_name(GaugeSource s) {
  switch (s) {
    case GaugeSource::Unit:
      return "unit";
    case GaugeSource::Random:
      return "random";
    case GaugeSource::File:
      return "file";
    case GaugeSource::Heatbath:
      break;
  }
  return "heatbath";
}

inline const char* gauge_file_format_name(GaugeFileFormat f) {
  switch (f) {
    case GaugeFileFormat::Auto:
      return "auto";
    case GaugeFileFormat::Ildg:
      return "ildg";
    case GaugeFileFormat::Nersc:
      return "nersc";
    case GaugeFileFormat::OpenQcd:
      return "openqcd";
    case GaugeFileFormat::Milc:
      break;
  }
  return "milc";
}

inline const char* quark_smearing_name(QuarkSmearingKind k) {
  switch (k) {
    case QuarkSmearingKind::None:
      return "none";
    case QuarkSmearingKind::Wuppertal:
      return "wuppertal";
    case QuarkSmearingKind::Jacobi:
      break;
  }
  return "jacobi";
}

inline const char* link_smearing_name(LinkSmearingKind k) {
  switch (k) {
    case LinkSmearingKind::None:
      return "none";
    case LinkSmearingKind::Ape:
      return "ape";
    case LinkSmearingKind::Stout:
      break;
  }
  return "stout";
}

struct LatticeConfig {
  std::array<int, 4> extents{};  // global (Lx, Ly, Lz, Lt), each even and >= 2
  // Process grid (px, py, pz, pt); absent = chosen to minimise the halo surface. Checked against the rank
  // count and the extents in comm/process_grid.cpp (local extents must be even).
  std::optional<std::array<int, 4>> procs;
};

// [comm]
struct CommConfig {
  // Exchange halos through MPI in these directions even where one rank spans them (the halo code then runs,
  // and is tested, on a single rank; like QUDA's partition mask). Directions split over ranks always do.
  std::array<bool, 4> force_halo{false, false, false, false};
  // How faces travel (comm/halo_policy.hpp): auto (tuned per operator), staged (pinned host memory), gpu_aware
  // (device memory to a GPU-aware MPI), peer (stores into the neighbours' buffers on the node; elsewhere tuned).
  enum class Transport { Auto, Staged, GpuAware, Peer };
  Transport transport = Transport::Auto;
  // The older key comm.gpu_aware, kept: true = transport "gpu_aware", "auto" = "auto", false = "auto" without
  // handing device memory to MPI. Only one of the two keys may be given; transport_key names the one that was.
  bool gpu_aware_in_auto = true;
  std::string transport_key = "comm.transport";
};

struct GaugeConfig {
  GaugeSource source = GaugeSource::Unit;
  double width = 1.0;      // random only: 0 = unit, 1 = Haar random
  std::uint64_t seed = 1;  // random and heatbath
  // file: a configuration written by another code (or by us), checked on reading (io/gauge_file.hpp)
  std::string file;
  GaugeFileFormat format = GaugeFileFormat::Auto;
  // heatbath: quenched Wilson gauge action, thermalised from a cold start (src/heatbath.hpp)
  double beta = 6.0;     // > 0
  int sweeps = 200;      // thermalisation sweeps, >= 0
  int or_per_sweep = 4;  // overrelaxation steps per heatbath sweep, >= 0
};

// [generate]: write an ensemble of heatbath configurations (gauge.source must be "heatbath"): after the
// thermalisation, `count` configurations, one every `every` sweeps, as <prefix>_<sweep>.<ildg|nersc>.
struct GenerateConfig {
  bool enabled = false;
  int count = 1;                                   // > 0
  int every = 10;                                  // > 0
  GaugeFileFormat format = GaugeFileFormat::Ildg;  // ildg | nersc
  std::string prefix = "cfg";
};

struct DiracConfig {
  double kappa = 0.0;                               // > 0 (required)
  double csw = 0.0;                                 // >= 0; 0 skips the clover term
  std::array<double, 4> theta_over_pi{0, 0, 0, 1};  // boundary phases theta_mu / pi
};

struct SolverConfig {
  Precision precision = Precision::Single;
  double tol = 1e-6;     // relative true residual of the full system, > 0
  int max_iter = 10000;  // > 0, total CG iterations per solve including restarts
};

// Source smearing of a propagator (src/smearing.hpp): gauge-covariant smearing of the point source on its
// timeslice, in the three spatial directions, with spatially APE- or stout-smeared links used for the smearing
// only (the Dirac operator always sees the unsmeared links).
//   wuppertal: psi <- (psi + alpha H psi) / (1 + 6 alpha), `steps` times              (weight = alpha > 0)
//   jacobi:    psi <- psi_0 + kappa_s H psi, `steps` times (sum_n (kappa_s H)^n psi_0) (weight = kappa_s > 0)
//   H psi(x) = sum_{i=x,y,z} [ V_i(x) psi(x+i) + V_i(x-i)^dag psi(x-i) ]  (V: smeared links, no boundary phases)
//   ape:   V <- Proj_SU3[ (1 - alpha) V_i + (alpha / 4) sum_{j != i spatial} staples_ij ] (link_weight = alpha)
//   stout: V <- exp(i Q) V_i, Q from rho * sum_{j != i spatial} staples_ij (Morningstar-Peardon; link_weight = rho)
struct SmearingConfig {
  QuarkSmearingKind kind = QuarkSmearingKind::None;
  int steps = 0;      // > 0 when kind != None
  double weight = 0;  // wuppertal alpha or jacobi kappa_s, > 0
  LinkSmearingKind link_kind = LinkSmearingKind::None;
  int link_steps = 0;      // >= 0
  double link_weight = 0;  // ape alpha in (0, 1], stout rho > 0
};

struct SolveConfig {
  std::string name;  // unique, [A-Za-z0-9_.-]+; default "solve<i>"
  SourceKind kind = SourceKind::Point;
  // point
  std::array<int, 4> site{0, 0, 0, 0};  // global coordinates, 0 <= site[mu] < L[mu]
  int spin = 0;                         // 0..3
  int colour = 0;                       // 0..2
  // random
  std::uint64_t seed = 1;
  NoiseKind noise = NoiseKind::Gaussian;
  // plane wave: psi(x) = exp(i p.x) eta, p_mu = (2 pi n_mu + theta_mu) / L_mu
  std::array<int, 4> momentum{0, 0, 0, 0};
  std::array<std::complex<double>, 12> spinor{};  // eta, index 3*spin + colour
  // propagator: the 12 spin-colour solves of a point source at `site` (optionally smeared), contracted to meson
  // two-point correlators (src/contractions.hpp) in `channels` at the spatial `momenta` (units of 2 pi / L).
  SmearingConfig smearing;
  std::vector<std::string> channels;                   // empty = all known channels
  std::vector<std::array<int, 3>> momenta{{0, 0, 0}};  // always starts with (0, 0, 0)
  // per-solve overrides of [solver]
  std::optional<double> tol;
  std::optional<int> max_iter;
};

enum class OutputIo { Auto, Collective, Gather };

struct OutputConfig {
  std::string file;  // required, path of the HDF5 file
  bool overwrite = false;
  bool write_gauge = false;
  bool fields = true;  // write /solves/<name>/solution and source (they are large); false: attributes and history only
  // How distributed fields reach the file: collective parallel HDF5 (each rank writes its hyperslab; needs
  // HDF5 built with MPI), a gather through rank 0 one timeslice at a time, or auto (collective when available).
  OutputIo io = OutputIo::Auto;
  // Continue an interrupted run: the solves already complete in the partial file <file>.partial (same physics
  // input) are kept and skipped (io/h5_output.hpp).
  bool resume = false;
};

struct LogConfig {
  std::string level = "info";  // trace|debug|info|warn|error
  int progress_every = 50;     // CG iterations between progress lines, > 0
  bool per_rank = false;       // every rank logs everything to <output.file>.rank<N>.log (debugging)
};

struct MetricsConfig {
  bool peak = true;  // measure the empirical memory bandwidth at start-up
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
};

}  // namespace emprism
