// checkpoint.cpp: the checkpoint store (see checkpoint.hpp): output path checks, the state of an existing output or
// partial file, the resume decision, carrying complete solves over, marking solves complete, the final rename.
#include "src/run/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "comm/collectives.hpp"
#include "io/h5/reader.hpp"
#include "kernels/errors.hpp"
#include "src/run/schema.hpp"

namespace emprism::run {

namespace fs = std::filesystem;

namespace {

// "key = value" lines in order.
std::vector<std::pair<std::string, std::string>> input_lines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const std::size_t eq = line.find(" = ");
    if (eq == std::string::npos) {
      out.emplace_back(line, "");
    } else {
      out.emplace_back(line.substr(0, eq), line.substr(eq + 3));
    }
    pos = end + 1;
  }
  return out;
}

// Rank 0, before the file is opened for writing: copies the complete solves (/solves/<name> and /correlators/<name>)
// of the partial file into a fresh file and renames it over the partial file. A solve whose objects cannot be copied
// (damaged by the crash) is left out, to be solved again.
void carry_over(const std::string& partial, const std::vector<CompleteSolve>& solves, const std::string& final_path) {
  const std::string fresh = partial + ".new";
  {
    io::h5::Copier copier(partial, fresh, final_path);
    for (const CompleteSolve& c : solves) {
      bool ok = copier.copy("/solves/" + c.name);
      if (ok && copier.source_has("/correlators/" + c.name)) ok = copier.copy("/correlators/" + c.name);
      if (!ok) {  // no half-copied solve
        copier.drop("/solves/" + c.name);
        copier.drop("/correlators/" + c.name);
      }
    }
    copier.close();
  }
  if (std::rename(fresh.c_str(), partial.c_str()) != 0) {
    const int err = errno;
    std::remove(fresh.c_str());
    throw RuntimeFailure("HDF5 output '" + final_path + "': cannot rename '" + fresh + "' to '" + partial +
                         "': " + std::strerror(err));
  }
}

// True when the partial file is readable and holds no complete solve: a run killed before its first solve left it,
// and nothing is lost by replacing it (the caller holds the output's lock: no run is writing it).
bool holds_no_complete_solve(const std::string& partial) {
  try {
    return read_run_state(partial).solves.empty();
  } catch (const RuntimeFailure&) {
    return false;
  }
}

}  // namespace

std::string partial_path(const std::string& final_path) { return final_path + ".partial"; }

void check_output_location(const std::string& final_path) {
  if (final_path.empty()) throw InputError("output.file: is empty; give the path of the HDF5 file to write");
  const fs::path p(final_path);
  if (!p.has_filename()) throw InputError("output.file: '" + final_path + "' names a directory, not a file");
  std::error_code ec;
  if (fs::is_directory(fs::status(p, ec))) throw InputError("output.file: '" + final_path + "' is a directory");
  const std::string dir = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
  if (!fs::is_directory(fs::status(dir, ec))) throw InputError("output.file: directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError("output.file: directory '" + dir + "' is not writable");
}

void check_output_path(const std::string& final_path, bool overwrite) {
  check_output_location(final_path);
  std::error_code ec;
  if (fs::exists(fs::status(final_path, ec)) && !overwrite)
    throw InputError("output.file: '" + final_path + "' exists; set output.overwrite = true to replace it");
}

RunState read_run_state(const std::string& path) {
  const std::string why = "cannot read '" + path + "'";
  const io::h5::Reader file(path);
  if (!file.openable("/")) throw RuntimeFailure(why + ": no root group");
  RunState state;
  state.physics_inputs = file.attr_string("/", "physics_inputs").value_or("");
  state.plaquette =
      file.exists("/gauge") ? file.attr_double("/gauge", "plaquette").value_or(std::nan("")) : std::nan("");
  if (!file.exists("/solves")) return state;
  const auto names = file.members("/solves");
  if (!names) throw RuntimeFailure(why + ": cannot open /solves");
  for (const std::string& name : *names) {
    const std::string group = "/solves/" + name;
    if (file.attr_int8(group, "complete").value_or(0) != 1) continue;  // not complete, or damaged
    state.solves.push_back(CompleteSolve{name, file.attr_int8(group, "converged").value_or(0) == 1});
  }
  return state;
}

std::string input_difference(const std::string& in_file, const std::string& here) {
  if (in_file == here) return "";
  const auto a = input_lines(in_file), b = input_lines(here);
  // The line of `lines` with this key, or null (no structured bindings here: hipcc cannot capture them).
  auto find = [](const std::vector<std::pair<std::string, std::string>>& lines, const std::string& key) {
    const auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& kv) { return kv.first == key; });
    return it == lines.end() ? nullptr : &*it;
  };
  for (const auto& line : b) {
    const auto* there = find(a, line.first);
    if (!there) return line.first + " = " + line.second + " here is not in the file's input";
    if (there->second != line.second)
      return line.first + " is " + line.second + " here but " + there->second + " in the file";
  }
  for (const auto& line : a) {
    if (!find(b, line.first)) return line.first + " = " + line.second + " in the file is missing here";
  }
  return "the inputs differ in the order of their solves";
}

RunState check_partial(const std::string& final_path, const CheckpointOptions& options) {
  const std::string partial = partial_path(final_path);
  std::error_code ec;
  if (!fs::exists(partial, ec)) return {};
  if (!options.resume) {
    if (options.overwrite || holds_no_complete_solve(partial)) return {};
    throw InputError("output.file: '" + partial +
                     "' holds the results of an interrupted run; set output.resume = true (or --resume) to continue "
                     "it, or output.overwrite = true to start again");
  }
  RunState state;
  try {
    state = read_run_state(partial);
  } catch (const RuntimeFailure& e) {
    throw InputError(std::string("output.resume: ") + e.what() + "; remove it to start again");
  }
  const std::string diff = input_difference(state.physics_inputs, options.physics_inputs);
  if (!diff.empty())
    throw InputError("output.resume: the partial file '" + partial + "' was written by a different input (" + diff +
                     "); run that input, or remove the file to start again");
  return state;
}

OutputPlan plan_output(const std::string& final_path, const CheckpointOptions& options) {
  OutputPlan plan;
  std::error_code ec;
  if (options.resume && fs::is_regular_file(final_path, ec)) {
    // Resume against a complete output file: it must come from the same input and hold every solve.
    try {
      plan.previous = read_run_state(final_path);
    } catch (const RuntimeFailure& e) {
      throw InputError(std::string("output.file: ") + e.what() + "; it exists and output.resume cannot continue it");
    }
    const std::string diff = input_difference(plan.previous.physics_inputs, options.physics_inputs);
    if (!diff.empty())
      throw InputError("output.resume: '" + final_path + "' exists and was written by a different input (" + diff +
                       "); set output.overwrite = true and output.resume = false to replace it");
    plan.already_complete = true;
    return plan;
  }
  check_output_path(final_path, options.overwrite);
  plan.previous = check_partial(final_path, options);
  return plan;
}

// ---- CheckpointStore

CheckpointStore::CheckpointStore(const Communicator& comm, const std::string& final_path,
                                 const CheckpointOptions& options)
    : final_path_(final_path), overwrite_(options.overwrite) {
  open(comm, options);
}

CheckpointStore::CheckpointStore(const Communicator& comm, const std::string& final_path, bool overwrite,
                                 io::h5::FieldIo mode)
    : final_path_(final_path), overwrite_(overwrite) {
  CheckpointOptions options;
  options.overwrite = overwrite;
  options.mode = mode;
  open(comm, options);
}

void CheckpointStore::open(const Communicator& comm, const CheckpointOptions& options) {
  if (!mpi_initialised())
    throw RuntimeFailure("HDF5 output '" + final_path_ +
                         "': MPI is not initialised (make an emprism::MpiSession first)");
  if (options.mode == io::h5::FieldIo::Collective && !io::h5::collective_available())
    throw InputError(
        "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" or "
        "\"auto\"");
  Communicator own = comm.duplicate();
  root_ = own.rank() == 0;
  temp_path_ = partial_path(final_path_);
  agreed_step(own, [&] { check_output_path(final_path_, options.overwrite); });
  RunState previous;
  agreed_step(own, [&] { previous = check_partial(final_path_, options); });  // every rank: the same file system
  std::error_code ec;
  const bool resuming = options.resume && fs::exists(temp_path_, ec);
  // Rank 0 carries the complete solves over to a fresh file that replaces the partial one.
  agreed_step(own, [&] {
    if (!resuming || !root_) return;
    if (options.check_plaquette && !std::isnan(previous.plaquette) &&
        !(std::fabs(previous.plaquette - options.plaquette) <= 1e-10 * std::fabs(options.plaquette)))
      throw InputError("output.resume: the gauge field's plaquette " + std::to_string(options.plaquette) +
                       " differs from " + std::to_string(previous.plaquette) + " in the partial file '" + temp_path_ +
                       "' (the gauge configuration changed); remove it to start again");
    carry_over(temp_path_, previous.solves, final_path_);
  });
  // Every rank reads which solves the rewritten partial file holds (the same file system everywhere).
  agreed_step(own, [&] {
    if (resuming) resumed_ = read_run_state(temp_path_).solves;
  });
  complete_ = static_cast<int>(resumed_.size());
  // A partial file that cannot be created is not removed: another run may be writing it.
  file_.emplace(comm, temp_path_, final_path_, "partial file", resuming, options.mode);
}

CheckpointStore::~CheckpointStore() {
  file_.reset();
  // A partial file with complete solves is kept for a resumed run (the caller says so); otherwise nothing is left.
  if (!committed_ && complete_ == 0 && root_ && !temp_path_.empty()) std::remove(temp_path_.c_str());
}

void CheckpointStore::require_open(const char* what) const {
  if (!file_ || !file_->is_open() || committed_)
    throw RuntimeFailure("HDF5 output '" + final_path_ + "': cannot " + what + ": the file is already " +
                         (committed_ ? "committed" : "closed"));
}

io::h5::File& CheckpointStore::file() {
  require_open("write to the file");
  return *file_;
}

io::h5::FieldIo CheckpointStore::mode() const { return file_ ? file_->mode() : io::h5::FieldIo::Gather; }

std::optional<CompleteSolve> CheckpointStore::resumed(const std::string& name) const {
  for (const CompleteSolve& c : resumed_)
    if (c.name == name) return c;
  return std::nullopt;
}

void CheckpointStore::mark_complete(const std::string& name) {
  require_open("mark a solve complete");
  file_->flush(true);  // the solve's data on the disk first: a write error stops here, before the flag
  file_->verify_stored("/solves/" + name);  // and its sizes re-read: every dataset holds its whole extent
  write_complete_flag(*file_, name);
  file_->flush(true);
  ++complete_;
}

void CheckpointStore::close_after_agreed_failure() {
  try {
    if (file_ && file_->is_open()) file_->close();
  } catch (const std::exception&) {  // agreed on every rank: the destructor then skips nothing collective
  }
}

void CheckpointStore::flush() {
  require_open("flush");
  file_->flush();
}

void CheckpointStore::commit() {
  if (committed_) return;
  require_open("commit");
  file_->close();
  file_->step([&] {
    if (!root_) return;
    std::error_code ec;
    if (!overwrite_ && fs::exists(final_path_, ec)) {
      // Someone created the target while we ran: keep our results in the partial file rather than lose them.
      committed_ = true;
      throw RuntimeFailure("HDF5 output '" + final_path_ + "': the file appeared during the run and output.overwrite " +
                           "is false; the results are left in '" + temp_path_ + "'");
    }
    if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      const int err = errno;
      throw RuntimeFailure("HDF5 output '" + final_path_ + "': cannot rename the partial file '" + temp_path_ +
                           "' to it: " + std::strerror(err));
    }
  });
  committed_ = true;
}

}  // namespace emprism::run
