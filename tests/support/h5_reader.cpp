// h5_reader.cpp: the tests' HDF5 reader (see h5_reader.hpp).
#include "tests/support/h5_reader.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace emprism::test {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

void reclaim(hid_t type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
#endif
}

bool is_h5py_bool(hid_t t) {
  if (H5Tget_class(t) != H5T_ENUM || H5Tget_nmembers(t) != 2) return false;
  H5Id base(H5Tget_super(t));
  if (H5Tget_size(base.id) != 1 || H5Tget_sign(base.id) != H5T_SGN_2) return false;
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(t, i);
    std::int8_t value = -1;
    H5Tget_member_value(t, i, &value);
    const bool ok =
        name && ((std::strcmp(name, "FALSE") == 0 && value == 0) || (std::strcmp(name, "TRUE") == 0 && value == 1));
    H5free_memory(name);
    if (!ok) return false;
  }
  return true;
}

bool is_vlen_utf8(hid_t t) {
  return H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 && H5Tget_cset(t) == H5T_CSET_UTF8;
}

}  // namespace

hid_t vlen_utf8_type() {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

H5Reader::H5Reader(const std::string& path) : path_(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) fail("cannot open " + path + " as an HDF5 file");
}

H5Reader::~H5Reader() {
  if (file_ >= 0) H5Fclose(file_);
}

bool H5Reader::exists(const std::string& path) const {
  if (path == "/") return true;
  for (std::size_t pos = path.find('/', 1);; pos = path.find('/', pos + 1)) {
    if (H5Lexists(file_, path.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

bool H5Reader::has_attr(const std::string& obj, const std::string& name) const {
  return exists(obj) && H5Aexists_by_name(file_, obj.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> H5Reader::attributes(const std::string& obj) const {
  H5Id o(H5Oopen(file_, obj.c_str(), H5P_DEFAULT));
  if (o.id < 0) fail("no object " + obj);
  std::vector<std::string> out;
  hsize_t idx = 0;
  H5Aiterate2(
      o.id, H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &out);
  return out;
}

std::vector<std::string> H5Reader::objects() const {
  std::vector<std::string> out;
  H5Lvisit(
      file_, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(std::string("/") + name);
        return 0;
      },
      &out);
  return out;
}

hid_t H5Reader::open_attribute(const std::string& obj, const std::string& name) const {
  if (!has_attr(obj, name)) fail("no attribute " + obj + "@" + name + " in " + path_);
  return H5Aopen_by_name(file_, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
}

std::string H5Reader::attr_string(const std::string& obj, const std::string& name) const {
  H5Id a(open_attribute(obj, name));
  H5Id ftype(H5Aget_type(a.id));
  if (!is_vlen_utf8(ftype.id)) fail(obj + "@" + name + " is not a variable-length UTF-8 string");
  H5Id mtype(vlen_utf8_type());
  char* p = nullptr;
  if (H5Aread(a.id, mtype.id, &p) < 0) fail("cannot read " + obj + "@" + name);
  const std::string s = p ? p : "";
  H5free_memory(p);
  return s;
}

H5T_class_t H5Reader::attr_class(const std::string& obj, const std::string& name) const {
  H5Id a(open_attribute(obj, name));
  H5Id t(H5Aget_type(a.id));
  return H5Tget_class(t.id);
}

std::size_t H5Reader::attr_size(const std::string& obj, const std::string& name) const {
  H5Id a(open_attribute(obj, name));
  H5Id t(H5Aget_type(a.id));
  return H5Tget_size(t.id);
}

double H5Reader::attr_double(const std::string& obj, const std::string& name) const {
  if (attr_class(obj, name) != H5T_FLOAT || attr_size(obj, name) != 8) fail(obj + "@" + name + " is not a float64");
  H5Id a(open_attribute(obj, name));
  H5Id space(H5Aget_space(a.id));
  if (H5Sget_simple_extent_npoints(space.id) != 1) fail(obj + "@" + name + " is not a scalar");
  double v = 0;
  if (H5Aread(a.id, H5T_NATIVE_DOUBLE, &v) < 0) fail("cannot read " + obj + "@" + name);
  return v;
}

std::vector<int> H5Reader::attr_ints(const std::string& obj, const std::string& name) const {
  if (attr_class(obj, name) != H5T_INTEGER || attr_size(obj, name) != 4) fail(obj + "@" + name + " is not int32");
  H5Id a(open_attribute(obj, name));
  H5Id space(H5Aget_space(a.id));
  std::vector<int> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
  if (H5Aread(a.id, H5T_NATIVE_INT, v.data()) < 0) fail("cannot read " + obj + "@" + name);
  return v;
}

int H5Reader::attr_int(const std::string& obj, const std::string& name) const {
  const std::vector<int> v = attr_ints(obj, name);
  if (v.size() != 1) fail(obj + "@" + name + " is not a single integer");
  return v[0];
}

int H5Reader::attr_bool(const std::string& obj, const std::string& name) const {
  H5Id a(open_attribute(obj, name));
  H5Id t(H5Aget_type(a.id));
  if (!is_h5py_bool(t.id)) fail(obj + "@" + name + " is not h5py's bool (enum {FALSE = 0, TRUE = 1} of int8)");
  H5Id space(H5Aget_space(a.id));
  if (H5Sget_simple_extent_type(space.id) != H5S_SCALAR) fail(obj + "@" + name + " is not a scalar");
  std::int8_t v = -1;
  if (H5Aread(a.id, H5T_NATIVE_INT8, &v) < 0) fail("cannot read " + obj + "@" + name);
  return v;
}

hid_t H5Reader::open_dataset(const std::string& path) const {
  if (!exists(path)) fail("no dataset " + path + " in " + path_);
  const hid_t d = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
  if (d < 0) fail(path + " is not a dataset");
  return d;
}

std::vector<hsize_t> H5Reader::dims(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id space(H5Dget_space(d.id));
  std::vector<hsize_t> out(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space.id))));
  H5Sget_simple_extent_dims(space.id, out.data(), nullptr);
  return out;
}

H5T_class_t H5Reader::dataset_class(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id t(H5Dget_type(d.id));
  return H5Tget_class(t.id);
}

std::vector<std::pair<std::string, H5T_class_t>> H5Reader::compound_fields(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id t(H5Dget_type(d.id));
  if (H5Tget_class(t.id) != H5T_COMPOUND) fail(path + " is not a compound dataset");
  std::vector<std::pair<std::string, H5T_class_t>> out;
  for (int m = 0; m < H5Tget_nmembers(t.id); ++m) {
    char* name = H5Tget_member_name(t.id, static_cast<unsigned>(m));
    out.emplace_back(name, H5Tget_member_class(t.id, static_cast<unsigned>(m)));
    H5free_memory(name);
  }
  return out;
}

void H5Reader::expect_complex(const std::string& path, std::size_t real_size) const {
  H5Id d(open_dataset(path));
  H5Id t(H5Dget_type(d.id));
  const std::string what = path + " is not h5py's complex of " + std::to_string(real_size) + "-byte floats";
  if (H5Tget_class(t.id) != H5T_COMPOUND || H5Tget_nmembers(t.id) != 2 || H5Tget_size(t.id) != 2 * real_size)
    fail(what);
  const char* expected[] = {"r", "i"};
  for (unsigned m = 0; m < 2; ++m) {
    char* name = H5Tget_member_name(t.id, m);
    const bool named = name && std::strcmp(name, expected[m]) == 0;
    H5free_memory(name);
    H5Id mt(H5Tget_member_type(t.id, m));
    if (!named || H5Tget_member_offset(t.id, m) != m * real_size || H5Tget_class(mt.id) != H5T_FLOAT ||
        H5Tget_size(mt.id) != real_size)
      fail(what);
  }
}

std::vector<std::complex<double>> H5Reader::complex_data(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id space(H5Dget_space(d.id));
  std::vector<std::complex<double>> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
  H5Id mt(H5Tcreate(H5T_COMPOUND, sizeof(std::complex<double>)));
  H5Tinsert(mt.id, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  if (!v.empty() && H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail("cannot read " + path + " as complex numbers");
  return v;
}

std::vector<double> H5Reader::double_data(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id t(H5Dget_type(d.id));
  if (H5Tget_class(t.id) != H5T_FLOAT || H5Tget_size(t.id) != 8) fail(path + " is not float64");
  H5Id space(H5Dget_space(d.id));
  std::vector<double> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
  if (!v.empty() && H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail("cannot read " + path);
  return v;
}

std::string H5Reader::string_data(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id ftype(H5Dget_type(d.id));
  if (!is_vlen_utf8(ftype.id)) fail(path + " is not a variable-length UTF-8 string");
  H5Id space(H5Dget_space(d.id));
  if (H5Sget_simple_extent_type(space.id) != H5S_SCALAR) fail(path + " is not a scalar");
  H5Id t(vlen_utf8_type());
  char* p = nullptr;
  if (H5Dread(d.id, t.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) < 0) fail("cannot read " + path + " as a string");
  const std::string value = p ? p : "";
  reclaim(t.id, space.id, &p);
  return value;
}

std::vector<unsigned char> H5Reader::bytes(const std::string& path) const {
  H5Id d(open_dataset(path));
  H5Id t(H5Dget_type(d.id));
  H5Id space(H5Dget_space(d.id));
  std::vector<unsigned char> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)) * H5Tget_size(t.id));
  if (!out.empty() && H5Dread(d.id, t.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) fail("cannot read " + path);
  return out;
}

template <typename T>
std::vector<T> H5Reader::column(const std::string& path, const std::string& name, hid_t mem_type) const {
  H5Id d(open_dataset(path));
  H5Id space(H5Dget_space(d.id));
  std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
  H5Id mt(H5Tcreate(H5T_COMPOUND, sizeof(T)));
  H5Tinsert(mt.id, name.c_str(), 0, mem_type);
  if (!out.empty() && H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail("cannot read column " + name + " of " + path);
  return out;
}

std::vector<std::string> H5Reader::text_column(const std::string& path, const std::string& name) const {
  H5Id text(vlen_utf8_type());
  std::vector<char*> raw = column<char*>(path, name, text.id);
  std::vector<std::string> out;
  for (char* p : raw) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);
  }
  return out;
}

std::vector<std::int64_t> H5Reader::int_column(const std::string& path, const std::string& name) const {
  return column<std::int64_t>(path, name, H5T_NATIVE_INT64);
}

std::vector<double> H5Reader::double_column(const std::string& path, const std::string& name) const {
  return column<double>(path, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::string> H5Reader::fixed_text_column(const std::string& path, const std::string& name) const {
  constexpr std::size_t kWidth = 32;
  H5Id d(open_dataset(path));
  H5Id space(H5Dget_space(d.id));
  H5Id str(H5Tcopy(H5T_C_S1));
  H5Tset_size(str.id, kWidth);
  H5Id mem(H5Tcreate(H5T_COMPOUND, kWidth));
  H5Tinsert(mem.id, name.c_str(), 0, str.id);
  std::vector<char> raw(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)) * kWidth, '\0');
  if (!raw.empty() && H5Dread(d.id, mem.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0)
    fail("cannot read column " + name + " of " + path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < raw.size(); i += kWidth)
    out.emplace_back(raw.data() + i, strnlen(raw.data() + i, kWidth));
  return out;
}

}  // namespace emprism::test
