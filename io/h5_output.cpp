// h5_output.cpp: the run's HDF5 output file (layout in DESIGN.md section 5), written with the HDF5 C API.
// Conventions are h5py's: complex = compound {r, i}, bool = enum {FALSE = 0, TRUE = 1} of int8, strings are
// variable-length UTF-8. Every HDF5 failure becomes emprism::RuntimeFailure naming the file and the object.
// Who may call: rank 0 only (serial HDF5); one OutputFile at a time per process is the expected use.
#include "io/h5_output.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "src/errors.hpp"

namespace emprism::io {

namespace fs = std::filesystem;

namespace {

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "OutputFile stores hid_t in an int64_t");

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
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// The most specific message on HDF5's default error stack (e.g. "No space left on device"), then cleared.
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

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  std::string msg = "HDF5 output '" + file + "': cannot " + what;
  const std::string detail = hdf5_detail();
  if (!detail.empty()) msg += " (" + detail + ")";
  throw RuntimeFailure(msg);
}

Hid checked(hid_t id, Hid::Closer closer, const std::string& file, const std::string& what) {
  if (id < 0) fail(file, what);
  return Hid(id, closer);
}

void checked(herr_t rc, const std::string& file, const std::string& what) {
  if (rc < 0) fail(file, what);
}

// Builds the HDF5 types of the file. Memory and file types differ only where the native type is not
// the little-endian IEEE / two's complement standard type (never on the supported platforms).
class Types {
 public:
  explicit Types(const std::string& file) : file_(file) {}

  Hid vlen_string() const {
    Hid t = checked(H5Tcopy(H5T_C_S1), H5Tclose, file_, "create a string type");
    checked(H5Tset_size(t.get(), H5T_VARIABLE), file_, "create a string type");
    checked(H5Tset_cset(t.get(), H5T_CSET_UTF8), file_, "create a string type");
    return t;
  }

  // h5py's bool: enum of int8 with FALSE = 0, TRUE = 1.
  Hid boolean(hid_t base) const {
    Hid t = checked(H5Tenum_create(base), H5Tclose, file_, "create the bool enum type");
    const std::int8_t no = 0, yes = 1;
    checked(H5Tenum_insert(t.get(), "FALSE", &no), file_, "create the bool enum type");
    checked(H5Tenum_insert(t.get(), "TRUE", &yes), file_, "create the bool enum type");
    return t;
  }

  // h5py's complex: compound {r, i} of two equal floats, packed.
  Hid complex(hid_t real) const {
    const size_t size = H5Tget_size(real);
    if (size == 0) fail(file_, "create the complex type");
    Hid t = checked(H5Tcreate(H5T_COMPOUND, 2 * size), H5Tclose, file_, "create the complex type");
    checked(H5Tinsert(t.get(), "r", 0, real), file_, "create the complex type");
    checked(H5Tinsert(t.get(), "i", size, real), file_, "create the complex type");
    return t;
  }

  // The packed file form of a memory compound type.
  Hid packed(hid_t mem) const {
    Hid t = checked(H5Tcopy(mem), H5Tclose, file_, "copy a compound type");
    checked(H5Tpack(t.get()), file_, "pack a compound type");
    return t;
  }

 private:
  const std::string& file_;
};

Hid scalar_space(const std::string& file) {
  return checked(H5Screate(H5S_SCALAR), H5Sclose, file, "create a dataspace");
}

Hid simple_space(const std::vector<hsize_t>& dims, const std::string& file) {
  return checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, file,
                 "create a dataspace");
}

// Writes attribute `name` of object `obj` (whose path is `obj_path`, for messages).
void write_attribute(hid_t obj, const std::string& obj_path, const char* name, hid_t file_type, hid_t mem_type,
                     hid_t space, const void* data, const std::string& file) {
  const std::string what = std::string("write attribute '") + name + "' of '" + obj_path + "'";
  Hid attr = checked(H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, file, what);
  checked(H5Awrite(attr.get(), mem_type, data), file, what);
}

void attr_string(hid_t obj, const std::string& obj_path, const char* name, const std::string& value,
                 const std::string& file) {
  Hid type = Types(file).vlen_string();
  Hid space = scalar_space(file);
  const char* p = value.c_str();
  write_attribute(obj, obj_path, name, type.get(), type.get(), space.get(), &p, file);
}

void attr_double(hid_t obj, const std::string& obj_path, const char* name, double value, const std::string& file) {
  Hid space = scalar_space(file);
  write_attribute(obj, obj_path, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), &value, file);
}

void attr_int(hid_t obj, const std::string& obj_path, const char* name, int value, const std::string& file) {
  Hid space = scalar_space(file);
  const std::int32_t v = value;
  write_attribute(obj, obj_path, name, H5T_STD_I32LE, H5T_NATIVE_INT32, space.get(), &v, file);
}

void attr_int4(hid_t obj, const std::string& obj_path, const char* name, const std::array<int, 4>& value,
               const std::string& file) {
  Hid space = simple_space({4}, file);
  const std::int32_t v[4] = {value[0], value[1], value[2], value[3]};
  write_attribute(obj, obj_path, name, H5T_STD_I32LE, H5T_NATIVE_INT32, space.get(), v, file);
}

void attr_bool(hid_t obj, const std::string& obj_path, const char* name, bool value, const std::string& file) {
  Types types(file);
  Hid file_type = types.boolean(H5T_STD_I8LE);
  Hid mem_type = types.boolean(H5T_NATIVE_INT8);
  Hid space = scalar_space(file);
  const std::int8_t v = value ? 1 : 0;
  write_attribute(obj, obj_path, name, file_type.get(), mem_type.get(), space.get(), &v, file);
}

// Creates dataset `name` under `loc` (path `loc_path`) with shape `dims` and writes `data` into it.
void write_dataset(hid_t loc, const std::string& loc_path, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<hsize_t>& dims, const void* data, const std::string& file) {
  const std::string path = (loc_path == "/" ? "" : loc_path) + "/" + name;
  Hid space = dims.empty() ? scalar_space(file) : simple_space(dims, file);
  Hid dset = checked(H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     H5Dclose, file, "create dataset '" + path + "'");
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  if (count > 0) {
    checked(H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file, "write dataset '" + path + "'");
  }
}

Hid open_or_create_group(hid_t loc, const char* name, const std::string& path, const std::string& file) {
  const htri_t exists = H5Lexists(loc, name, H5P_DEFAULT);
  if (exists < 0) fail(file, "look up group '" + path + "'");
  if (exists > 0) return checked(H5Gopen2(loc, name, H5P_DEFAULT), H5Gclose, file, "open group '" + path + "'");
  return checked(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, file,
                 "create group '" + path + "'");
}

Hid create_group(hid_t loc, const std::string& name, const std::string& path, const std::string& file) {
  const htri_t exists = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail(file, "look up '" + path + "'");
  if (exists > 0) throw RuntimeFailure("HDF5 output '" + file + "': '" + path + "' is written twice");
  return checked(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, file,
                 "create group '" + path + "'");
}

// Number of sites of the global lattice; throws for extents that cannot describe a field.
hsize_t volume(const std::array<int, 4>& extents, const std::string& file, const std::string& what) {
  hsize_t v = 1;
  for (int e : extents) {
    if (e <= 0) {
      throw RuntimeFailure("HDF5 output '" + file + "': cannot write " + what + ": lattice extents must be positive");
    }
    v *= static_cast<hsize_t>(e);
  }
  return v;
}

// [Lt][Lz][Ly][Lx] followed by the inner dimensions.
std::vector<hsize_t> field_dims(const std::array<int, 4>& e, std::initializer_list<hsize_t> inner) {
  std::vector<hsize_t> dims = {hsize_t(e[3]), hsize_t(e[2]), hsize_t(e[1]), hsize_t(e[0])};
  dims.insert(dims.end(), inner);
  return dims;
}

void write_complex_field(hid_t loc, const std::string& loc_path, const std::string& name,
                         const std::vector<std::complex<double>>& values, const std::vector<hsize_t>& dims,
                         bool single_precision, const std::string& file) {
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  if (values.size() != count) {
    throw RuntimeFailure("HDF5 output '" + file + "': cannot write dataset '" + loc_path + "/" + name + "': it has " +
                         std::to_string(values.size()) + " elements, the lattice needs " + std::to_string(count));
  }
  Types types(file);
  if (single_precision) {
    std::vector<std::complex<float>> narrow(values.begin(), values.end());
    Hid file_type = types.complex(H5T_IEEE_F32LE);
    Hid mem_type = types.complex(H5T_NATIVE_FLOAT);
    write_dataset(loc, loc_path, name, file_type.get(), mem_type.get(), dims, narrow.data(), file);
  } else {
    Hid file_type = types.complex(H5T_IEEE_F64LE);
    Hid mem_type = types.complex(H5T_NATIVE_DOUBLE);
    write_dataset(loc, loc_path, name, file_type.get(), mem_type.get(), dims, values.data(), file);
  }
}

// Row layouts of the metrics tables in memory.
struct KernelRow {
  const char* name;
  std::int64_t calls;
  double total_s, mean_s, min_s, flops, bytes, gbs, percent_of_peak;
  std::int32_t registers, spill_bytes, shared_bytes, block;
  double occupancy;
};

struct RankRow {
  std::int32_t rank;
  double compute_s, halo_wait_s, reduction_s;
};

Hid kernel_row_type(const std::string& file) {
  const std::string what = "create the /metrics/kernels row type";
  Hid str = Types(file).vlen_string();
  Hid t = checked(H5Tcreate(H5T_COMPOUND, sizeof(KernelRow)), H5Tclose, file, what);
  const hid_t t_id = t.get();
  auto field = [&](const char* name, size_t offset, hid_t type) {
    checked(H5Tinsert(t_id, name, offset, type), file, what);
  };
  field("name", HOFFSET(KernelRow, name), str.get());
  field("calls", HOFFSET(KernelRow, calls), H5T_NATIVE_INT64);
  field("total_s", HOFFSET(KernelRow, total_s), H5T_NATIVE_DOUBLE);
  field("mean_s", HOFFSET(KernelRow, mean_s), H5T_NATIVE_DOUBLE);
  field("min_s", HOFFSET(KernelRow, min_s), H5T_NATIVE_DOUBLE);
  field("flops", HOFFSET(KernelRow, flops), H5T_NATIVE_DOUBLE);
  field("bytes", HOFFSET(KernelRow, bytes), H5T_NATIVE_DOUBLE);
  field("gbs", HOFFSET(KernelRow, gbs), H5T_NATIVE_DOUBLE);
  field("percent_of_peak", HOFFSET(KernelRow, percent_of_peak), H5T_NATIVE_DOUBLE);
  field("registers", HOFFSET(KernelRow, registers), H5T_NATIVE_INT32);
  field("spill_bytes", HOFFSET(KernelRow, spill_bytes), H5T_NATIVE_INT32);
  field("shared_bytes", HOFFSET(KernelRow, shared_bytes), H5T_NATIVE_INT32);
  field("block", HOFFSET(KernelRow, block), H5T_NATIVE_INT32);
  field("occupancy", HOFFSET(KernelRow, occupancy), H5T_NATIVE_DOUBLE);
  return t;
}

Hid rank_row_type(const std::string& file) {
  const std::string what = "create the /metrics/ranks row type";
  Hid t = checked(H5Tcreate(H5T_COMPOUND, sizeof(RankRow)), H5Tclose, file, what);
  checked(H5Tinsert(t.get(), "rank", HOFFSET(RankRow, rank), H5T_NATIVE_INT32), file, what);
  checked(H5Tinsert(t.get(), "compute_s", HOFFSET(RankRow, compute_s), H5T_NATIVE_DOUBLE), file, what);
  checked(H5Tinsert(t.get(), "halo_wait_s", HOFFSET(RankRow, halo_wait_s), H5T_NATIVE_DOUBLE), file, what);
  checked(H5Tinsert(t.get(), "reduction_s", HOFFSET(RankRow, reduction_s), H5T_NATIVE_DOUBLE), file, what);
  return t;
}

// "<dir>/.<basename>.tmp-<pid>" beside final_path.
std::string temporary_name(const std::string& final_path) {
  const fs::path p(final_path);
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  return (dir / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
}

}  // namespace

void check_output_path(const std::string& final_path, bool overwrite) {
  if (final_path.empty()) throw InputError("output.file: is empty; give the path of the HDF5 file to write");
  const fs::path p(final_path);
  if (!p.has_filename()) throw InputError("output.file: '" + final_path + "' names a directory, not a file");
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) throw InputError("output.file: '" + final_path + "' is a directory");
    if (!overwrite) {
      throw InputError("output.file: '" + final_path + "' exists; set output.overwrite = true to replace it");
    }
  }
  const std::string dir = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
  if (!fs::is_directory(fs::status(dir, ec))) throw InputError("output.file: directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError("output.file: directory '" + dir + "' is not writable");
}

OutputFile::OutputFile(const std::string& final_path, bool overwrite)
    : final_path_(final_path), temp_path_(), overwrite_(overwrite) {
  check_output_path(final_path, overwrite);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  temp_path_ = temporary_name(final_path);
  Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, final_path_, "create a file access property list");
  checked(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), final_path_, "create a file access property list");
  const hid_t file = H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (file < 0) {
    std::remove(temp_path_.c_str());
    fail(final_path_, "create the temporary file '" + temp_path_ + "'");
  }
  file_ = file;
}

OutputFile::~OutputFile() {
  if (file_ >= 0) H5Fclose(file_);
  file_ = -1;
  if (!committed_ && !temp_path_.empty()) std::remove(temp_path_.c_str());
}

namespace {
void require_open(std::int64_t file, bool committed, const std::string& path, const char* what) {
  if (file < 0 || committed) {
    throw RuntimeFailure("HDF5 output '" + path + "': cannot " + what + ": the file is already " +
                         (committed ? "committed" : "closed"));
  }
}
}  // namespace

void OutputFile::write_root(const RootInfo& info) {
  require_open(file_, committed_, final_path_, "write the root attributes");
  const std::string& f = final_path_;
  Hid root = checked(H5Gopen2(file_, "/", H5P_DEFAULT), H5Gclose, f, "open group '/'");
  const hid_t r = root.get();
  attr_string(r, "/", "program_version", info.program_version, f);
  attr_string(r, "/", "git_hash", info.git_hash, f);
  attr_string(r, "/", "date", info.date, f);
  attr_string(r, "/", "backend", info.backend, f);
  attr_string(r, "/", "device", info.device, f);
  attr_string(r, "/", "precision", info.precision, f);
  attr_int(r, "/", "ranks", info.ranks, f);
  attr_int4(r, "/", "process_grid", info.process_grid, f);
  attr_int4(r, "/", "extents", info.extents, f);
}

void OutputFile::write_input(const std::string& toml_text) {
  require_open(file_, committed_, final_path_, "write dataset '/input'");
  Hid type = Types(final_path_).vlen_string();
  const char* p = toml_text.c_str();
  write_dataset(file_, "/", "input", type.get(), type.get(), {}, &p, final_path_);
}

void OutputFile::write_gauge(const GaugeInfo& gauge, const std::array<int, 4>& extents) {
  require_open(file_, committed_, final_path_, "write group '/gauge'");
  const std::string& f = final_path_;
  if (!gauge.links.empty()) volume(extents, f, "dataset '/gauge/links'");
  Hid group = create_group(file_, "gauge", "/gauge", f);
  attr_double(group.get(), "/gauge", "plaquette", gauge.plaquette, f);
  attr_double(group.get(), "/gauge", "link_trace", gauge.link_trace, f);
  attr_string(group.get(), "/gauge", "source", gauge.source, f);
  if (!gauge.links.empty()) {
    write_complex_field(group.get(), "/gauge", "links", gauge.links, field_dims(extents, {4, 3, 3}), false, f);
  }
}

void OutputFile::write_solve(const SolveRecord& rec, const std::array<int, 4>& extents) {
  require_open(file_, committed_, final_path_, "write a solve");
  const std::string& f = final_path_;
  if (rec.name.empty() || rec.name == "." || rec.name.find('/') != std::string::npos) {
    throw RuntimeFailure("HDF5 output '" + f + "': cannot write solve '" + rec.name +
                         "': a solve name must be non-empty and contain no '/'");
  }
  const std::string path = "/solves/" + rec.name;
  volume(extents, f, "group '" + path + "'");
  Hid solves = open_or_create_group(file_, "solves", "/solves", f);
  Hid group = create_group(solves.get(), rec.name, path, f);
  const hid_t g = group.get();
  attr_int(g, path, "iterations", rec.iterations, f);
  attr_double(g, path, "true_residual", rec.true_residual, f);
  attr_bool(g, path, "converged", rec.converged, f);
  attr_double(g, path, "seconds", rec.seconds, f);
  attr_double(g, path, "kappa", rec.kappa, f);
  attr_double(g, path, "csw", rec.csw, f);
  attr_double(g, path, "tol", rec.tol, f);
  attr_int(g, path, "restarts", rec.restarts, f);
  attr_string(g, path, "source_kind", rec.source_kind, f);
  const std::vector<hsize_t> dims = field_dims(extents, {4, 3});
  write_complex_field(g, path, "solution", rec.solution, dims, rec.single_precision, f);
  write_complex_field(g, path, "source", rec.source, dims, rec.single_precision, f);
  write_dataset(g, path, "residual_history", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rec.residual_history.size()},
                rec.residual_history.data(), f);
}

void OutputFile::write_metrics(const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                               const std::vector<RankTimes>& ranks) {
  require_open(file_, committed_, final_path_, "write group '/metrics'");
  const std::string& f = final_path_;
  Hid metrics = create_group(file_, "metrics", "/metrics", f);

  Hid peak_group = create_group(metrics.get(), "peak", "/metrics/peak", f);
  const hid_t pg = peak_group.get();
  attr_double(pg, "/metrics/peak", "copy_gbs", peak.copy_gbs, f);
  attr_double(pg, "/metrics/peak", "triad_gbs", peak.triad_gbs, f);
  attr_double(pg, "/metrics/peak", "read_gbs", peak.read_gbs, f);
  attr_double(pg, "/metrics/peak", "peak_gbs", peak.peak_gbs, f);
  attr_bool(pg, "/metrics/peak", "measured", peak.measured, f);

  std::vector<KernelRow> krows;
  krows.reserve(kernels.size());
  for (const KernelMetric& k : kernels) {
    krows.push_back(KernelRow{k.name.c_str(), k.calls, k.total_s, k.mean_s, k.min_s, k.flops, k.bytes, k.gbs,
                              k.percent_of_peak, k.res.registers, k.res.spill_bytes, k.res.shared_bytes, k.res.block,
                              k.res.occupancy});
  }
  Hid kmem = kernel_row_type(f);
  Hid kfile = Types(f).packed(kmem.get());
  write_dataset(metrics.get(), "/metrics", "kernels", kfile.get(), kmem.get(), {krows.size()}, krows.data(), f);

  std::vector<RankRow> rrows;
  rrows.reserve(ranks.size());
  for (const RankTimes& r : ranks) rrows.push_back(RankRow{r.rank, r.compute_s, r.halo_wait_s, r.reduction_s});
  Hid rmem = rank_row_type(f);
  Hid rfile = Types(f).packed(rmem.get());
  write_dataset(metrics.get(), "/metrics", "ranks", rfile.get(), rmem.get(), {rrows.size()}, rrows.data(), f);
}

void OutputFile::flush() {
  require_open(file_, committed_, final_path_, "flush");
  checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), final_path_, "flush the temporary file '" + temp_path_ + "'");
}

void OutputFile::commit() {
  if (committed_) return;
  require_open(file_, committed_, final_path_, "commit");
  const hid_t file = file_;
  file_ = -1;
  checked(H5Fclose(file), final_path_, "close the temporary file '" + temp_path_ + "'");
  std::error_code ec;
  if (!overwrite_ && fs::exists(final_path_, ec)) {
    // Someone created the target while we ran: keep our results under the temporary name rather than lose them.
    committed_ = true;
    throw RuntimeFailure("HDF5 output '" + final_path_ + "': the file appeared during the run and output.overwrite " +
                         "is false; the results are left in '" + temp_path_ + "'");
  }
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    const int err = errno;
    throw RuntimeFailure("HDF5 output '" + final_path_ + "': cannot rename the temporary file '" + temp_path_ +
                         "' to it: " + std::strerror(err));
  }
  committed_ = true;
}

}  // namespace emprism::io
