// hdf5.cpp: owned identifiers, errors, types and dataspaces of hdf5.hpp (HDF5 C API).
#include "io/h5/hdf5.hpp"

#include <cstdio>
#include <cstdlib>

#include "kernels/errors.hpp"

namespace emprism::io::h5 {

std::string hdf5_detail() {
  std::string detail;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* err, void* data) -> herr_t {
        if (n == 0 && err != nullptr && err->desc != nullptr) *static_cast<std::string*>(data) = err->desc;
        return 0;
      },
      &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail;
}

void fail(const std::string& label, const std::string& what) {
  std::string msg = "HDF5 output '" + label + "': cannot " + what;
  const std::string detail = hdf5_detail();
  if (!detail.empty()) msg += " (" + detail + ")";
  throw RuntimeFailure(msg);
}

Hid checked(hid_t id, Hid::Closer closer, const std::string& label, const std::string& what) {
  if (id < 0) fail(label, what);
  return Hid(id, closer);
}

void checked(herr_t rc, const std::string& label, const std::string& what) {
  if (rc < 0) fail(label, what);
}

void test_write_fault(int rank, const std::string& label, const std::string& what) {
  static const char* spec = std::getenv("EMPRISM_TEST_FAIL_WRITE");
  if (spec == nullptr || *spec == '\0') return;
  static int points = 0;
  int fail_rank = -1, fail_at = 0;
  if (std::sscanf(spec, "%d:%d", &fail_rank, &fail_at) != 2 || rank != fail_rank) return;
  if (++points == fail_at)
    throw RuntimeFailure("HDF5 output '" + label + "': cannot " + what + " (No space left on device [test hook])");
}

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Hid vlen_string_type(const std::string& label) {
  Hid t = checked(H5Tcopy(H5T_C_S1), H5Tclose, label, "create a string type");
  checked(H5Tset_size(t.get(), H5T_VARIABLE), label, "create a string type");
  checked(H5Tset_cset(t.get(), H5T_CSET_UTF8), label, "create a string type");
  return t;
}

Hid bool_type(hid_t base, const std::string& label) {
  Hid t = checked(H5Tenum_create(base), H5Tclose, label, "create the bool enum type");
  const std::int8_t no = 0, yes = 1;
  checked(H5Tenum_insert(t.get(), "FALSE", &no), label, "create the bool enum type");
  checked(H5Tenum_insert(t.get(), "TRUE", &yes), label, "create the bool enum type");
  return t;
}

Hid complex_type(hid_t real, const std::string& label) {
  const size_t size = H5Tget_size(real);
  if (size == 0) fail(label, "create the complex type");
  Hid t = checked(H5Tcreate(H5T_COMPOUND, 2 * size), H5Tclose, label, "create the complex type");
  checked(H5Tinsert(t.get(), "r", 0, real), label, "create the complex type");
  checked(H5Tinsert(t.get(), "i", size, real), label, "create the complex type");
  return t;
}

Hid complex_file_type(bool single, const std::string& label) {
  return complex_type(single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, label);
}

Hid complex_mem_type(bool single, const std::string& label) {
  return complex_type(single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, label);
}

Hid packed_type(hid_t mem, const std::string& label) {
  Hid t = checked(H5Tcopy(mem), H5Tclose, label, "copy a compound type");
  checked(H5Tpack(t.get()), label, "pack a compound type");
  return t;
}

Hid scalar_space(const std::string& label) {
  return checked(H5Screate(H5S_SCALAR), H5Sclose, label, "create a dataspace");
}

Hid simple_space(const std::vector<hsize_t>& dims, const std::string& label) {
  return checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, label,
                 "create a dataspace");
}

std::string child_path(const std::string& parent, const std::string& name) {
  return (parent == "/" ? "" : parent) + "/" + name;
}

}  // namespace emprism::io::h5
