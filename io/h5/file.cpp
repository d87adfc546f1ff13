// file.cpp: the HDF5 file written from many ranks (see file.hpp): opening through MPI-IO or serially, objects,
// attributes, small datasets and tables, the deferred variable-length writes of Collective mode, closing.
#include "io/h5/file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/h5/hdf5.hpp"
#include "kernels/errors.hpp"

namespace emprism::io::h5 {

bool collective_available() { return EMPRISM_H5_COLLECTIVE != 0; }

namespace {

FieldIo resolve_mode(FieldIo requested, int ranks) {
  const bool available = collective_available();
  if (requested == FieldIo::Collective && !available)
    throw InputError("collective HDF5 output needs HDF5 built with MPI (this build uses serial HDF5)");
  if (requested == FieldIo::Auto) return available && ranks > 1 ? FieldIo::Collective : FieldIo::Gather;
  return requested;
}

void write_attribute(hid_t obj, const std::string& obj_path, const char* name, hid_t file_type, hid_t mem_type,
                     hid_t space, const void* data, const std::string& label) {
  const std::string what = std::string("write attribute '") + name + "' of '" + obj_path + "'";
  Hid attr = checked(H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, label, what);
  checked(H5Awrite(attr.get(), mem_type, data), label, what);
}

Hid create_dataset(hid_t loc, const std::string& path, hid_t file_type, const std::vector<hsize_t>& dims,
                   const std::string& label) {
  Hid space = dims.empty() ? scalar_space(label) : simple_space(dims, label);
  const std::string name = path.substr(path.rfind('/') + 1);
  return checked(H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                 label, "create dataset '" + path + "'");
}

std::vector<hsize_t> hdims(const std::vector<std::uint64_t>& dims) { return {dims.begin(), dims.end()}; }

// The memory compound type of a table's rows.
Hid row_type(const std::vector<Column>& columns, std::size_t row_bytes, const std::string& label,
             const std::string& what) {
  Hid text = vlen_string_type(label);
  Hid t = checked(H5Tcreate(H5T_COMPOUND, row_bytes), H5Tclose, label, what);
  for (const Column& c : columns) {
    Hid fixed;
    hid_t type = H5T_NATIVE_DOUBLE;
    if (c.type == Column::Type::Int32) type = H5T_NATIVE_INT32;
    if (c.type == Column::Type::Int64) type = H5T_NATIVE_INT64;
    if (c.type == Column::Type::Text) type = text.get();
    if (c.type == Column::Type::FixedText) {
      fixed = checked(H5Tcopy(H5T_C_S1), H5Tclose, label, what);
      checked(H5Tset_size(fixed.get(), c.size), label, what);
      checked(H5Tset_strpad(fixed.get(), H5T_STR_NULLTERM), label, what);
      type = fixed.get();
    }
    checked(H5Tinsert(t.get(), c.name, c.offset, type), label, what);
  }
  return t;
}

}  // namespace

// ---- Object

Object::~Object() { close(); }

Object::Object(Object&& other) noexcept
    : file_(other.file_), id_(std::exchange(other.id_, -1)), path_(std::move(other.path_)) {}

Object& Object::operator=(Object&& other) noexcept {
  if (this != &other) {
    close();
    file_ = other.file_;
    id_ = std::exchange(other.id_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Object::close() {
  if (id_ >= 0) H5Oclose(id_);
  id_ = -1;
}

void Object::attr(const char* name, const std::string& value) {
  if (!valid()) return;
  Hid type = vlen_string_type(file_->label_);
  Hid space = scalar_space(file_->label_);
  const char* p = value.c_str();
  write_attribute(id_, path_, name, type.get(), type.get(), space.get(), &p, file_->label_);
}

void Object::attr(const char* name, double value) {
  if (!valid()) return;
  Hid space = scalar_space(file_->label_);
  write_attribute(id_, path_, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), &value, file_->label_);
}

void Object::attr(const char* name, int value) {
  if (!valid()) return;
  Hid space = scalar_space(file_->label_);
  const std::int32_t v = value;
  write_attribute(id_, path_, name, H5T_STD_I32LE, H5T_NATIVE_INT32, space.get(), &v, file_->label_);
}

void Object::attr(const char* name, const std::array<int, 4>& value) {
  attr_ints(name, {4}, {value[0], value[1], value[2], value[3]});
}

void Object::attr_bool(const char* name, bool value) {
  if (!valid()) return;
  Hid file_type = bool_type(H5T_STD_I8LE, file_->label_);
  Hid mem_type = bool_type(H5T_NATIVE_INT8, file_->label_);
  Hid space = scalar_space(file_->label_);
  const std::int8_t v = value ? 1 : 0;
  write_attribute(id_, path_, name, file_type.get(), mem_type.get(), space.get(), &v, file_->label_);
}

void Object::attr_ints(const char* name, const std::vector<std::uint64_t>& dims,
                       const std::vector<std::int32_t>& values) {
  if (!valid()) return;
  Hid space = simple_space(hdims(dims), file_->label_);
  write_attribute(id_, path_, name, H5T_STD_I32LE, H5T_NATIVE_INT32, space.get(), values.data(), file_->label_);
}

void Object::attr_strings(const char* name, const std::vector<std::string>& values) {
  if (!valid()) return;
  Hid type = vlen_string_type(file_->label_);
  Hid space = simple_space({values.size()}, file_->label_);
  std::vector<const char*> p;
  for (const std::string& v : values) p.push_back(v.c_str());
  write_attribute(id_, path_, name, type.get(), type.get(), space.get(), p.data(), file_->label_);
}

Object Object::create_group(const std::string& name) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  const std::string& label = file_->label_;
  const htri_t exists = H5Lexists(id_, name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail(label, "look up '" + path + "'");
  if (exists > 0) throw RuntimeFailure("HDF5 output '" + label + "': '" + path + "' is written twice");
  Hid g = checked(H5Gcreate2(id_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, label,
                  "create group '" + path + "'");
  return Object(file_, g.release(), path);
}

Object Object::open_group(const std::string& name) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  Hid g = checked(H5Gopen2(id_, name.c_str(), H5P_DEFAULT), H5Gclose, file_->label_, "open group '" + path + "'");
  return Object(file_, g.release(), path);
}

Object Object::open_or_create_group(const std::string& name) {
  if (!valid()) return Object();
  const htri_t exists = H5Lexists(id_, name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail(file_->label_, "look up group '" + child_path(path_, name) + "'");
  if (exists > 0) return open_group(name);
  const std::string path = child_path(path_, name);
  Hid g = checked(H5Gcreate2(id_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, file_->label_,
                  "create group '" + path + "'");
  return Object(file_, g.release(), path);
}

Object Object::write(const std::string& name, const std::vector<std::uint64_t>& dims, const double* values) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  Hid d = create_dataset(id_, path, H5T_IEEE_F64LE, hdims(dims), file_->label_);
  std::uint64_t count = 1;
  for (std::uint64_t n : dims) count *= n;
  file_->write_whole(d.get(), path, H5T_NATIVE_DOUBLE, count, values);
  return Object(file_, d.release(), path);
}

Object Object::write(const std::string& name, const std::vector<std::uint64_t>& dims, const std::int32_t* values) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  Hid d = create_dataset(id_, path, H5T_STD_I32LE, hdims(dims), file_->label_);
  std::uint64_t count = 1;
  for (std::uint64_t n : dims) count *= n;
  file_->write_whole(d.get(), path, H5T_NATIVE_INT32, count, values);
  return Object(file_, d.release(), path);
}

Object Object::write(const std::string& name, const std::vector<std::uint64_t>& dims,
                     const std::complex<double>* values) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  Hid ftype = complex_file_type(false, file_->label_);
  Hid mtype = complex_mem_type(false, file_->label_);
  Hid d = create_dataset(id_, path, ftype.get(), hdims(dims), file_->label_);
  std::uint64_t count = 1;
  for (std::uint64_t n : dims) count *= n;
  file_->write_whole(d.get(), path, mtype.get(), count, values);
  return Object(file_, d.release(), path);
}

Object Object::create_field_dataset(const std::string& name, std::int64_t file_type,
                                    const std::vector<std::uint64_t>& dims) {
  if (!valid()) return Object();
  const std::string path = child_path(path_, name);
  Hid d = create_dataset(id_, path, file_type, hdims(dims), file_->label_);
  return Object(file_, d.release(), path);
}

void Object::write_string(const std::string& name, const std::string& text) {
  if (!valid()) return;
  const std::string path = child_path(path_, name);
  const std::string& label = file_->label_;
  Hid type = vlen_string_type(label);
  Hid d = create_dataset(id_, path, type.get(), {}, label);
  if (file_->mode_ == FieldIo::Collective) {  // MPI-IO cannot write variable-length data: close() does
    if (file_->is_root()) {
      file_->defer([path, text, label](std::int64_t file) {
        Hid t = vlen_string_type(label);
        Hid ds = checked(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, label, "open dataset '" + path + "'");
        const char* p = text.c_str();
        checked(H5Dwrite(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), label, "write dataset '" + path + "'");
      });
    }
    return;
  }
  const char* p = text.c_str();
  file_->write_whole(d.get(), path, type.get(), 1, &p);
}

void Object::write_table(const std::string& name, const std::vector<Column>& columns, std::size_t row_bytes,
                         const void* rows, std::size_t count) {
  if (!valid()) return;
  const std::string path = child_path(path_, name);
  const std::string& label = file_->label_;
  const std::string what = "create the " + path + " row type";
  Hid mem = row_type(columns, row_bytes, label, what);
  Hid ftype = packed_type(mem.get(), label);
  bool text = false;
  for (const Column& c : columns) text = text || c.type == Column::Type::Text;
  Hid d = create_dataset(id_, path, ftype.get(), {count}, label);
  if (!(text && file_->mode_ == FieldIo::Collective)) {
    file_->write_whole(d.get(), path, mem.get(), count, rows);
    return;
  }
  if (!file_->is_root() || count == 0) return;  // close() writes rank 0's rows, texts copied
  auto texts = std::make_shared<std::vector<std::string>>();
  std::vector<unsigned char> bytes(static_cast<const unsigned char*>(rows),
                                   static_cast<const unsigned char*>(rows) + count * row_bytes);
  for (std::size_t r = 0; r < count; ++r)
    for (const Column& c : columns)
      if (c.type == Column::Type::Text) {
        const char* s = nullptr;
        std::memcpy(&s, bytes.data() + r * row_bytes + c.offset, sizeof s);
        texts->push_back(s ? s : "");
      }
  file_->defer([=](std::int64_t file) mutable {
    std::size_t k = 0;
    for (std::size_t r = 0; r < count; ++r)
      for (const Column& c : columns)
        if (c.type == Column::Type::Text) {
          const char* s = (*texts)[k++].c_str();
          std::memcpy(bytes.data() + r * row_bytes + c.offset, &s, sizeof s);
        }
    Hid m = row_type(columns, row_bytes, label, what);
    Hid ds = checked(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, label, "open dataset '" + path + "'");
    checked(H5Dwrite(ds.get(), m.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), label,
            "write dataset '" + path + "'");
  });
}

// ---- File

File::File(const Communicator& comm, const std::string& path, const std::string& label, const std::string& role,
           bool open_existing, FieldIo mode)
    : comm_(comm.duplicate()), path_(path), label_(label), role_(role) {
  if (!mpi_initialised())
    throw RuntimeFailure("HDF5 output '" + label + "': MPI is not initialised (make an emprism::MpiSession first)");
  mode_ = resolve_mode(mode, comm_.size());  // the same on every rank: throws on all or none
  quiet_errors();
  step([&] {
    if (!holds_file()) return;
    Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, label_, "create a file access property list");
#if EMPRISM_H5_COLLECTIVE
    if (mode_ == FieldIo::Collective) {
      checked(H5Pset_fapl_mpio(fapl.get(), comm_.handle(), MPI_INFO_NULL), label_, "set up MPI-IO file access");
      checked(H5Pset_coll_metadata_write(fapl.get(), true), label_, "set up collective metadata writes");
    }
#endif
    checked(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), label_, "create a file access property list");
    const hid_t file = open_existing ? H5Fopen(path_.c_str(), H5F_ACC_RDWR, fapl.get())
                                     : H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
    if (file < 0) fail(label_, (open_existing ? "open the " : "create the ") + role_ + " '" + path_ + "'");
    file_ = file;
  });
  open_ = true;
}

namespace {

// fsync of the file (through a descriptor of its own: the data written by every process reaches the disk), and a
// check that the file on disk is as long as HDF5 says it is. A full disk or an I/O error surfaces here at the
// latest.
void sync_to_disk(const std::string& path, const std::string& label, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw RuntimeFailure("HDF5 output '" + label + "': cannot " + what + " (" + std::strerror(err) + ")");
  }
  ::close(fd);
}

// The datasets under `group` (relative paths), found by walking its links.
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

// "" when the dataset at `path` has storage for its whole extent (fixed-size types; variable-length data, which
// Collective mode writes at close, is not checked), else what is missing.
std::string missing_storage(hid_t loc, const std::string& path, const std::string& label) {
  const std::string what = "verify the stored size of '" + path + "'";
  Hid d = checked(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), H5Dclose, label, what);
  Hid type = checked(H5Dget_type(d.get()), H5Tclose, label, what);
  if (H5Tis_variable_str(type.get()) > 0 || H5Tdetect_class(type.get(), H5T_VLEN) > 0) return "";
  Hid space = checked(H5Dget_space(d.get()), H5Sclose, label, what);
  const auto points = static_cast<std::uint64_t>(H5Sget_simple_extent_npoints(space.get()));
  const std::uint64_t expected = points * H5Tget_size(type.get());
  const std::uint64_t stored = H5Dget_storage_size(d.get());
  if (stored >= expected) return "";
  return "dataset '" + path + "' holds " + std::to_string(stored) + " of its " + std::to_string(expected) + " bytes";
}

}  // namespace

File::~File() { close_quietly(); }

void File::close_quietly() {
  open_ = false;
  if (file_ < 0) return;
  // Collective mode: H5Fclose is collective (and needs MPI); skip it while unwinding from an exception the other
  // ranks may not share (the caller then aborts; HDF5's shutdown would close the file).
  if (mode_ == FieldIo::Gather || (!mpi_finalised() && (failed_together_ || std::uncaught_exceptions() == 0))) {
    H5Fclose(file_);
  }
  file_ = -1;
}

Object File::root() { return open("/"); }

Object File::open(const std::string& path) {
  if (!holds_file() || file_ < 0) return Object();
  Hid o = checked(H5Oopen(file_, path.c_str(), H5P_DEFAULT), H5Oclose, label_, "open '" + path + "'");
  return Object(this, o.release(), path);
}

void File::verify_stored(const std::string& group) {
  step([&] {
    if (!holds_file()) return;
    const std::string what = "verify the data of '" + group + "'";
    std::vector<std::string> names;
    Hid g = checked(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose, label_, what);
    checked(H5Lvisit(g.get(), H5_INDEX_NAME, H5_ITER_INC, collect_link, &names), label_, what);
    for (const std::string& name : names) {
      Hid o = checked(H5Oopen(g.get(), name.c_str(), H5P_DEFAULT), H5Oclose, label_, what);
      if (H5Iget_type(o.get()) != H5I_DATASET) continue;
      const std::string problem = missing_storage(g.get(), name, label_);
      if (!problem.empty()) throw RuntimeFailure("HDF5 output '" + label_ + "': " + group + ": " + problem);
    }
  });
}

void File::flush(bool durable) {
  step([&] {
    if (!holds_file()) return;
    const std::string what = "flush the " + role_ + " '" + path_ + "'";
    test_write_fault(comm_.rank(), label_, what);
    checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), label_, what);
    if (durable && is_root()) sync_to_disk(path_, label_, what);
  });
}

void File::write_whole(std::int64_t dset, const std::string& path, std::int64_t mem_type, std::uint64_t count,
                       const void* data) {
  if (count == 0) return;
  const std::string what = "write dataset '" + path + "'";
  if (mode_ != FieldIo::Collective) {
    checked(H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), label_, what);
    return;
  }
  Hid fspace = checked(H5Dget_space(dset), H5Sclose, label_, what);
  Hid mspace = checked(H5Scopy(fspace.get()), H5Sclose, label_, what);
  if (!is_root()) {
    checked(H5Sselect_none(fspace.get()), label_, what);
    checked(H5Sselect_none(mspace.get()), label_, what);
  }
  Hid dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, label_, "create a transfer property list");
#if EMPRISM_H5_COLLECTIVE
  checked(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), label_, "create a collective transfer property list");
#endif
  static const double dummy = 0;
  checked(H5Dwrite(dset, mem_type, mspace.get(), fspace.get(), dxpl.get(), is_root() ? data : &dummy), label_, what);
}

void File::close() {
  if (!open_) return;
  open_ = false;
  const hid_t file = file_;
  file_ = -1;
  step([&] {  // collective in Collective mode; the agreement after it means every rank has closed
    if (file >= 0) checked(H5Fclose(file), label_, "close the " + role_ + " '" + path_ + "'");
  });
  step([&] {
    if (!is_root() || deferred_.empty()) return;
    const std::string what = "reopen the " + role_ + " '" + path_ + "'";
    Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, label_, what);
    checked(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), label_, what);
    Hid reopened = checked(H5Fopen(path_.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, label_, what);
    for (auto& write : deferred_) write(reopened.get());
    checked(H5Fclose(reopened.release()), label_, "close the " + role_ + " '" + path_ + "'");
  });
  deferred_.clear();
}

}  // namespace emprism::io::h5
