// reader.hpp: reading an HDF5 file back (serial HDF5, read-only) and copying objects from one file into a fresh one:
// what a run needs to decide about an existing output or partial file and to carry its complete parts over.
// Who may call: any one rank (local; no MPI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace emprism::io::h5 {

class Reader {
 public:
  // Opens path read-only. Throws RuntimeFailure("cannot read '<path>' (<HDF5's reason>): not a readable HDF5 file").
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  // Whether the object at an absolute path exists (every group on the way too).
  bool exists(const std::string& object) const;
  // Whether the object can be opened (a group or dataset damaged by a crash cannot).
  bool openable(const std::string& object) const;
  // The names of a group's members in name order; nullopt when the group cannot be opened.
  std::optional<std::vector<std::string>> members(const std::string& group) const;
  // A scalar attribute of an object, converted by HDF5 (bools are int8 0/1); nullopt when the object or the
  // attribute is absent or unreadable. attr_string: variable-length strings only.
  std::optional<std::string> attr_string(const std::string& object, const char* name) const;
  std::optional<double> attr_double(const std::string& object, const char* name) const;
  std::optional<std::int8_t> attr_int8(const std::string& object, const char* name) const;

 private:
  std::string path_;
  std::int64_t file_ = -1;  // hid_t
};

// Copies objects of `source` into the new file `destination` (created, truncating it). `label` names the files in
// messages ("HDF5 output '<label>': cannot ..."). Failures to open or create the files throw RuntimeFailure.
class Copier {
 public:
  Copier(const std::string& source, const std::string& destination, const std::string& label);
  ~Copier();
  Copier(const Copier&) = delete;
  Copier& operator=(const Copier&) = delete;

  bool source_has(const std::string& object) const;  // as Reader::exists
  // Copies the object at an absolute path (with what it holds), creating the groups on the way; false when HDF5
  // cannot copy it (e.g. damaged), with HDF5's error cleared.
  bool copy(const std::string& object);
  // Removes the object from the destination if it is there (errors ignored).
  void drop(const std::string& object);
  // Closes the destination (RuntimeFailure when that fails); the destructor closes both quietly.
  void close();

 private:
  std::string destination_, label_;
  std::int64_t src_ = -1, dst_ = -1, lcpl_ = -1;  // hid_t
};

}  // namespace emprism::io::h5
