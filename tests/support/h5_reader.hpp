// h5_reader.hpp: the one HDF5 reader of the C++ tests (unit tests, end-to-end tests of the program, MPI tests): it
// reads back what the program wrote with the plain HDF5 C API and checks the h5py conventions of the file on the way.
// Every failure (a missing object, an unreadable value, a value whose stored type breaks the convention asked for)
// throws std::runtime_error naming the object, so a test that reads a wrong file fails with that message.
// Conventions checked: attr_string / string_data: variable-length UTF-8 strings; attr_double: float64; attr_ints:
// int32; attr_bool: h5py's bool (enum {FALSE = 0, TRUE = 1} of int8, scalar); complex_data: h5py's complex
// (compound {r, i} of two equal floats, of `real_size` bytes when given).
// Who may call: test code on one process (no MPI).
#pragma once

#include <hdf5.h>

#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace emprism::test {

// Closes any HDF5 identifier (H5Idec_ref) when it goes out of scope.
struct H5Id {
  hid_t id;
  explicit H5Id(hid_t i) : id(i) {}
  ~H5Id() {
    if (id >= 0) H5Idec_ref(id);
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
};

// A variable-length UTF-8 string type (the caller closes it).
hid_t vlen_utf8_type();

class H5Reader {
 public:
  explicit H5Reader(const std::string& path);  // read-only; throws when the file cannot be opened
  ~H5Reader();
  H5Reader(const H5Reader&) = delete;
  H5Reader& operator=(const H5Reader&) = delete;
  hid_t id() const { return file_; }

  // Whether every link along the absolute path exists ("/" exists).
  bool exists(const std::string& path) const;
  bool has_attr(const std::string& obj, const std::string& name) const;
  std::vector<std::string> attributes(const std::string& obj) const;  // names, in name order
  std::vector<std::string> objects() const;                           // every object below "/", in name order

  std::string attr_string(const std::string& obj, const std::string& name) const;
  double attr_double(const std::string& obj, const std::string& name) const;
  std::vector<int> attr_ints(const std::string& obj, const std::string& name) const;  // any shape, row-major
  int attr_int(const std::string& obj, const std::string& name) const;                // one int32
  int attr_bool(const std::string& obj, const std::string& name) const;               // the raw int8
  H5T_class_t attr_class(const std::string& obj, const std::string& name) const;
  std::size_t attr_size(const std::string& obj, const std::string& name) const;

  std::vector<hsize_t> dims(const std::string& path) const;
  H5T_class_t dataset_class(const std::string& path) const;
  // Member names and classes of a compound dataset, in order.
  std::vector<std::pair<std::string, H5T_class_t>> compound_fields(const std::string& path) const;
  // Throws unless the dataset is h5py's complex of two floats of real_size bytes (4 or 8).
  void expect_complex(const std::string& path, std::size_t real_size) const;
  std::vector<std::complex<double>> complex_data(const std::string& path) const;
  std::vector<double> double_data(const std::string& path) const;   // float64 only
  std::string string_data(const std::string& path) const;           // a scalar variable-length UTF-8 string
  std::vector<unsigned char> bytes(const std::string& path) const;  // as stored (read with the file's type)

  // Columns of a table (a one-dimensional compound dataset), converted to the column's native type.
  std::vector<std::string> text_column(const std::string& path, const std::string& column) const;
  std::vector<std::int64_t> int_column(const std::string& path, const std::string& column) const;
  std::vector<double> double_column(const std::string& path, const std::string& column) const;
  std::vector<std::string> fixed_text_column(const std::string& path, const std::string& column) const;  // <= 32 B

 private:
  hid_t open_dataset(const std::string& path) const;  // throws when missing
  hid_t open_attribute(const std::string& obj, const std::string& name) const;
  template <typename T>
  std::vector<T> column(const std::string& path, const std::string& column, hid_t mem_type) const;

  std::string path_;
  hid_t file_ = -1;
};

}  // namespace emprism::test
