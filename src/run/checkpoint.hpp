// checkpoint.hpp: the checkpoint store of a run: it owns "<output.file>.partial" from the resume decision to the
// final rename, and knows which solves in it are complete.
//   - Before any work (local, every rank on the same file system): check_output_path and plan_output decide whether
//     the run starts afresh, resumes an interrupted run (same physics inputs), or finds output.file already complete
//     for this input; a refusal is an InputError naming the key.
//   - CheckpointStore (collective): carries the complete solves of an interrupted run over to a fresh partial file
//     (a solve damaged by the crash is left out, to be solved again; in an ensemble file also the /gauge group of
//     each configuration with a complete solve), then holds the file open for the output schema
//     (schema.hpp). mark_complete() flags a solve complete and flushes: a run that is killed loses at most the solve
//     in progress. commit() closes the file and renames it to output.file. Destroying an uncommitted store removes
//     the partial file unless it holds a complete solve (then it is kept for a resumed run); a failed run before its
//     first complete solve leaves nothing.
// Errors: every member agrees on the outcome across ranks: when any rank fails, every rank throws the same exception
// (InputError or RuntimeFailure). An exception not all ranks share cannot be recovered from: the caller ends the job
// (Communicator::abort); the destructor then skips collective HDF5 calls.
// Who may call: plan_output, check_output_path, read_run_state, input_difference: local; CheckpointStore's members:
// COLLECTIVE over the communicator given to the constructor.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "io/h5/file.hpp"

namespace emprism::run {

// A solve found complete in an existing output or partial file. In an ensemble file (/configs/<id>/...) its name
// is "<id>/<solve name>" (ensemble_solve_name()).
struct CompleteSolve {
  std::string name;
  bool converged = false;
};

// "<id>/<name>": the name of solve `name` of configuration `id` in the checkpoint store of an ensemble.
std::string ensemble_solve_name(const std::string& id, const std::string& name);

// What an output file (complete or partial) says about the run that wrote it.
struct RunState {
  std::string physics_inputs;         // root attribute ("" if absent)
  double plaquette = 0;               // /gauge plaquette (NaN if absent)
  std::vector<CompleteSolve> solves;  // groups of /solves (and /configs/<id>/solves) flagged complete, in name order
  std::map<std::string, double> config_plaquettes;  // ensemble: /configs/<id>/gauge plaquette, per id that has one
};

// Reads path (serial HDF5, read-only; local). Throws RuntimeFailure naming the file and the reason when it cannot be
// opened or read.
RunState read_run_state(const std::string& path);

// The first input line that differs between two physics_inputs texts, for an error message:
// "dirac.kappa is 0.125 here but 0.12 in the file" or "solve[2].name is missing here". Empty when equal.
std::string input_difference(const std::string& in_file, const std::string& here);

// "<target>.partial": where a run writes until commit() (deterministic, so a later run can resume from it).
std::string partial_path(const std::string& final_path);

// Checks before any work that final_path names a file in a writable directory (whether or not it exists): throws
// InputError("output.file: ..."). Local.
void check_output_location(const std::string& final_path);
// check_output_location, and that final_path does not exist unless overwrite: throws InputError("output.file: ...").
// Local.
void check_output_path(const std::string& final_path, bool overwrite);

// How to open the output.
struct CheckpointOptions {
  bool overwrite = false;  // an existing target (and an existing partial file, when not resuming) may be replaced
  // Resume: when the partial file exists, its complete solves (and their correlators) are carried over to a fresh
  // partial file and reported by resumed(); everything else is written anew. The partial file must have been
  // written with exactly these physics_inputs and, when check_plaquette, the same plaquette.
  bool resume = false;
  std::string physics_inputs;
  double plaquette = 0;
  bool check_plaquette = false;
  io::h5::FieldIo mode = io::h5::FieldIo::Auto;  // how fields reach the file (output.io)
};

// Checks before any work what an existing partial file means for this run (local): none, or resume with matching
// physics_inputs: fine; resume with other inputs or an unreadable file: InputError("output.resume: ..."); no resume
// and !overwrite: InputError("output.file: ... set output.resume = true ..."). Returns its state (empty when there is
// no partial file or it will be replaced).
RunState check_partial(const std::string& final_path, const CheckpointOptions& options);

// What a run does with its output, decided before any work (local; InputError naming the key when refused).
struct OutputPlan {
  bool already_complete = false;  // resume, and output.file already holds every solve of this input: nothing to do
  RunState previous;              // of the complete file, or of the partial file to resume (empty: start afresh)
};
OutputPlan plan_output(const std::string& final_path, const CheckpointOptions& options);

class CheckpointStore {
 public:
  // Opens "<final_path>.partial" for writing (carrying complete solves over when resuming). Throws InputError naming
  // output.file when it exists and !overwrite or its directory is not writable, InputError("output.io: ...") for
  // FieldIo::Collective without parallel HDF5, and the check_partial errors. Collective.
  CheckpointStore(const Communicator& comm, const std::string& final_path, const CheckpointOptions& options);
  CheckpointStore(const Communicator& comm, const std::string& final_path, bool overwrite,
                  io::h5::FieldIo mode = io::h5::FieldIo::Auto);
  ~CheckpointStore();  // not committed: closes, and deletes the partial file if no solve in it is complete
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  // The partial file, for the schema's writers. RuntimeFailure "HDF5 output '<final>': cannot write: the file is
  // already committed" after commit().
  io::h5::File& file();
  io::h5::FieldIo mode() const;  // Collective or Gather
  // Solves carried over from the partial file of an interrupted run, in name order; and one of them by name.
  const std::vector<CompleteSolve>& resumed() const { return resumed_; }
  std::optional<CompleteSolve> resumed(const std::string& name) const;
  // Ensemble: the plaquette of configuration `id` in the partial file when its /configs/<id>/gauge was carried over
  // (it has a complete solve), else nothing.
  std::optional<double> resumed_plaquette(const std::string& id) const;
  // Flags /solves/<name> complete (written last, after its data and correlators) and flushes: from now on a crash
  // does not lose the solve.
  // An ensemble's "<id>/<name>" is flagged below the file's root, which the caller has set to /configs/<id>.
  void mark_complete(const std::string& name);
  // After a failure every rank shares (NonFiniteError): closes the file on every rank, so the complete solves stay
  // readable for a resumed run. Never throws. Collective.
  void close_after_agreed_failure();
  // Flushes what is written so far (in Collective mode /input and /metrics/kernels are only written by commit()).
  void flush();
  // Closes the file on every rank, then rank 0 renames it to final_path (atomic on one file system). Throws
  // RuntimeFailure on every rank when the target appeared meanwhile and !overwrite (the results are then kept in the
  // partial file) or the rename fails. A second commit() does nothing.
  void commit();

  const std::string& temp_path() const { return temp_path_; }  // the same on every rank
  const std::string& final_path() const { return final_path_; }

 private:
  void open(const Communicator& comm, const CheckpointOptions& options);
  void require_open(const char* what) const;

  std::string final_path_, temp_path_;
  bool overwrite_ = false;  // re-checked by commit(): a target that appeared meanwhile is not replaced
  bool committed_ = false;
  bool root_ = false;
  std::vector<CompleteSolve> resumed_;
  std::map<std::string, double> resumed_plaquettes_;
  int complete_ = 0;  // complete solves in the partial file (carried over or marked): it is kept if not committed
  std::optional<io::h5::File> file_;
};

}  // namespace emprism::run
