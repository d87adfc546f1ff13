// hdf5.hpp: INTERNAL header of io/h5 (the only headers that include hdf5.h): owned HDF5 identifiers, HDF5 failures
// as emprism::RuntimeFailure, the file's types (h5py's conventions) and dataspaces.
// Convention: every message reads "HDF5 output '<label>': cannot <what> (<HDF5's most specific message>)", the
// label being the name the user knows (the final output file, not the partial file being written).
// Who may call: io/h5/*.cpp only.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // parallel HDF5's headers include mpi.h; keep its C++ bindings out
#endif
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#if defined(EMPRISM_HAVE_PARALLEL_HDF5) && EMPRISM_HAVE_PARALLEL_HDF5
#if !defined(H5_HAVE_PARALLEL)
#error "EMPRISM_HAVE_PARALLEL_HDF5 is set but hdf5.h is the serial HDF5's: the include path and the library disagree"
#endif
#define EMPRISM_H5_COLLECTIVE 1
#else
#define EMPRISM_H5_COLLECTIVE 0
#endif

namespace emprism::io::h5 {

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "io/h5 stores hid_t in an int64_t");

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hid() { reset(); }
  Hid(Hid&& other) noexcept : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
      closer_ = other.closer_;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  hid_t release() { return std::exchange(id_, -1); }  // the caller closes it
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// The most specific message on HDF5's default error stack (e.g. "No space left on device"), then cleared.
std::string hdf5_detail();
// Throws RuntimeFailure("HDF5 output '<label>': cannot <what> (<detail>)").
[[noreturn]] void fail(const std::string& label, const std::string& what);
Hid checked(hid_t id, Hid::Closer closer, const std::string& label, const std::string& what);
void checked(herr_t rc, const std::string& label, const std::string& what);
// Test hook (tests only): EMPRISM_TEST_FAIL_WRITE="<rank>:<n>" makes the n-th write point (a field write or a flush,
// counted from 1) on that rank (of the file's communicator) fail as a full disk would: RuntimeFailure("HDF5 output
// '<label>': cannot <what> (No space left on device [test hook])"). Nothing when unset.
void test_write_fault(int rank, const std::string& label, const std::string& what);
// Silences HDF5's automatic error printing (errors are reported through the exceptions above).
void quiet_errors();

// The types of the file. Memory and file types differ only where the native type is not the little-endian IEEE /
// two's complement standard type (never on the supported platforms).
Hid vlen_string_type(const std::string& label);                // UTF-8, variable length
Hid bool_type(hid_t base, const std::string& label);           // h5py's bool: enum of int8 {FALSE = 0, TRUE = 1}
Hid complex_type(hid_t real, const std::string& label);        // h5py's complex: packed compound {r, i}
Hid complex_file_type(bool single, const std::string& label);  // {r, i} of IEEE float32 or float64
Hid complex_mem_type(bool single, const std::string& label);   // {r, i} of native float or double
Hid packed_type(hid_t mem, const std::string& label);          // the packed file form of a memory compound

Hid scalar_space(const std::string& label);
Hid simple_space(const std::vector<hsize_t>& dims, const std::string& label);
// "/a" + "b" = "/a/b"; "/" + "b" = "/b".
std::string child_path(const std::string& parent, const std::string& name);

}  // namespace emprism::io::h5
