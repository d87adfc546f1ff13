// file.hpp: an HDF5 file written from many ranks (HDF5 C API underneath), in one of two modes (FieldIo):
//  - Collective: every rank opens the file through MPI-IO and takes part in every HDF5 call (metadata is
//    collective: attribute values must be identical on every rank); fields are written with one collective H5Dwrite
//    of each rank's hyperslab (io/h5/field_writer.hpp). Needs HDF5 built with MPI (collective_available()). HDF5 1.10
//    cannot write variable-length data through MPI-IO: such datasets (write_string, tables with text columns) are
//    created collectively and filled by rank 0 after close(), when the file is reopened serially.
//  - Gather: only rank 0 opens the file (serial HDF5); the other ranks send their field data to rank 0.
//  - Auto: Collective when available and there is more than one rank, otherwise Gather.
// Objects (Object: a group or a dataset) exist on the ranks that hold the file (holds_file()); elsewhere they are
// empty and their calls do nothing, so the same code runs on every rank. Attributes and small datasets hold rank 0's
// values. Conventions are h5py's: complex = compound {r, i}, bool = enum {FALSE = 0, TRUE = 1} of int8, strings are
// variable-length UTF-8.
// Errors: HDF5 failures become RuntimeFailure("HDF5 output '<label>': cannot <what> (<detail>)"). step() runs a
// piece of work on every rank and agrees on its outcome (comm/collectives.hpp agreed_step): when it failed on any
// rank, every rank throws the same exception, so no rank is left waiting in a later collective call.
// Who may call: File's members are COLLECTIVE over its communicator (all ranks, same order); Object's members are
// called by every rank inside a step (they act where holds_file()).
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/communicator.hpp"

namespace emprism::io::h5 {

enum class FieldIo { Auto, Collective, Gather };

// True when this build links HDF5 built with MPI, so FieldIo::Collective can be used.
bool collective_available();

class File;
class FieldWriter;

// A column of a table (a one-dimensional dataset of compound rows): its name, type and offset in the row struct.
struct Column {
  // Text: a const char* in the row, variable-length UTF-8 in the file; FixedText: `size` chars in the row and the
  // file (null-terminated, h5py reads bytes).
  enum class Type { Int32, Int64, Float64, Text, FixedText };
  const char* name;
  Type type;
  std::size_t offset;
  std::size_t size = 0;  // FixedText only
};

// A group or dataset of a File (empty on ranks that do not hold the file). Move-only; closes its object.
class Object {
 public:
  Object() = default;
  ~Object();
  Object(Object&& other) noexcept;
  Object& operator=(Object&& other) noexcept;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  bool valid() const { return id_ >= 0; }
  const std::string& path() const { return path_; }
  std::int64_t id() const { return id_; }  // hid_t

  // Attributes (the same value on every rank holding the file).
  void attr(const char* name, const std::string& value);
  void attr(const char* name, double value);
  void attr(const char* name, int value);
  void attr(const char* name, const std::array<int, 4>& value);  // int32 of shape {4}
  void attr_bool(const char* name, bool value);
  void attr_ints(const char* name, const std::vector<std::uint64_t>& dims, const std::vector<std::int32_t>& values);
  void attr_strings(const char* name, const std::vector<std::string>& values);  // one-dimensional

  // Child groups: create (a child that exists already is a RuntimeFailure "'<path>' is written twice"), open, or
  // open it when it exists and create it otherwise.
  Object create_group(const std::string& name);
  Object open_group(const std::string& name);
  Object open_or_create_group(const std::string& name);

  // Datasets holding rank 0's values, of the given shape (empty dims: a scalar): float64, int32, complex128.
  Object write(const std::string& name, const std::vector<std::uint64_t>& dims, const double* values);
  Object write(const std::string& name, const std::vector<std::uint64_t>& dims, const std::int32_t* values);
  Object write(const std::string& name, const std::vector<std::uint64_t>& dims, const std::complex<double>* values);
  Object write(const std::string& name, const std::vector<double>& values) {
    return write(name, {values.size()}, values.data());
  }
  // A scalar variable-length UTF-8 string dataset (deferred to close() in Collective mode).
  void write_string(const std::string& name, const std::string& text);
  // A one-dimensional table of `count` compound rows of `row_bytes` bytes (rank 0's rows; the other ranks pass the
  // same count, their rows are not read). Deferred to close() in Collective mode when a column is Text (rank 0's
  // rows and texts are copied).
  void write_table(const std::string& name, const std::vector<Column>& columns, std::size_t row_bytes, const void* rows,
                   std::size_t count);

 private:
  friend class File;
  friend class FieldWriter;
  Object(File* file, std::int64_t id, std::string path) : file_(file), id_(id), path_(std::move(path)) {}
  // An empty dataset of the given file type (hid_t) and shape, filled by FieldWriter.
  Object create_field_dataset(const std::string& name, std::int64_t file_type, const std::vector<std::uint64_t>& dims);
  void close();

  File* file_ = nullptr;
  std::int64_t id_ = -1;
  std::string path_;
};

class File {
 public:
  // Creates `path` (truncating it) or, with open_existing, opens it for writing. `label` names the file in messages
  // (the one the user knows), `role` describes `path` in them ("partial file": "cannot create the partial file
  // '<path>'"). comm is duplicated for the file's own messages; MPI must be initialised. Collective; errors agreed.
  // mode Collective without collective_available(): InputError on every rank.
  File(const Communicator& comm, const std::string& path, const std::string& label, const std::string& role,
       bool open_existing, FieldIo mode);
  // Not closed: closes the file (skipping collective HDF5 calls while an exception that not every rank shares is
  // unwinding: the caller then ends the job).
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  FieldIo mode() const { return mode_; }  // Collective or Gather, never Auto
  bool holds_file() const { return mode_ == FieldIo::Collective || comm_.rank() == 0; }
  bool is_root() const { return comm_.rank() == 0; }
  Communicator& comm() { return comm_; }
  const std::string& label() const { return label_; }
  const std::string& path() const { return path_; }
  bool is_open() const { return open_; }
  // True once a step failed on some rank and every rank threw (collective clean-up is then safe).
  bool failed_together() const { return failed_together_; }

  // Runs body on this rank, then agrees with every rank; on failure every rank throws the first failing rank's
  // exception (its rank named when it is not 0).
  template <typename Body>
  void step(Body&& body) {
    try {
      agreed_step(comm_, body, true, "HDF5 output '" + label_ + "': unknown exception");
    } catch (...) {
      failed_together_ = true;
      throw;
    }
  }

  Object root();  // "/" (empty where !holds_file())
  // Opens an existing object by its absolute path (where holds_file()).
  Object open(const std::string& path);
  // Collective step: HDF5's flush; with durable, rank 0 also fsyncs the file (its data is then on the disk, or the
  // failure is reported on every rank).
  void flush(bool durable = false);
  // Collective step: re-reads the sizes of every dataset under the group `path` and fails (on every rank) when one
  // has less storage than its extent needs (a write that did not reach the file). Variable-length data is skipped.
  void verify_stored(const std::string& path);
  // Closes the file on every rank, then rank 0 writes the deferred variable-length data (Collective mode) into the
  // file reopened serially. Collective; errors agreed. A second close() does nothing.
  void close();

 private:
  friend class Object;
  // Writes rank 0's `count` elements at data as the whole dataset (Gather: rank 0 only; Collective: every rank,
  // the others selecting nothing).
  void write_whole(std::int64_t dset, const std::string& path, std::int64_t mem_type, std::uint64_t count,
                   const void* data);
  void defer(std::function<void(std::int64_t file)> write) { deferred_.push_back(std::move(write)); }
  void close_quietly();

  Communicator comm_;
  std::string path_, label_, role_;
  FieldIo mode_ = FieldIo::Gather;
  std::int64_t file_ = -1;  // hid_t; valid where holds_file()
  bool open_ = false;
  bool failed_together_ = false;
  std::vector<std::function<void(std::int64_t)>> deferred_;  // rank 0, Collective mode: run by close()
};

}  // namespace emprism::io::h5
