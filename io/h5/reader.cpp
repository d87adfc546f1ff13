// reader.cpp: reading back and copying objects (see reader.hpp), HDF5 C API.
#include "io/h5/reader.hpp"

#include "io/h5/hdf5.hpp"
#include "kernels/errors.hpp"

namespace emprism::io::h5 {

namespace {

// Every link of an absolute path exists.
bool path_exists(hid_t file, const std::string& object) {
  std::size_t pos = 0;
  while ((pos = object.find('/', pos + 1)) != std::string::npos)
    if (H5Lexists(file, object.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
  return object == "/" || H5Lexists(file, object.c_str(), H5P_DEFAULT) > 0;
}

// Reads a scalar attribute of `obj` if it exists (types converted by HDF5); false when absent or unreadable.
bool read_attr(hid_t obj, const char* name, hid_t mem_type, void* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  Hid attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  return attr.get() >= 0 && H5Aread(attr.get(), mem_type, value) >= 0;
}

}  // namespace

Reader::Reader(const std::string& path) : path_(path) {
  quiet_errors();
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) {
    const std::string detail = hdf5_detail();
    throw RuntimeFailure("cannot read '" + path + "'" + (detail.empty() ? "" : " (" + detail + ")") +
                         ": not a readable HDF5 file");
  }
}

Reader::~Reader() {
  if (file_ >= 0) H5Fclose(file_);
  H5Eclear2(H5E_DEFAULT);
}

bool Reader::exists(const std::string& object) const { return path_exists(file_, object); }

bool Reader::openable(const std::string& object) const {
  Hid o(H5Oopen(file_, object.c_str(), H5P_DEFAULT), H5Oclose);
  H5Eclear2(H5E_DEFAULT);
  return o.get() >= 0;
}

std::optional<std::vector<std::string>> Reader::members(const std::string& group) const {
  Hid g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (g.get() < 0) return std::nullopt;
  std::vector<std::string> names;
  H5Literate(
      g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

std::optional<std::string> Reader::attr_string(const std::string& object, const char* name) const {
  Hid obj(H5Oopen(file_, object.c_str(), H5P_DEFAULT), H5Oclose);
  if (obj.get() < 0 || H5Aexists(obj.get(), name) <= 0) return std::nullopt;
  Hid attr(H5Aopen(obj.get(), name, H5P_DEFAULT), H5Aclose);
  Hid type(H5Aget_type(attr.get()), H5Tclose);
  if (attr.get() < 0 || type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
  if (H5Tis_variable_str(type.get()) <= 0) return std::nullopt;
  Hid mem(H5Tcopy(type.get()), H5Tclose);  // the file's own string type (HDF5 converts no character sets)
  char* text = nullptr;
  if (H5Aread(attr.get(), mem.get(), &text) < 0) return std::nullopt;
  std::string value = text ? text : "";
  Hid space(H5Aget_space(attr.get()), H5Sclose);
  H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &text);
  return value;
}

std::optional<double> Reader::attr_double(const std::string& object, const char* name) const {
  Hid obj(H5Oopen(file_, object.c_str(), H5P_DEFAULT), H5Oclose);
  double v = 0;
  if (obj.get() < 0 || !read_attr(obj.get(), name, H5T_NATIVE_DOUBLE, &v)) return std::nullopt;
  return v;
}

std::optional<std::int8_t> Reader::attr_int8(const std::string& object, const char* name) const {
  Hid obj(H5Oopen(file_, object.c_str(), H5P_DEFAULT), H5Oclose);
  std::int8_t v = 0;
  if (obj.get() < 0 || !read_attr(obj.get(), name, H5T_NATIVE_INT8, &v)) return std::nullopt;
  return v;
}

Copier::Copier(const std::string& source, const std::string& destination, const std::string& label)
    : destination_(destination), label_(label) {
  quiet_errors();
  Hid src = checked(H5Fopen(source.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, label, "open '" + source + "'");
  Hid dst = checked(H5Fcreate(destination.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, label,
                    "create '" + destination + "'");
  Hid lcpl = checked(H5Pcreate(H5P_LINK_CREATE), H5Pclose, label, "create a link property list");
  checked(H5Pset_create_intermediate_group(lcpl.get(), 1), label, "create a link property list");
  src_ = src.release();
  dst_ = dst.release();
  lcpl_ = lcpl.release();
}

Copier::~Copier() {
  if (lcpl_ >= 0) H5Pclose(lcpl_);
  if (dst_ >= 0) H5Fclose(dst_);
  if (src_ >= 0) H5Fclose(src_);
  H5Eclear2(H5E_DEFAULT);
}

bool Copier::source_has(const std::string& object) const { return path_exists(src_, object); }

bool Copier::copy(const std::string& object) {
  const bool ok = H5Ocopy(src_, object.c_str(), dst_, object.c_str(), H5P_DEFAULT, lcpl_) >= 0;
  if (!ok) H5Eclear2(H5E_DEFAULT);
  return ok;
}

void Copier::drop(const std::string& object) {
  if (path_exists(dst_, object)) H5Ldelete(dst_, object.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
}

void Copier::close() {
  const hid_t dst = dst_;
  dst_ = -1;
  checked(H5Fclose(dst), label_, "close '" + destination_ + "'");
}

}  // namespace emprism::io::h5
