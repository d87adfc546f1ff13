// schema.hpp: the layout of the run's output file (docs/conventions.md section 13) as calls on io/h5: the root
// attributes, /input, /gauge, /solves/<name> (a solve, or the 12 columns of a propagator), /correlators/<name> and
// /metrics. Fields are stored in GLOBAL natural order [Lt][Lz][Ly][Lx][4][3] (spinors) and [Lt][Lz][Ly][Lx][4][3][3]
// (links), x fastest, whatever the number of ranks: each rank passes its block in LOCAL natural order
// (io/h5/field_writer.hpp). The parameters of the input a solve depends on (kappa, csw, tol, the smearing of a
// propagator...) are attributes of its group; which ones, and their names, come from the parameter declaration
// (src/run/parameters.hpp). Who may call: every function is COLLECTIVE over the file's communicator: all ranks call it,
// in the same order, with identical attribute values; only field data (and the per-rank RankTimes and CommRows) differ
// between ranks. Failures are agreed: every rank throws the same exception (io/h5/file.hpp).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "io/h5/field_writer.hpp"
#include "io/h5/file.hpp"
#include "kernels/metrics.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

using io::h5::BlockLayout;
using cplx = std::complex<double>;

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
  std::string precision;         // "single" | "double" | "mixed"
  std::string physics_inputs;    // physics_inputs(config): what a resumed run must match
  std::string input_hash;        // text_hash(physics_inputs)
};

// One attribute from the input: its name and value (int32, float64, UTF-8 string or int32[4]).
struct InputAttribute {
  using Value = std::variant<int, double, std::string, std::array<int, 4>>;
  std::string name;
  Value value;
};

struct GaugeInfo {
  std::string source;  // "unit" | "random" | "file" | "heatbath"
  // The file of the field solved on (read, or the last one [generate] wrote), its format and its checksum status
  // ("ok", "none", "written"); "none" where the field is not from a file.
  std::string file = "none", format = "none", checksum = "none";
  double plaquette = 0;   // of the field solved on
  double link_trace = 0;  // average Re tr U / 3
  // Used only by the whole-lattice convenience overload of write_gauge: links in natural order
  // [Lt][Lz][Ly][Lx][mu][row][col]; empty = not written. The BlockLayout overload ignores it.
  std::vector<cplx> links;
};

struct SolveRecord {
  std::string name;
  std::string source_kind;       // "point" | "random" | "plane_wave"
  bool single_precision = true;  // store fields as float32 compounds, else float64
  bool write_fields = true;      // false: solution and source are not written (output.fields = false)
  // This rank's block (local volume * 12), local natural order, index ((local_site*4)+spin)*3+colour.
  std::vector<cplx> solution;
  std::vector<cplx> source;              // same shape
  std::vector<double> residual_history;  // relative residual per CG iteration (rank 0's is written)
  int iterations = 0;
  double true_residual = 0;
  bool converged = false;
  double seconds = 0;
  int restarts = 0;                    // the CG's reliable updates (CgResult::reliable_updates)
  std::vector<InputAttribute> inputs;  // kappa, csw, tol, ...
};

// One propagator solve (the 12 spin-colour columns of a point source), group /solves/<name> with
// source_kind = "propagator". Column k = 3 * source_spin + source_colour.
struct PropagatorRecord {
  std::string name;
  bool single_precision = true;  // the propagator dataset in float32, else float64
  bool write_fields = true;      // false: no propagator dataset
  // This rank's block of each column (local volume * 12, local natural order); required when write_fields.
  const std::array<std::vector<cplx>, 12>* columns = nullptr;
  std::array<std::vector<double>, 12> residual_history;  // rank 0's
  std::array<int, 12> iterations{}, restarts{};
  std::array<double, 12> true_residual{}, seconds{};
  std::array<bool, 12> converged{};
  std::vector<InputAttribute> inputs;  // kappa, csw, tol, source_site, smearing, ...
  double smeared_plaquette = 1;        // spatial plaquette of the links the source smearing used
};

// Meson correlators of a propagator, group /correlators/<name> (values identical on every rank; rank 0's written).
struct CorrelatorRecord {
  struct Entry {
    std::string channel;
    std::array<int, 3> momentum{};
    std::vector<cplx> values;            // [Lt], t relative to the source timeslice
    std::vector<double> effective_mass;  // [Lt], NaN where undefined
    std::string gamma_sink, gamma_source;
    int time_parity = 1;
  };
  std::string name;  // the propagator solve's name
  std::array<int, 4> source_site{};
  std::vector<std::string> channels;
  std::vector<std::array<int, 3>> momenta;  // momenta[0] = (0, 0, 0)
  std::string convention;
  std::vector<Entry> entries;     // every (channel, momentum)
  std::vector<double> pcac_mass;  // [Lt] at zero momentum; empty: not written
};

// One row of /metrics/ranks. reduction_s: time in the global sums (MPI); reduction_wait_s: time the host waited
// for the device's partial sums before them; reductions_per_iteration: global sums per CG iteration.
struct RankTimes {
  int rank = 0;
  double compute_s = 0, halo_wait_s = 0, reduction_s = 0;
  double reductions_per_iteration = 0, reduction_wait_s = 0;
};

// One row of /metrics/comm: one partitioned direction of one operator (fp32 or fp64) on one rank.
struct CommRow {
  int rank = 0;
  int precision_bits = 0;          // 32 or 64: the operator
  int direction = 0;               // 0..3 = x, y, z, t (written as "x".."t")
  std::string transport;           // "staged", "gpu_aware" or "peer"
  std::string exterior = "fused";  // "fused", "split" or "whole" (comm/halo_policy.hpp)
  std::int64_t calls = 0;          // exchanges timed
  double bytes_per_call = 0;       // sent by the rank in this direction, both faces
  double exchange_s = 0;           // start of the exchange to faces in place, summed over calls
  double exposed_s = 0;            // the compute stream waiting for them after the interior kernel, summed
  double hidden_fraction = 0;      // 1 - exposed_s / exchange_s (1 when nothing was exchanged)
};

void write_root(io::h5::File& file, const RootInfo& info);
// Ensemble: root attributes config_ids and config_files (one-dimensional string arrays, in the input's order).
void write_ensemble_list(io::h5::File& file, const std::vector<EnsembleMember>& members);
// Dataset /input, a scalar variable-length string (rank 0's).
void write_input(io::h5::File& file, const std::string& toml_text);
// Group /gauge with its attributes; dataset /gauge/links when local_links is not null (it must then be non-null on
// every rank): this rank's block, local volume * 36 values in local natural order.
void write_gauge(io::h5::File& file, const GaugeInfo& gauge, const BlockLayout& block,
                 const std::vector<cplx>* local_links);
// Whole-lattice convenience: block = BlockLayout::whole(extents), links = gauge.links unless empty.
void write_gauge(io::h5::File& file, const GaugeInfo& gauge, const std::array<int, 4>& extents);
// Group /solves/<rec.name>: attributes, solution and source (this rank's block), residual_history (rank 0's).
void write_solve(io::h5::File& file, const SolveRecord& rec, const BlockLayout& block);
inline void write_solve(io::h5::File& file, const SolveRecord& rec, const std::array<int, 4>& extents) {
  write_solve(file, rec, BlockLayout::whole(extents));
}
// Group /solves/<rec.name> of a propagator: attributes (iterations, restarts and seconds summed over the columns,
// the largest true residual, converged if all are), per-column iterations and true residuals (column_iterations,
// column_true_residual [4][3]), residual_history/s<spin>c<colour>, and with write_fields the dataset propagator
// [4][3][Lt][Lz][Ly][Lx][4][3] (source spin, source colour, then the solution layout).
void write_propagator(io::h5::File& file, const PropagatorRecord& rec, const BlockLayout& block);
// Group /correlators/<rec.name>: /<channel> [Lt] complex (zero momentum), /effective_mass/<channel>, /pcac_mass,
// and /p<nx>_<ny>_<nz>/... for the other momenta. Rank 0's values are written.
void write_correlators(io::h5::File& file, const CorrelatorRecord& rec);
// Attribute complete = true on /solves/<name> (after its data and correlators; the caller flushes).
void write_complete_flag(io::h5::File& file, const std::string& name);
// Group /metrics: peak attributes (identical on every rank), the kernel table (rank 0's), and /metrics/ranks,
// the rows passed by every rank, concatenated in rank order: each rank normally passes its own one row.
void write_metrics(io::h5::File& file, const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                   const std::vector<RankTimes>& my_rows);
inline void write_metrics(io::h5::File& file, const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                          const RankTimes& mine) {
  write_metrics(file, kernels, peak, std::vector<RankTimes>{mine});
}
// Table /metrics/comm (after write_metrics): the rows passed by every rank, in rank order, columns rank,
// precision_bits, direction ("x".."t"), transport, exterior ("fused"/"split"), calls, bytes_per_call, exchange_s,
// exposed_s, hidden_fraction; strings are fixed-length (h5py gives bytes). Empty without halos.
void write_comm_metrics(io::h5::File& file, const std::vector<CommRow>& my_rows);

}  // namespace emprism::run
