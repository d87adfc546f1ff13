// h5_output.hpp: the run's HDF5 output file (docs/conventions.md s. 13), written with the HDF5 C API from many ranks.
// Complex numbers are the h5py compound {r, i}; fields are stored in GLOBAL natural order
// [Lt][Lz][Ly][Lx][4][3] (spinors) and [Lt][Lz][Ly][Lx][4][3][3] (links), x fastest, whatever the number of
// ranks: each rank passes its block of the field in LOCAL natural order and the file does not depend on the
// decomposition. The file is written as "<target>.partial" beside the target and renamed by commit(). Solves are
// checkpoints: mark_complete() flags a solve (and its correlators) complete and flushes the file, so a run that is
// killed loses at most the solve in progress. Destroying an uncommitted OutputFile removes the partial file unless
// it holds a complete solve (then it is kept for a resumed run, OutputOptions::resume); a failed run before its
// first complete solve leaves nothing.
// Who may call: every public member of OutputFile is COLLECTIVE over the communicator given to the
// constructor: all ranks call it, in the same order, with identical attribute values; only field data
// (and the per-rank RankTimes and CommRows) differ between ranks. check_output_path is local.
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "src/config.hpp"
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
  std::string physics_inputs;    // io::physics_inputs(config): what a resumed run must match
  std::string input_hash;        // io::text_hash(physics_inputs)
};

// The block of the lattice this rank holds: extents (x, y, z, t) of the global lattice, of the block, and the
// global coordinates of the block's first site. The blocks of all ranks must tile the global lattice as a
// tensor-product grid (every process grid does); this is checked collectively by each field write.
struct BlockLayout {
  std::array<int, 4> global{};
  std::array<int, 4> local{};
  std::array<int, 4> origin{0, 0, 0, 0};
  // One block holding the whole lattice (the single-rank case).
  static BlockLayout whole(const std::array<int, 4>& global) { return BlockLayout{global, global, {0, 0, 0, 0}}; }
};

struct GaugeInfo {
  std::string source;  // "unit" | "random" ...
  double plaquette = 0;
  double link_trace = 0;  // average Re tr U / 3
  // Used only by the whole-lattice convenience overload of write_gauge: links in natural order
  // [Lt][Lz][Ly][Lx][mu][row][col]; empty = not written. The BlockLayout overload ignores it.
  std::vector<std::complex<double>> links;
};

struct SolveRecord {
  std::string name;
  std::string source_kind;       // "point" | "random" | "plane_wave"
  bool single_precision = true;  // store fields as float32 compounds, else float64
  bool write_fields = true;      // false: solution and source are not written (output.fields = false)
  // This rank's block (local volume * 12), local natural order, index ((local_site*4)+spin)*3+colour.
  std::vector<std::complex<double>> solution;
  std::vector<std::complex<double>> source;  // same shape
  std::vector<double> residual_history;      // relative residual per CG iteration (rank 0's is written)
  int iterations = 0;
  double true_residual = 0;
  bool converged = false;
  double seconds = 0;
  double kappa = 0, csw = 0, tol = 0;
  int restarts = 0;
};

// One propagator solve (the 12 spin-colour columns of a point source), group /solves/<name> with
// source_kind = "propagator". Column k = 3 * source_spin + source_colour.
struct PropagatorRecord {
  std::string name;
  bool single_precision = true;  // the propagator dataset in float32, else float64
  bool write_fields = true;      // false: no propagator dataset
  // This rank's block of each column (local volume * 12, local natural order); required when write_fields.
  const std::array<std::vector<std::complex<double>>, 12>* columns = nullptr;
  std::array<std::vector<double>, 12> residual_history;  // rank 0's
  std::array<int, 12> iterations{}, restarts{};
  std::array<double, 12> true_residual{}, seconds{};
  std::array<bool, 12> converged{};
  double kappa = 0, csw = 0, tol = 0;
  std::array<int, 4> source_site{};
  std::string smearing = "none", link_smearing = "none";
  int smearing_steps = 0, link_smearing_steps = 0;
  double smearing_weight = 0, link_smearing_weight = 0;
  double smeared_plaquette = 1;  // spatial plaquette of the links the source smearing used (1: unsmeared unit)
};

// Meson correlators of a propagator, group /correlators/<name> (values identical on every rank; rank 0's written).
struct CorrelatorRecord {
  struct Entry {
    std::string channel;
    std::array<int, 3> momentum{};
    std::vector<std::complex<double>> values;  // [Lt], t relative to the source timeslice
    std::vector<double> effective_mass;        // [Lt], NaN where undefined
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

// A solve found complete in an existing output or partial file (read_run_state).
struct CompleteSolve {
  std::string name;
  bool converged = false;
};

// What an output file (complete or partial) says about the run that wrote it.
struct RunState {
  std::string physics_inputs;         // root attribute ("" if absent)
  double plaquette = 0;               // /gauge plaquette (NaN if absent)
  std::vector<CompleteSolve> solves;  // groups of /solves flagged complete, in name order
};

// Reads path (serial HDF5, read-only; local, no MPI). Throws RuntimeFailure naming the file and the reason when it
// cannot be opened or read.
RunState read_run_state(const std::string& path);

// The first input line that differs between two physics_inputs texts, for an error message:
// "dirac.kappa is 0.125 here but 0.12 in the file" or "solve[2].name is missing here". Empty when equal.
std::string input_difference(const std::string& in_file, const std::string& here);

// "<target>.partial": where a run writes until commit() (deterministic, so a later run can resume from it).
std::string partial_path(const std::string& final_path);

// How to open the output file.
struct OutputOptions {
  bool overwrite = false;  // an existing target (and an existing partial file, when not resuming) may be replaced
  // Resume: when the partial file exists, its complete solves (and their correlators) are carried over to a fresh
  // partial file and reported by resumed(); everything else is written anew. The partial file must have been
  // written with exactly these physics_inputs and, when the current plaquette is given, the same plaquette.
  bool resume = false;
  std::string physics_inputs;
  double plaquette = 0;
  bool check_plaquette = false;
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
  int precision_bits = 0;  // 32 or 64: the operator
  int direction = 0;       // 0..3 = x, y, z, t (written as "x".."t")
  std::string transport;   // "staged", "gpu_aware" or "peer"
  bool split_exterior = false;
  std::int64_t calls = 0;      // exchanges timed
  double bytes_per_call = 0;   // sent by the rank in this direction, both faces
  double exchange_s = 0;       // start of the exchange to faces in place, summed over calls
  double exposed_s = 0;        // the compute stream waiting for them after the interior kernel, summed
  double hidden_fraction = 0;  // 1 - exposed_s / exchange_s (1 when nothing was exchanged)
};

// The output file. How distributed fields reach it (OutputIo, output.io in the input):
//  - Collective: every rank opens the file through MPI-IO (H5Pset_fapl_mpio) and writes its hyperslab of each
//    field with one collective H5Dwrite. Needs HDF5 built with MPI (collective_available()). HDF5 1.10 cannot
//    write variable-length data through MPI-IO, so /input and /metrics/kernels are created collectively when
//    written and filled in by rank 0 in commit(), after the parallel file is closed and reopened serially.
//  - Gather: only rank 0 opens the file (serial HDF5). For each field, global timeslice t = 0..Lt-1 in turn,
//    the ranks whose block holds t send their slab to rank 0, which writes the timeslice; rank 0 never holds
//    more than one global timeslice of a field besides its own block.
//  - Auto: Collective when available and the communicator has more than one rank, otherwise Gather (on one
//    rank Gather is plain serial HDF5).
// Both modes write the same objects with the same values, and the datasets do not depend on the decomposition
// (only what the caller passes differs: root attributes ranks / process_grid, one /metrics/ranks row per rank).
// Values that are not fields are written once: attributes must be identical on every rank (HDF5 metadata is
// collective); residual_history, /input and the kernel table are rank 0's.
//
// Errors: every member checks its arguments, then agrees on the outcome with the other ranks (MPI_Allreduce):
// when any rank fails, EVERY rank throws the same exception (InputError or RuntimeFailure; the message of the
// lowest failing rank, which is named when it is not rank 0), so no rank is left waiting. An exception that
// not all ranks share (the caller's own, or an HDF5 failure inside a collective HDF5 call on some ranks only,
// which may hang inside HDF5) cannot be recovered from: the caller must end the job with
// Communicator::abort (MPI_Abort). On such a one-rank exception the destructor skips collective HDF5 calls
// (the parallel file handle is then left to HDF5's shutdown) and rank 0 removes the partial file unless it holds a
// complete solve.
class OutputFile {
 public:
  // Opens "<final_path>.partial" for writing. Throws emprism::InputError naming `final_path` when
  // it exists and !overwrite or its directory is not writable (checked on every rank, which must all see the
  // same file system), and InputError("output.io: ...") when `mode` is Collective and collective_available()
  // is false. `comm` is duplicated (MPI_Comm_dup) for the file's own messages; MPI must be initialised.
  OutputFile(const std::string& final_path, bool overwrite, MPI_Comm comm = MPI_COMM_SELF,
             OutputIo mode = OutputIo::Auto);
  // The same with resume (see OutputOptions); an existing partial file that is not resumed is an InputError
  // ("output.file: ...") unless options.overwrite.
  OutputFile(const std::string& final_path, const OutputOptions& options, MPI_Comm comm = MPI_COMM_SELF,
             OutputIo mode = OutputIo::Auto);
  ~OutputFile();  // not committed: closes, and deletes the partial file if no solve in it is complete
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // True when this build links HDF5 built with MPI (EMPRISM_HAVE_PARALLEL_HDF5), so Collective can be used.
  static bool collective_available();
  OutputIo mode() const { return mode_; }  // the mode in use: Collective or Gather, never Auto

  void write_root(const RootInfo& info);
  void write_input(const std::string& toml_text);  // dataset /input, a scalar variable-length string (rank 0's)
  // Group /gauge with its attributes; dataset /gauge/links when local_links is not null (it must then be
  // non-null on every rank): this rank's block, local volume * 36 values in local natural order.
  void write_gauge(const GaugeInfo& gauge, const BlockLayout& block,
                   const std::vector<std::complex<double>>* local_links);
  // Whole-lattice convenience: block = BlockLayout::whole(extents), links = gauge.links unless empty.
  void write_gauge(const GaugeInfo& gauge, const std::array<int, 4>& extents);
  // Group /solves/<rec.name>: attributes, solution and source (this rank's block), residual_history (rank 0's).
  void write_solve(const SolveRecord& rec, const BlockLayout& block);
  void write_solve(const SolveRecord& rec, const std::array<int, 4>& extents) {  // whole-lattice convenience
    write_solve(rec, BlockLayout::whole(extents));
  }
  // Group /solves/<rec.name> of a propagator: attributes, per-column iterations and true residuals
  // (column_iterations, column_true_residual [4][3]), residual_history/s<spin>c<colour>, and with write_fields the
  // dataset propagator [4][3][Lt][Lz][Ly][Lx][4][3] (source spin, source colour, then the solution layout).
  void write_propagator(const PropagatorRecord& rec, const BlockLayout& block);
  // Group /correlators/<rec.name>: /<channel> [Lt] complex (zero momentum), /effective_mass/<channel>, /pcac_mass,
  // and /p<nx>_<ny>_<nz>/... for the other momenta. Rank 0's values are written.
  void write_correlators(const CorrelatorRecord& rec);
  // Sets attribute complete = true on /solves/<name> (written last, after its data and correlators) and flushes:
  // from now on a crash does not lose the solve.
  void mark_complete(const std::string& name);
  // Solves carried over from the partial file of an interrupted run (OutputOptions::resume), in name order.
  const std::vector<CompleteSolve>& resumed() const { return resumed_; }
  // Group /metrics: peak attributes (identical on every rank), the kernel table (rank 0's), and /metrics/ranks,
  // the rows passed by every rank, concatenated in rank order (MPI_Gatherv to rank 0): each rank normally passes
  // its own one row, so the table has one row per rank. The rank column is written as given.
  void write_metrics(const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                     const std::vector<RankTimes>& my_rows);
  void write_metrics(const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak, const RankTimes& mine) {
    write_metrics(kernels, peak, std::vector<RankTimes>{mine});
  }
  // Table /metrics/comm (after write_metrics): the rows passed by every rank, in rank order (MPI_Gatherv), columns
  // rank, precision_bits, direction ("x".."t"), transport, exterior ("fused"/"split"), calls, bytes_per_call,
  // exchange_s, exposed_s, hidden_fraction; strings are fixed-length (h5py gives bytes). Empty without halos.
  void write_comm_metrics(const std::vector<CommRow>& my_rows);
  // Flushes what is written so far to the partial file (in Collective mode /input and /metrics/kernels are
  // only written by commit()).
  void flush();
  // Closes the file on every rank, then rank 0 renames it to final_path (atomic on one file system). Throws
  // RuntimeFailure on every rank when the target appeared meanwhile and !overwrite (the results are then kept
  // in the partial file) or the rename fails. A second commit() does nothing.
  void commit();

  const std::string& temp_path() const { return temp_path_; }  // the same on every rank

 private:
  bool is_root() const { return rank_ == 0; }
  bool holds_file() const { return mode_ == OutputIo::Collective || rank_ == 0; }  // ranks with an open file_
  void require_open(const char* what) const;
  // Runs `body` on this rank, then agrees with all ranks: when it threw on any rank, throws on every rank.
  template <typename Body>
  void step(Body&& body);
  void close_file_quietly();
  void open(const OutputOptions& options, MPI_Comm comm, OutputIo mode);
  // Writes this rank's block of one field into its dataset, collectively or through the gather to rank 0
  // (collective). FieldWrite is defined in h5_output.cpp.
  struct FieldWrite;
  void write_field(const FieldWrite& w);
  // Writes the Collective mode's deferred variable-length data (rank 0, file closed by everyone).
  void write_deferred();

  std::string final_path_, temp_path_;
  MPI_Comm comm_ = MPI_COMM_NULL;  // our duplicate of the caller's communicator
  int rank_ = 0, size_ = 1;
  OutputIo mode_ = OutputIo::Gather;
  std::int64_t file_ = -1;  // hid_t; valid where holds_file()
  bool open_ = false;       // the same on every rank
  bool committed_ = false;
  bool overwrite_ = false;        // re-checked by commit(): a target that appeared meanwhile is not replaced
  bool failed_together_ = false;  // step() threw on every rank: collective clean-up is safe
  bool pending_input_ = false;    // Collective: /input created, its text written by commit()
  std::string pending_input_text_;
  bool pending_kernels_ = false;  // Collective: /metrics/kernels created, its rows written by commit()
  std::vector<KernelMetric> pending_kernel_rows_;
  std::vector<CompleteSolve> resumed_;
  int complete_ = 0;  // complete solves in the partial file (carried over or marked): it is kept if not committed
};

// Checks before any work that final_path may be written: throws InputError("output.file: ..."). Local (no MPI).
void check_output_path(const std::string& final_path, bool overwrite);

// Checks before any work what an existing partial file means for this run (local, no MPI): none, or resume with
// matching physics_inputs: fine; resume with other inputs or an unreadable file: InputError("output.resume: ...");
// no resume and !overwrite: InputError("output.file: ... set output.resume = true ..."). Returns its state (empty
// when there is no partial file or it will be replaced).
RunState check_partial(const std::string& final_path, const OutputOptions& options);

}  // namespace emprism::io
