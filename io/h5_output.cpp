// h5_output.cpp: the run's HDF5 output file (layout: docs/conventions.md section 13), written with the HDF5 C API from
// many ranks, through collective parallel HDF5 or a timeslice-by-timeslice gather to rank 0 (see h5_output.hpp).
// Conventions are h5py's: complex = compound {r, i}, bool = enum {FALSE = 0, TRUE = 1} of int8, strings are
// variable-length UTF-8. Fields: each rank's block in local natural order -> the global natural order in the file.
// Every HDF5 failure becomes emprism::RuntimeFailure naming the file and the object, thrown on every rank.
// Who may call: the OutputFile members are collective over its communicator; one OutputFile at a time per
// communicator is the expected use.
#include "io/h5_output.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>
#include <type_traits>
#include <utility>

#include "src/errors.hpp"

#if defined(EMPRISM_HAVE_PARALLEL_HDF5) && EMPRISM_HAVE_PARALLEL_HDF5
#if !defined(H5_HAVE_PARALLEL)
#error "EMPRISM_HAVE_PARALLEL_HDF5 is set but hdf5.h is the serial HDF5's: the include path and the library disagree"
#endif
#define EMPRISM_H5_COLLECTIVE 1
#else
#define EMPRISM_H5_COLLECTIVE 0
#endif

namespace emprism::io {

namespace fs = std::filesystem;
using cplx = std::complex<double>;

namespace {

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "OutputFile stores hid_t in an int64_t");

constexpr int kSlabTag = 0x4835;  // "H5": gather messages, on our duplicate communicator

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

// Writes attribute `name` of object `obj` (whose path is `obj_path`, for messages). In Collective mode every
// rank calls this with the same value (HDF5 metadata operations are collective).
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

// An integer attribute of shape dims (row-major values).
void attr_ints(hid_t obj, const std::string& obj_path, const char* name, const std::vector<hsize_t>& dims,
               const std::vector<std::int32_t>& values, const std::string& file) {
  Hid space = simple_space(dims, file);
  write_attribute(obj, obj_path, name, H5T_STD_I32LE, H5T_NATIVE_INT32, space.get(), values.data(), file);
}

void attr_int4(hid_t obj, const std::string& obj_path, const char* name, const std::array<int, 4>& value,
               const std::string& file) {
  attr_ints(obj, obj_path, name, {4}, {value[0], value[1], value[2], value[3]}, file);
}

// A one-dimensional array of variable-length strings (h5py reads a numpy array of str/bytes).
void attr_strings(hid_t obj, const std::string& obj_path, const char* name, const std::vector<std::string>& values,
                  const std::string& file) {
  Hid type = Types(file).vlen_string();
  Hid space = simple_space({values.size()}, file);
  std::vector<const char*> p;
  for (const std::string& v : values) p.push_back(v.c_str());
  write_attribute(obj, obj_path, name, type.get(), type.get(), space.get(), p.data(), file);
}

void attr_bool(hid_t obj, const std::string& obj_path, const char* name, bool value, const std::string& file) {
  Types types(file);
  Hid file_type = types.boolean(H5T_STD_I8LE);
  Hid mem_type = types.boolean(H5T_NATIVE_INT8);
  Hid space = scalar_space(file);
  const std::int8_t v = value ? 1 : 0;
  write_attribute(obj, obj_path, name, file_type.get(), mem_type.get(), space.get(), &v, file);
}

std::string child_path(const std::string& loc_path, const std::string& name) {
  return (loc_path == "/" ? "" : loc_path) + "/" + name;
}

// A dataset transfer property list for collective MPI-IO (Collective mode only).
Hid collective_dxpl(const std::string& file) {
  Hid dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, file, "create a transfer property list");
#if EMPRISM_H5_COLLECTIVE
  checked(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), file, "create a collective transfer property list");
#else
  throw RuntimeFailure("HDF5 output '" + file + "': collective transfer without parallel HDF5 (internal error)");
#endif
  return dxpl;
}

// How this rank takes part in writing a dataset whose whole content comes from rank 0.
struct Io {
  bool collective = false;  // Collective mode: every rank calls the HDF5 functions
  bool root = true;         // rank 0: its data is written
};

Hid create_dataset(hid_t loc, const std::string& loc_path, const std::string& name, hid_t file_type,
                   const std::vector<hsize_t>& dims, const std::string& file) {
  Hid space = dims.empty() ? scalar_space(file) : simple_space(dims, file);
  return checked(H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                 file, "create dataset '" + child_path(loc_path, name) + "'");
}

// Writes rank 0's `data` as the whole of `dset` (`count` elements). Gather mode: called on rank 0 only.
// Collective mode: called on every rank; rank 0 selects everything, the others nothing.
void write_whole(const Io& io, hid_t dset, const std::string& path, hid_t mem_type, hsize_t count, const void* data,
                 const std::string& file) {
  if (count == 0) return;
  const std::string what = "write dataset '" + path + "'";
  if (!io.collective) {
    checked(H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file, what);
    return;
  }
  Hid fspace = checked(H5Dget_space(dset), H5Sclose, file, what);
  Hid mspace = checked(H5Scopy(fspace.get()), H5Sclose, file, what);
  if (!io.root) {
    checked(H5Sselect_none(fspace.get()), file, what);
    checked(H5Sselect_none(mspace.get()), file, what);
  }
  Hid dxpl = collective_dxpl(file);
  static const double dummy = 0;
  checked(H5Dwrite(dset, mem_type, mspace.get(), fspace.get(), dxpl.get(), io.root ? data : &dummy), file, what);
}

// Creates dataset `name` under `loc` (path `loc_path`) with shape `dims` and writes rank 0's `data` into it.
void write_dataset(const Io& io, hid_t loc, const std::string& loc_path, const std::string& name, hid_t file_type,
                   hid_t mem_type, const std::vector<hsize_t>& dims, const void* data, const std::string& file) {
  Hid dset = create_dataset(loc, loc_path, name, file_type, dims, file);
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  write_whole(io, dset.get(), child_path(loc_path, name), mem_type, count, data, file);
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

// ---- blocks of the decomposition ----

// One rank's block, as every rank sees it after gather_blocks.
struct Block {
  std::array<int, 4> global, local, origin;
  int has_data;  // the rank passed field data (write_gauge: links not null)
  std::int64_t volume() const { return std::int64_t(local[0]) * local[1] * local[2] * local[3]; }
  bool holds_t(int t) const { return origin[3] <= t && t < origin[3] + local[3]; }
};

// Every rank's block, in rank order (MPI_Allgather). Collective; cannot throw.
std::vector<Block> gather_blocks(MPI_Comm comm, int size, const BlockLayout& b, bool has_data) {
  constexpr int kInts = 13;
  int mine[kInts];
  for (int mu = 0; mu < 4; ++mu) {
    mine[mu] = b.global[mu];
    mine[4 + mu] = b.local[mu];
    mine[8 + mu] = b.origin[mu];
  }
  mine[12] = has_data ? 1 : 0;
  std::vector<int> all(static_cast<std::size_t>(kInts) * size);
  MPI_Allgather(mine, kInts, MPI_INT, all.data(), kInts, MPI_INT, comm);
  std::vector<Block> out(size);
  for (int r = 0; r < size; ++r) {
    const int* p = all.data() + static_cast<std::size_t>(kInts) * r;
    for (int mu = 0; mu < 4; ++mu) {
      out[r].global[mu] = p[mu];
      out[r].local[mu] = p[4 + mu];
      out[r].origin[mu] = p[8 + mu];
    }
    out[r].has_data = p[12];
  }
  return out;
}

std::string show(const std::array<int, 4>& a) {
  return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]) + ", " +
         std::to_string(a[3]) + ")";
}

// Checks that the blocks tile the global lattice as a tensor-product grid: in each direction the distinct
// (origin, extent) intervals tile [0, L), there are as many blocks as grid cells, and no two blocks coincide.
// Throws RuntimeFailure (the same on every rank: every rank checks the same gathered blocks).
void check_blocks(const std::vector<Block>& blocks, const std::string& file, const std::string& what) {
  const std::string head = "HDF5 output '" + file + "': cannot write " + what + ": ";
  const std::array<int, 4>& g = blocks[0].global;
  for (int mu = 0; mu < 4; ++mu) {
    if (g[mu] <= 0) throw RuntimeFailure(head + "lattice extents must be positive, not " + show(g));
  }
  std::array<std::vector<std::pair<int, int>>, 4> intervals;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    const Block& b = blocks[r];
    const std::string who = "rank " + std::to_string(r) + "'s block";
    if (b.global != g) {
      throw RuntimeFailure(head + who + " has global extents " + show(b.global) + ", rank 0's " + show(g));
    }
    for (int mu = 0; mu < 4; ++mu) {
      if (b.local[mu] <= 0 || b.origin[mu] < 0 || b.origin[mu] > g[mu] - b.local[mu]) {
        throw RuntimeFailure(head + who + " (origin " + show(b.origin) + ", extents " + show(b.local) +
                             ") does not lie in the lattice " + show(g));
      }
      intervals[mu].emplace_back(b.origin[mu], b.local[mu]);
    }
  }
  std::size_t cells = 1;
  for (int mu = 0; mu < 4; ++mu) {
    std::vector<std::pair<int, int>>& iv = intervals[mu];
    std::sort(iv.begin(), iv.end());
    iv.erase(std::unique(iv.begin(), iv.end()), iv.end());
    int next = 0;
    for (const auto& [origin, extent] : iv) {
      if (origin != next) {
        throw RuntimeFailure(head + "the blocks do not form a grid that tiles the lattice in direction " +
                             std::to_string(mu));
      }
      next = origin + extent;
    }
    if (next != g[mu]) {
      throw RuntimeFailure(head + "the blocks do not cover the lattice in direction " + std::to_string(mu));
    }
    cells *= iv.size();
  }
  std::vector<std::array<int, 4>> origins;
  origins.reserve(blocks.size());
  for (const Block& b : blocks) origins.push_back(b.origin);
  std::sort(origins.begin(), origins.end());
  const bool distinct = std::adjacent_find(origins.begin(), origins.end()) == origins.end();
  if (!distinct || cells != blocks.size()) {
    throw RuntimeFailure(head + "the " + std::to_string(blocks.size()) + " blocks do not tile the lattice as a grid (" +
                         std::to_string(cells) + " cells)");
  }
  const std::int64_t plane = std::int64_t(g[0]) * g[1] * g[2];
  if (plane > INT_MAX) throw RuntimeFailure(head + "a timeslice of " + std::to_string(plane) + " sites is too large");
}

// Checks this rank's field size: throws RuntimeFailure naming the dataset.
void check_field_size(const std::vector<cplx>& values, const Block& mine, hsize_t per_site, const std::string& path,
                      const std::string& file) {
  const hsize_t need = static_cast<hsize_t>(mine.volume()) * per_site;
  if (values.size() != need) {
    throw RuntimeFailure("HDF5 output '" + file + "': cannot write dataset '" + path + "': it has " +
                         std::to_string(values.size()) + " elements, this rank's block of " +
                         std::to_string(mine.volume()) + " sites needs " + std::to_string(need));
  }
}

// [Lt][Lz][Ly][Lx] followed by the inner dimensions.
std::vector<hsize_t> field_dims(const std::array<int, 4>& e, const std::vector<hsize_t>& inner) {
  std::vector<hsize_t> dims = {hsize_t(e[3]), hsize_t(e[2]), hsize_t(e[1]), hsize_t(e[0])};
  dims.insert(dims.end(), inner.begin(), inner.end());
  return dims;
}

// One field dataset to fill: its shape per site and its HDF5 types.
// A dataset may hold several fields along leading dimensions (the propagator: [4][3] columns before the lattice);
// one write fills the field at index `at` of them.
struct Field {
  std::string path;            // for messages
  std::vector<hsize_t> inner;  // {4, 3} or {4, 3, 3}
  hsize_t per_site = 0;        // product of inner
  bool single = false;         // float32 in the file (and in the messages), else float64
  std::vector<hsize_t> lead;   // leading dimensions of the dataset ({} for one field, {4, 3} for a propagator)
  std::vector<hsize_t> at;     // which field of them this write fills (same length as lead)
};

Field make_field(const std::string& path, std::vector<hsize_t> inner, bool single) {
  Field f{path, std::move(inner), 1, single, {}, {}};
  for (hsize_t d : f.inner) f.per_site *= d;
  return f;
}

// The hyperslab of one field's block: `start` and `count` of the lattice part, prefixed by the field's index.
void select_block(hid_t space, const Field& f, std::vector<hsize_t> start, std::vector<hsize_t> count,
                  const std::string& file, const std::string& what) {
  start.insert(start.begin(), f.at.begin(), f.at.end());
  count.insert(count.begin(), f.lead.size(), 1);
  checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file, what);
}

Hid complex_file_type(bool single, const std::string& file) {
  return Types(file).complex(single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
}
Hid complex_mem_type(bool single, const std::string& file) {
  return Types(file).complex(single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
}

Hid create_field(hid_t loc, const std::string& loc_path, const std::string& name, const std::array<int, 4>& global,
                 const Field& f, const std::string& file) {
  Hid type = complex_file_type(f.single, file);
  std::vector<hsize_t> dims = f.lead;
  const std::vector<hsize_t> lattice = field_dims(global, f.inner);
  dims.insert(dims.end(), lattice.begin(), lattice.end());
  return create_dataset(loc, loc_path, name, type.get(), dims, file);
}

template <typename T>
void convert(const cplx* src, std::size_t n, std::complex<T>* dst) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::complex<T>(src[i]);
}

// Buffers of the gather, allocated before any message flows (so an allocation failure is agreed on first).
template <typename T>
struct GatherBuffers {
  std::vector<std::complex<T>> slice;  // rank 0: one global timeslice [Lz][Ly][Lx][per_site]
  std::vector<std::complex<T>> slab;   // other ranks, float only: one local timeslice, converted
};

template <typename T>
GatherBuffers<T> gather_buffers(int rank, const Block& mine, const Field& f) {
  GatherBuffers<T> b;
  const std::array<int, 4>& g = mine.global;
  if (rank == 0) {
    b.slice.resize(static_cast<std::size_t>(g[0]) * g[1] * g[2] * f.per_site);
  } else if (!std::is_same_v<T, double>) {
    b.slab.resize(static_cast<std::size_t>(mine.local[0]) * mine.local[1] * mine.local[2] * f.per_site);
  }
  return b;
}

// Gather mode: streams one field to rank 0, one global timeslice at a time, and rank 0 writes each timeslice into
// `dset` (valid on rank 0 only). Collective; never throws. Rank 0 keeps receiving after a failure (so no sender
// is left blocked in MPI_Send) but writes no more, and returns its first failure in `err` (kept if not empty).
template <typename T>
void gather_field(MPI_Comm comm, int rank, const std::vector<Block>& blocks, hid_t dset, const Field& f,
                  const cplx* local, GatherBuffers<T>& buf, const std::string& file, std::string& err) {
  const Block& mine = blocks[rank];
  const std::array<int, 4>& g = mine.global;
  const int size = static_cast<int>(blocks.size());
  MPI_Datatype site;
  MPI_Type_contiguous(static_cast<int>(f.per_site * sizeof(std::complex<T>)), MPI_BYTE, &site);
  MPI_Type_commit(&site);
  const std::size_t local_plane = static_cast<std::size_t>(mine.local[0]) * mine.local[1] * mine.local[2];

  if (rank != 0) {
    for (int t = mine.origin[3]; t < mine.origin[3] + mine.local[3]; ++t) {
      const cplx* src = local + static_cast<std::size_t>(t - mine.origin[3]) * local_plane * f.per_site;
      const void* send = src;
      if constexpr (!std::is_same_v<T, double>) {
        convert(src, local_plane * f.per_site, buf.slab.data());
        send = buf.slab.data();
      }
      MPI_Send(send, static_cast<int>(local_plane), site, 0, kSlabTag, comm);
    }
    MPI_Type_free(&site);
    return;
  }

  // Rank 0: a subarray type per sender places its slab directly into the timeslice buffer.
  std::vector<MPI_Datatype> place(size, MPI_DATATYPE_NULL);
  for (int r = 1; r < size; ++r) {
    const Block& b = blocks[r];
    const int sizes[3] = {g[2], g[1], g[0]};
    const int subsizes[3] = {b.local[2], b.local[1], b.local[0]};
    const int starts[3] = {b.origin[2], b.origin[1], b.origin[0]};
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, site, &place[r]);
    MPI_Type_commit(&place[r]);
  }
  const hsize_t slice_elems = static_cast<hsize_t>(g[0]) * g[1] * g[2] * f.per_site;
  Hid fspace, mspace, mem_type;
  if (err.empty()) {
    try {
      const std::string what = "write dataset '" + f.path + "'";
      fspace = checked(H5Dget_space(dset), H5Sclose, file, what);
      mspace = simple_space({slice_elems}, file);
      mem_type = complex_mem_type(std::is_same_v<T, float>, file);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  std::vector<MPI_Request> requests;
  requests.reserve(size);
  const std::size_t row = static_cast<std::size_t>(mine.local[0]) * f.per_site;
  for (int t = 0; t < g[3]; ++t) {
    requests.clear();
    for (int r = 1; r < size; ++r) {
      if (!blocks[r].holds_t(t)) continue;
      requests.emplace_back();
      MPI_Irecv(buf.slice.data(), 1, place[r], r, kSlabTag, comm, &requests.back());
    }
    if (mine.holds_t(t)) {  // rank 0's own rows, converted in place
      const int lt = t - mine.origin[3];
      for (int z = 0; z < mine.local[2]; ++z) {
        for (int y = 0; y < mine.local[1]; ++y) {
          const std::size_t src = ((static_cast<std::size_t>(lt) * mine.local[2] + z) * mine.local[1] + y) * row;
          const std::size_t dst =
              ((static_cast<std::size_t>(mine.origin[2] + z) * g[1] + (mine.origin[1] + y)) * g[0] + mine.origin[0]) *
              f.per_site;
          convert(local + src, row, buf.slice.data() + dst);
        }
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    if (!err.empty()) continue;
    try {
      const std::string what = "write dataset '" + f.path + "'";
      std::vector<hsize_t> start(4 + f.inner.size(), 0), count = field_dims(g, f.inner);
      start[0] = static_cast<hsize_t>(t);
      count[0] = 1;
      select_block(fspace.get(), f, start, count, file, what);
      checked(H5Dwrite(dset, mem_type.get(), mspace.get(), fspace.get(), H5P_DEFAULT, buf.slice.data()), file, what);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  for (int r = 1; r < size; ++r) MPI_Type_free(&place[r]);
  MPI_Type_free(&site);
}

// Collective mode: every rank writes its block as a hyperslab of `dset` with one collective H5Dwrite.
template <typename T>
void write_field_collective(hid_t dset, const Block& mine, const Field& f, const cplx* local, const std::string& file) {
  const std::string what = "write dataset '" + f.path + "'";
  const hsize_t n = static_cast<hsize_t>(mine.volume()) * f.per_site;
  std::vector<std::complex<T>> narrow;
  const void* data = local;
  if constexpr (!std::is_same_v<T, double>) {
    narrow.resize(n);
    convert(local, n, narrow.data());
    data = narrow.data();
  }
  std::vector<hsize_t> start = {hsize_t(mine.origin[3]), hsize_t(mine.origin[2]), hsize_t(mine.origin[1]),
                                hsize_t(mine.origin[0])};
  std::vector<hsize_t> count = field_dims(mine.local, f.inner);
  start.resize(count.size(), 0);
  Hid fspace = checked(H5Dget_space(dset), H5Sclose, file, what);
  select_block(fspace.get(), f, start, count, file, what);
  Hid mspace = simple_space({n}, file);
  Hid mem_type = complex_mem_type(std::is_same_v<T, float>, file);
  Hid dxpl = collective_dxpl(file);
  checked(H5Dwrite(dset, mem_type.get(), mspace.get(), fspace.get(), dxpl.get(), data), file, what);
}

// The attributes every /solves/<name> group has (a propagator's sum or combine those of its columns).
struct SolveAttributes {
  int iterations = 0, restarts = 0;
  double true_residual = 0, seconds = 0, kappa = 0, csw = 0, tol = 0;
  bool converged = false;
  std::string source_kind;
};

void write_solve_attributes(hid_t g, const std::string& path, const SolveAttributes& a, const std::string& f) {
  attr_int(g, path, "iterations", a.iterations, f);
  attr_double(g, path, "true_residual", a.true_residual, f);
  attr_bool(g, path, "converged", a.converged, f);
  attr_double(g, path, "seconds", a.seconds, f);
  attr_double(g, path, "kappa", a.kappa, f);
  attr_double(g, path, "csw", a.csw, f);
  attr_double(g, path, "tol", a.tol, f);
  attr_int(g, path, "restarts", a.restarts, f);
  attr_string(g, path, "source_kind", a.source_kind, f);
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
  double compute_s, halo_wait_s, reduction_s, reductions_per_iteration, reduction_wait_s;
};

struct CommRowMem {
  std::int32_t rank, precision_bits;
  char direction[2];
  char transport[10];
  char exterior[6];
  std::int64_t calls;
  double bytes_per_call, exchange_s, exposed_s, hidden_fraction;
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

std::vector<KernelRow> kernel_rows(const std::vector<KernelMetric>& kernels) {
  std::vector<KernelRow> rows;
  rows.reserve(kernels.size());
  for (const KernelMetric& k : kernels) {
    rows.push_back(KernelRow{k.name.c_str(), k.calls, k.total_s, k.mean_s, k.min_s, k.flops, k.bytes, k.gbs,
                             k.percent_of_peak, k.res.registers, k.res.spill_bytes, k.res.shared_bytes, k.res.block,
                             k.res.occupancy});
  }
  return rows;
}

Hid rank_row_type(const std::string& file) {
  const std::string what = "create the /metrics/ranks row type";
  Hid t = checked(H5Tcreate(H5T_COMPOUND, sizeof(RankRow)), H5Tclose, file, what);
  checked(H5Tinsert(t.get(), "rank", HOFFSET(RankRow, rank), H5T_NATIVE_INT32), file, what);
  checked(H5Tinsert(t.get(), "compute_s", HOFFSET(RankRow, compute_s), H5T_NATIVE_DOUBLE), file, what);
  checked(H5Tinsert(t.get(), "halo_wait_s", HOFFSET(RankRow, halo_wait_s), H5T_NATIVE_DOUBLE), file, what);
  checked(H5Tinsert(t.get(), "reduction_s", HOFFSET(RankRow, reduction_s), H5T_NATIVE_DOUBLE), file, what);
  checked(H5Tinsert(t.get(), "reductions_per_iteration", HOFFSET(RankRow, reductions_per_iteration), H5T_NATIVE_DOUBLE),
          file, what);
  checked(H5Tinsert(t.get(), "reduction_wait_s", HOFFSET(RankRow, reduction_wait_s), H5T_NATIVE_DOUBLE), file, what);
  return t;
}

Hid fixed_string(std::size_t size, const std::string& file, const std::string& what) {
  Hid t = checked(H5Tcopy(H5T_C_S1), H5Tclose, file, what);
  checked(H5Tset_size(t.get(), size), file, what);
  checked(H5Tset_strpad(t.get(), H5T_STR_NULLTERM), file, what);
  return t;
}

Hid comm_row_type(const std::string& file) {
  const std::string what = "create the /metrics/comm row type";
  Hid dir = fixed_string(sizeof(CommRowMem::direction), file, what);
  Hid transport = fixed_string(sizeof(CommRowMem::transport), file, what);
  Hid exterior = fixed_string(sizeof(CommRowMem::exterior), file, what);
  Hid t = checked(H5Tcreate(H5T_COMPOUND, sizeof(CommRowMem)), H5Tclose, file, what);
  auto field = [&](const char* name, size_t offset, hid_t type) {
    checked(H5Tinsert(t.get(), name, offset, type), file, what);
  };
  field("rank", HOFFSET(CommRowMem, rank), H5T_NATIVE_INT32);
  field("precision_bits", HOFFSET(CommRowMem, precision_bits), H5T_NATIVE_INT32);
  field("direction", HOFFSET(CommRowMem, direction), dir.get());
  field("transport", HOFFSET(CommRowMem, transport), transport.get());
  field("exterior", HOFFSET(CommRowMem, exterior), exterior.get());
  field("calls", HOFFSET(CommRowMem, calls), H5T_NATIVE_INT64);
  field("bytes_per_call", HOFFSET(CommRowMem, bytes_per_call), H5T_NATIVE_DOUBLE);
  field("exchange_s", HOFFSET(CommRowMem, exchange_s), H5T_NATIVE_DOUBLE);
  field("exposed_s", HOFFSET(CommRowMem, exposed_s), H5T_NATIVE_DOUBLE);
  field("hidden_fraction", HOFFSET(CommRowMem, hidden_fraction), H5T_NATIVE_DOUBLE);
  return t;
}

CommRowMem comm_row_mem(const CommRow& r) {
  CommRowMem m{};
  m.rank = r.rank;
  m.precision_bits = r.precision_bits;
  m.direction[0] = "xyzt"[r.direction & 3];
  std::snprintf(m.transport, sizeof(m.transport), "%s", r.transport.c_str());
  std::snprintf(m.exterior, sizeof(m.exterior), "%s", r.split_exterior ? "split" : "fused");
  m.calls = r.calls;
  m.bytes_per_call = r.bytes_per_call;
  m.exchange_s = r.exchange_s;
  m.exposed_s = r.exposed_s;
  m.hidden_fraction = r.hidden_fraction;
  return m;
}

// What a step ended with on this rank.
enum FailureKind : int { kNone = 0, kRuntime = 1, kInput = 2 };

// Agrees on the outcome of a step: returns when it succeeded on every rank; otherwise every rank throws the
// exception of the lowest failing rank (its kind and message, the rank named when it is not 0). Collective.
void agree(MPI_Comm comm, int rank, int size, FailureKind kind, const std::string& message) {
  int first = kind != kNone ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int head[2] = {kind, static_cast<int>(std::min<std::size_t>(message.size(), INT_MAX))};
  MPI_Bcast(head, 2, MPI_INT, first, comm);
  std::string text = rank == first ? message : std::string(static_cast<std::size_t>(head[1]), '\0');
  text.resize(static_cast<std::size_t>(head[1]));
  MPI_Bcast(text.data(), head[1], MPI_CHAR, first, comm);
  if (first != 0) text += " (on rank " + std::to_string(first) + ")";
  if (head[0] == kInput) throw InputError(text);
  throw RuntimeFailure(text);
}

OutputIo resolve_mode(OutputIo requested, int size) {
  const bool available = OutputFile::collective_available();
  if (requested == OutputIo::Collective && !available) {
    throw InputError(
        "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" or "
        "\"auto\"");
  }
  if (requested == OutputIo::Auto) return available && size > 1 ? OutputIo::Collective : OutputIo::Gather;
  return requested;
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

std::string partial_path(const std::string& final_path) { return final_path + ".partial"; }

namespace {

// Reads a scalar attribute of `obj` if it exists (types converted by HDF5); false when absent.
bool read_attr(hid_t obj, const char* name, hid_t mem_type, void* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  Hid attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  return attr.get() >= 0 && H5Aread(attr.get(), mem_type, value) >= 0;
}

bool read_attr_string(hid_t obj, const char* name, std::string& value) {
  if (H5Aexists(obj, name) <= 0) return false;
  Hid attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Hid type(H5Aget_type(attr.get()), H5Tclose);
  if (attr.get() < 0 || type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING) return false;
  if (H5Tis_variable_str(type.get()) <= 0) return false;
  Hid mem(H5Tcopy(type.get()), H5Tclose);  // the file's own string type (HDF5 converts no character sets)
  char* text = nullptr;
  if (H5Aread(attr.get(), mem.get(), &text) < 0) return false;
  value = text ? text : "";
  Hid space(H5Aget_space(attr.get()), H5Sclose);
  H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &text);
  return true;
}

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
    Hid src = checked(H5Fopen(partial.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, final_path,
                      "open the partial file '" + partial + "'");
    Hid dst = checked(H5Fcreate(fresh.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, final_path,
                      "create '" + fresh + "'");
    Hid lcpl = checked(H5Pcreate(H5P_LINK_CREATE), H5Pclose, final_path, "create a link property list");
    checked(H5Pset_create_intermediate_group(lcpl.get(), 1), final_path, "create a link property list");
    for (const CompleteSolve& c : solves) {
      bool ok = true;
      for (const std::string group : {"/solves/", "/correlators/"}) {
        const std::string path = group + c.name;
        if (group == "/correlators/" && !(H5Lexists(src.get(), "/correlators", H5P_DEFAULT) > 0 &&
                                          H5Lexists(src.get(), path.c_str(), H5P_DEFAULT) > 0)) {
          continue;
        }
        ok = ok && H5Ocopy(src.get(), path.c_str(), dst.get(), path.c_str(), H5P_DEFAULT, lcpl.get()) >= 0;
      }
      if (!ok) {
        H5Eclear2(H5E_DEFAULT);
        for (const std::string group : {"/solves/", "/correlators/"}) {  // no half-copied solve
          const std::string path = group + c.name;
          if (H5Lexists(dst.get(), group.substr(0, group.size() - 1).c_str(), H5P_DEFAULT) > 0 &&
              H5Lexists(dst.get(), path.c_str(), H5P_DEFAULT) > 0) {
            H5Ldelete(dst.get(), path.c_str(), H5P_DEFAULT);
          }
        }
        H5Eclear2(H5E_DEFAULT);
      }
    }
    checked(H5Fclose(dst.release()), final_path, "close '" + fresh + "'");
  }
  if (std::rename(fresh.c_str(), partial.c_str()) != 0) {
    const int err = errno;
    std::remove(fresh.c_str());
    throw RuntimeFailure("HDF5 output '" + final_path + "': cannot rename '" + fresh + "' to '" + partial +
                         "': " + std::strerror(err));
  }
}

}  // namespace

RunState read_run_state(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const std::string why = "cannot read '" + path + "'";
  Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) {
    const std::string detail = hdf5_detail();
    throw RuntimeFailure(why + (detail.empty() ? "" : " (" + detail + ")") + ": not a readable HDF5 file");
  }
  RunState state;
  state.plaquette = std::nan("");
  Hid root(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose);
  if (root.get() < 0) throw RuntimeFailure(why + ": no root group");
  read_attr_string(root.get(), "physics_inputs", state.physics_inputs);
  if (H5Lexists(file.get(), "/gauge", H5P_DEFAULT) > 0) {
    Hid gauge(H5Gopen2(file.get(), "/gauge", H5P_DEFAULT), H5Gclose);
    if (gauge.get() >= 0) read_attr(gauge.get(), "plaquette", H5T_NATIVE_DOUBLE, &state.plaquette);
  }
  if (H5Lexists(file.get(), "/solves", H5P_DEFAULT) > 0) {
    Hid solves(H5Gopen2(file.get(), "/solves", H5P_DEFAULT), H5Gclose);
    if (solves.get() < 0) throw RuntimeFailure(why + ": cannot open /solves");
    std::vector<std::string> names;
    H5Literate(
        solves.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
          static_cast<std::vector<std::string>*>(data)->push_back(name);
          return 0;
        },
        &names);
    for (const std::string& name : names) {
      Hid g(H5Gopen2(solves.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
      if (g.get() < 0) continue;  // damaged: not complete
      std::int8_t complete = 0, converged = 0;
      if (!read_attr(g.get(), "complete", H5T_NATIVE_INT8, &complete) || complete != 1) continue;
      read_attr(g.get(), "converged", H5T_NATIVE_INT8, &converged);
      state.solves.push_back(CompleteSolve{name, converged == 1});
    }
  }
  H5Eclear2(H5E_DEFAULT);
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

RunState check_partial(const std::string& final_path, const OutputOptions& options) {
  const std::string partial = partial_path(final_path);
  std::error_code ec;
  if (!fs::exists(partial, ec)) return {};
  if (!options.resume) {
    if (options.overwrite) return {};
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
  if (!diff.empty()) {
    throw InputError("output.resume: the partial file '" + partial + "' was written by a different input (" + diff +
                     "); run that input, or remove the file to start again");
  }
  return state;
}

bool OutputFile::collective_available() { return EMPRISM_H5_COLLECTIVE != 0; }

template <typename Body>
void OutputFile::step(Body&& body) {
  FailureKind kind = kNone;
  std::string message;
  try {
    body();
  } catch (const InputError& e) {
    kind = kInput;
    message = e.what();
  } catch (const std::exception& e) {
    kind = kRuntime;
    message = e.what();
  } catch (...) {
    kind = kRuntime;
    message = "HDF5 output '" + final_path_ + "': unknown exception";
  }
  try {
    agree(comm_, rank_, size_, kind, message);
  } catch (...) {
    failed_together_ = true;
    throw;
  }
}

OutputFile::OutputFile(const std::string& final_path, bool overwrite, MPI_Comm comm, OutputIo mode)
    : final_path_(final_path), overwrite_(overwrite) {
  OutputOptions options;
  options.overwrite = overwrite;
  open(options, comm, mode);
}

OutputFile::OutputFile(const std::string& final_path, const OutputOptions& options, MPI_Comm comm, OutputIo mode)
    : final_path_(final_path), overwrite_(options.overwrite) {
  open(options, comm, mode);
}

void OutputFile::open(const OutputOptions& options, MPI_Comm comm, OutputIo mode) {
  const std::string& final_path = final_path_;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    throw RuntimeFailure("HDF5 output '" + final_path +
                         "': MPI is not initialised (make an emprism::MpiSession first)");
  }
  int size = 1;
  MPI_Comm_size(comm, &size);
  mode_ = resolve_mode(mode, size);  // the same on every rank: throws on all or none
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  try {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    temp_path_ = partial_path(final_path);
    step([&] { check_output_path(final_path, options.overwrite); });
    RunState previous;
    step([&] { previous = check_partial(final_path, options); });  // every rank: the same file system
    const bool resuming = options.resume && fs::exists(temp_path_);
    // Rank 0 carries the complete solves over to a fresh file that replaces the partial one.
    step([&] {
      if (!resuming || !is_root()) return;
      if (options.check_plaquette && !std::isnan(previous.plaquette) &&
          !(std::fabs(previous.plaquette - options.plaquette) <= 1e-10 * std::fabs(options.plaquette))) {
        throw InputError("output.resume: the gauge field's plaquette " + std::to_string(options.plaquette) +
                         " differs from " + std::to_string(previous.plaquette) + " in the partial file '" + temp_path_ +
                         "' (the gauge configuration changed); remove it to start again");
      }
      carry_over(temp_path_, previous.solves, final_path);
    });
    // Every rank reads which solves the rewritten partial file holds (the same file system everywhere).
    step([&] {
      if (resuming) resumed_ = read_run_state(temp_path_).solves;
    });
    complete_ = static_cast<int>(resumed_.size());

    step([&] {
      if (!holds_file()) return;
      const std::string& f = final_path_;
      Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, f, "create a file access property list");
#if EMPRISM_H5_COLLECTIVE
      if (mode_ == OutputIo::Collective) {
        checked(H5Pset_fapl_mpio(fapl.get(), comm_, MPI_INFO_NULL), f, "set up MPI-IO file access");
        checked(H5Pset_coll_metadata_write(fapl.get(), true), f, "set up collective metadata writes");
      }
#endif
      checked(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), f, "create a file access property list");
      // A partial file that cannot be created is not removed: another run may be writing it.
      const hid_t file = resuming ? H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, fapl.get())
                                  : H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
      if (file < 0) fail(f, (resuming ? "open the partial file '" : "create the partial file '") + temp_path_ + "'");
      file_ = file;
    });
    open_ = true;
  } catch (...) {
    close_file_quietly();
    MPI_Comm_free(&comm_);
    throw;
  }
}

void OutputFile::close_file_quietly() {
  if (file_ < 0) return;
  // Collective mode: H5Fclose is collective (and needs MPI); skip it while unwinding from an exception the other
  // ranks may not share (the caller then aborts; HDF5's shutdown would close the file).
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (mode_ == OutputIo::Gather || (!finalised && (failed_together_ || std::uncaught_exceptions() == 0))) {
    H5Fclose(file_);
  }
  file_ = -1;
}

OutputFile::~OutputFile() {
  close_file_quietly();
  open_ = false;
  // A partial file with complete solves is kept for a resumed run (the caller says so); otherwise nothing is left.
  if (!committed_ && complete_ == 0 && is_root() && !temp_path_.empty()) std::remove(temp_path_.c_str());
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (comm_ != MPI_COMM_NULL && !finalised) MPI_Comm_free(&comm_);
}

void OutputFile::require_open(const char* what) const {
  if (!open_ || committed_) {
    throw RuntimeFailure("HDF5 output '" + final_path_ + "': cannot " + what + ": the file is already " +
                         (committed_ ? "committed" : "closed"));
  }
}

void OutputFile::write_root(const RootInfo& info) {
  require_open("write the root attributes");
  step([&] {
    if (!holds_file()) return;
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
    attr_string(r, "/", "physics_inputs", info.physics_inputs, f);
    attr_string(r, "/", "input_hash", info.input_hash, f);
  });
}

void OutputFile::write_input(const std::string& toml_text) {
  require_open("write dataset '/input'");
  step([&] {
    if (!holds_file()) return;
    Hid type = Types(final_path_).vlen_string();
    if (mode_ == OutputIo::Collective) {  // MPI-IO cannot write variable-length data: commit() does
      create_dataset(file_, "/", "input", type.get(), {}, final_path_);
      pending_input_ = true;
      if (is_root()) pending_input_text_ = toml_text;
      return;
    }
    const char* p = toml_text.c_str();
    write_dataset(Io{}, file_, "/", "input", type.get(), type.get(), {}, &p, final_path_);
  });
}

void OutputFile::write_gauge(const GaugeInfo& gauge, const std::array<int, 4>& extents) {
  write_gauge(gauge, BlockLayout::whole(extents), gauge.links.empty() ? nullptr : &gauge.links);
}

void OutputFile::write_gauge(const GaugeInfo& gauge, const BlockLayout& block,
                             const std::vector<std::complex<double>>* local_links) {
  require_open("write group '/gauge'");
  const std::string& f = final_path_;
  const Field field = make_field("/gauge/links", {4, 3, 3}, false);
  const std::vector<Block> blocks = gather_blocks(comm_, size_, block, local_links != nullptr);
  bool links = false;
  step([&] {
    links = blocks[0].has_data != 0;
    for (const Block& b : blocks) {
      if ((b.has_data != 0) != links) {
        throw RuntimeFailure("HDF5 output '" + f + "': cannot write dataset '/gauge/links': links are given on " +
                             "some ranks only");
      }
    }
    if (!links) return;
    check_blocks(blocks, f, "dataset '/gauge/links'");
    check_field_size(*local_links, blocks[rank_], field.per_site, field.path, f);
  });

  Hid group, dset;
  GatherBuffers<double> buffers;
  step([&] {
    if (mode_ == OutputIo::Gather && links) buffers = gather_buffers<double>(rank_, blocks[rank_], field);
    if (!holds_file()) return;
    group = create_group(file_, "gauge", "/gauge", f);
    attr_double(group.get(), "/gauge", "plaquette", gauge.plaquette, f);
    attr_double(group.get(), "/gauge", "link_trace", gauge.link_trace, f);
    attr_string(group.get(), "/gauge", "source", gauge.source, f);
    if (links) dset = create_field(group.get(), "/gauge", "links", blocks[0].global, field, f);
  });
  if (!links) return;

  if (mode_ == OutputIo::Collective) {
    step([&] { write_field_collective<double>(dset.get(), blocks[rank_], field, local_links->data(), f); });
    return;
  }
  std::string err;
  gather_field<double>(comm_, rank_, blocks, dset.get(), field, local_links->data(), buffers, f, err);
  step([&] {
    if (!err.empty()) throw RuntimeFailure(err);
  });
}

struct OutputFile::FieldWrite {
  hid_t dset;                        // valid where holds_file()
  const std::vector<Block>& blocks;  // every rank's block
  const Field& field;                // its shape, precision and (for a propagator) which column
  const cplx* data;                  // this rank's block, local natural order
  GatherBuffers<float>& fbuf;        // gather buffers of the field's precision
  GatherBuffers<double>& dbuf;
  std::string& err;  // gather mode: the first failure, thrown by the caller's next step
};

void OutputFile::write_field(const FieldWrite& w) {
  const std::string& f = final_path_;
  if (mode_ == OutputIo::Collective) {
    step([&] {
      if (w.field.single) {
        write_field_collective<float>(w.dset, w.blocks[rank_], w.field, w.data, f);
      } else {
        write_field_collective<double>(w.dset, w.blocks[rank_], w.field, w.data, f);
      }
    });
  } else if (w.field.single) {
    gather_field<float>(comm_, rank_, w.blocks, w.dset, w.field, w.data, w.fbuf, f, w.err);
  } else {
    gather_field<double>(comm_, rank_, w.blocks, w.dset, w.field, w.data, w.dbuf, f, w.err);
  }
}

void OutputFile::write_solve(const SolveRecord& rec, const BlockLayout& block) {
  require_open("write a solve");
  const std::string& f = final_path_;
  const std::string path = "/solves/" + rec.name;
  const Field sol = make_field(path + "/solution", {4, 3}, rec.single_precision);
  const Field src = make_field(path + "/source", {4, 3}, rec.single_precision);
  const std::vector<Block> blocks = gather_blocks(comm_, size_, block, true);
  // residual_history is rank 0's; every rank that creates the dataset needs its length.
  unsigned long long history = rec.residual_history.size();
  if (mode_ == OutputIo::Collective) MPI_Bcast(&history, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
  step([&] {
    if (rec.name.empty() || rec.name == "." || rec.name.find('/') != std::string::npos) {
      throw RuntimeFailure("HDF5 output '" + f + "': cannot write solve '" + rec.name +
                           "': a solve name must be non-empty and contain no '/'");
    }
    check_blocks(blocks, f, "group '" + path + "'");
    if (rec.write_fields) {
      check_field_size(rec.solution, blocks[rank_], sol.per_site, sol.path, f);
      check_field_size(rec.source, blocks[rank_], src.per_site, src.path, f);
    }
  });

  Hid group, sol_dset, src_dset;
  GatherBuffers<float> fbuf;
  GatherBuffers<double> dbuf;
  step([&] {
    if (mode_ == OutputIo::Gather && rec.write_fields) {
      if (rec.single_precision) {
        fbuf = gather_buffers<float>(rank_, blocks[rank_], sol);
      } else {
        dbuf = gather_buffers<double>(rank_, blocks[rank_], sol);
      }
    }
    if (!holds_file()) return;
    Hid solves = open_or_create_group(file_, "solves", "/solves", f);
    group = create_group(solves.get(), rec.name, path, f);
    const hid_t g = group.get();
    write_solve_attributes(g, path,
                           SolveAttributes{rec.iterations, rec.restarts, rec.true_residual, rec.seconds, rec.kappa,
                                           rec.csw, rec.tol, rec.converged, rec.source_kind},
                           f);
    if (rec.write_fields) {
      sol_dset = create_field(g, path, "solution", blocks[0].global, sol, f);
      src_dset = create_field(g, path, "source", blocks[0].global, src, f);
    }
  });

  const Io io{mode_ == OutputIo::Collective, is_root()};
  auto write_history = [&] {
    if (!holds_file()) return;
    write_dataset(io, group.get(), path, "residual_history", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {hsize_t(history)},
                  rec.residual_history.data(), f);
  };
  if (!rec.write_fields) {
    step(write_history);
    return;
  }
  std::string err;
  write_field(FieldWrite{sol_dset.get(), blocks, sol, rec.solution.data(), fbuf, dbuf, err});
  write_field(FieldWrite{src_dset.get(), blocks, src, rec.source.data(), fbuf, dbuf, err});
  step([&] {
    if (!err.empty()) throw RuntimeFailure(err);
    write_history();
  });
}

void OutputFile::write_propagator(const PropagatorRecord& rec, const BlockLayout& block) {
  require_open("write a propagator");
  const std::string& f = final_path_;
  const std::string path = "/solves/" + rec.name;
  Field prop = make_field(path + "/propagator", {4, 3}, rec.single_precision);
  prop.lead = {4, 3};
  const std::vector<Block> blocks = gather_blocks(comm_, size_, block, true);
  // The residual histories are rank 0's; every rank that creates the datasets needs their lengths.
  std::array<unsigned long long, 12> history{};
  for (int k = 0; k < 12; ++k) history[k] = rec.residual_history[k].size();
  if (mode_ == OutputIo::Collective) MPI_Bcast(history.data(), 12, MPI_UNSIGNED_LONG_LONG, 0, comm_);
  step([&] {
    if (rec.name.empty() || rec.name == "." || rec.name.find('/') != std::string::npos) {
      throw RuntimeFailure("HDF5 output '" + f + "': cannot write solve '" + rec.name +
                           "': a solve name must be non-empty and contain no '/'");
    }
    check_blocks(blocks, f, "group '" + path + "'");
    if (rec.write_fields) {
      if (rec.columns == nullptr) {
        throw RuntimeFailure("HDF5 output '" + f + "': cannot write dataset '" + prop.path + "': no columns given");
      }
      for (const auto& column : *rec.columns) check_field_size(column, blocks[rank_], prop.per_site, prop.path, f);
    }
  });

  Hid group, dset;
  GatherBuffers<float> fbuf;
  GatherBuffers<double> dbuf;
  step([&] {
    if (mode_ == OutputIo::Gather && rec.write_fields) {
      if (rec.single_precision) {
        fbuf = gather_buffers<float>(rank_, blocks[rank_], prop);
      } else {
        dbuf = gather_buffers<double>(rank_, blocks[rank_], prop);
      }
    }
    if (!holds_file()) return;
    Hid solves = open_or_create_group(file_, "solves", "/solves", f);
    group = create_group(solves.get(), rec.name, path, f);
    const hid_t g = group.get();
    SolveAttributes a{0, 0, 0, 0, rec.kappa, rec.csw, rec.tol, true, "propagator"};
    std::vector<std::int32_t> column_iterations;
    std::vector<double> column_residual;
    for (int k = 0; k < 12; ++k) {
      a.iterations += rec.iterations[k];
      a.restarts += rec.restarts[k];
      a.seconds += rec.seconds[k];
      a.true_residual = std::max(a.true_residual, rec.true_residual[k]);
      a.converged = a.converged && rec.converged[k];
      column_iterations.push_back(rec.iterations[k]);
      column_residual.push_back(rec.true_residual[k]);
    }
    write_solve_attributes(g, path, a, f);
    attr_int4(g, path, "source_site", rec.source_site, f);
    attr_string(g, path, "smearing", rec.smearing, f);
    attr_int(g, path, "smearing_steps", rec.smearing_steps, f);
    attr_double(g, path, "smearing_weight", rec.smearing_weight, f);
    attr_string(g, path, "link_smearing", rec.link_smearing, f);
    attr_int(g, path, "link_smearing_steps", rec.link_smearing_steps, f);
    attr_double(g, path, "link_smearing_weight", rec.link_smearing_weight, f);
    attr_double(g, path, "smeared_plaquette", rec.smeared_plaquette, f);
    const Io io{mode_ == OutputIo::Collective, is_root()};
    write_dataset(io, g, path, "column_iterations", H5T_STD_I32LE, H5T_NATIVE_INT32, {4, 3}, column_iterations.data(),
                  f);
    write_dataset(io, g, path, "column_true_residual", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4, 3},
                  column_residual.data(), f);
    Hid histories = create_group(g, "residual_history", path + "/residual_history", f);
    for (int k = 0; k < 12; ++k) {
      const std::string name = "s" + std::to_string(k / 3) + "c" + std::to_string(k % 3);
      write_dataset(io, histories.get(), path + "/residual_history", name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                    {hsize_t(history[k])}, rec.residual_history[k].data(), f);
    }
    if (rec.write_fields) dset = create_field(g, path, "propagator", blocks[0].global, prop, f);
  });
  if (!rec.write_fields) return;

  std::string err;
  for (int k = 0; k < 12; ++k) {
    prop.at = {hsize_t(k / 3), hsize_t(k % 3)};
    write_field(FieldWrite{dset.get(), blocks, prop, (*rec.columns)[k].data(), fbuf, dbuf, err});
  }
  step([&] {
    if (!err.empty()) throw RuntimeFailure(err);
  });
}

void OutputFile::write_correlators(const CorrelatorRecord& rec) {
  require_open("write correlators");
  const std::string& f = final_path_;
  const std::string path = "/correlators/" + rec.name;
  step([&] {
    if (rec.name.empty() || rec.name == "." || rec.name.find('/') != std::string::npos) {
      throw RuntimeFailure("HDF5 output '" + f + "': cannot write correlators '" + rec.name +
                           "': a name must be non-empty and contain no '/'");
    }
    if (!holds_file()) return;
    const Io io{mode_ == OutputIo::Collective, is_root()};
    Hid all = open_or_create_group(file_, "correlators", "/correlators", f);
    Hid group = create_group(all.get(), rec.name, path, f);
    const hid_t g = group.get();
    attr_int4(g, path, "source_site", rec.source_site, f);
    std::vector<std::int32_t> momenta;
    for (const auto& p : rec.momenta) momenta.insert(momenta.end(), p.begin(), p.end());
    attr_ints(g, path, "momenta", {rec.momenta.size(), 3}, momenta, f);
    attr_strings(g, path, "channels", rec.channels, f);
    attr_string(g, path, "sink", "point", f);
    attr_string(g, path, "convention", rec.convention, f);
    Hid ctype = complex_file_type(false, f);
    Hid cmem = complex_mem_type(false, f);
    for (const auto& p : rec.momenta) {
      // (0, 0, 0) in the group itself, the others in p<nx>_<ny>_<nz>.
      Hid sub;
      std::string sub_path = path;
      hid_t where = g;
      if (p != std::array<int, 3>{0, 0, 0}) {
        const std::string name = "p" + std::to_string(p[0]) + "_" + std::to_string(p[1]) + "_" + std::to_string(p[2]);
        sub_path = path + "/" + name;
        sub = create_group(g, name, sub_path, f);
        where = sub.get();
      }
      Hid meff = create_group(where, "effective_mass", sub_path + "/effective_mass", f);
      for (const CorrelatorRecord::Entry& e : rec.entries) {
        if (e.momentum != p) continue;
        const std::string cpath = sub_path + "/" + e.channel;
        Hid d = create_dataset(where, sub_path, e.channel, ctype.get(), {e.values.size()}, f);
        write_whole(io, d.get(), cpath, cmem.get(), e.values.size(), e.values.data(), f);
        attr_string(d.get(), cpath, "gamma_sink", e.gamma_sink, f);
        attr_string(d.get(), cpath, "gamma_source", e.gamma_source, f);
        attr_int(d.get(), cpath, "time_parity", e.time_parity, f);
        attr_ints(d.get(), cpath, "momentum", {3}, {e.momentum[0], e.momentum[1], e.momentum[2]}, f);
        const std::string mpath = sub_path + "/effective_mass/" + e.channel;
        Hid m = create_dataset(meff.get(), sub_path + "/effective_mass", e.channel, H5T_IEEE_F64LE,
                               {e.effective_mass.size()}, f);
        write_whole(io, m.get(), mpath, H5T_NATIVE_DOUBLE, e.effective_mass.size(), e.effective_mass.data(), f);
        attr_string(m.get(), mpath, "form", e.time_parity > 0 ? "cosh" : "sinh", f);
      }
    }
    if (!rec.pcac_mass.empty()) {
      write_dataset(io, g, path, "pcac_mass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rec.pcac_mass.size()},
                    rec.pcac_mass.data(), f);
    }
  });
}

void OutputFile::mark_complete(const std::string& name) {
  require_open("mark a solve complete");
  const std::string& f = final_path_;
  const std::string path = "/solves/" + name;
  step([&] {
    if (!holds_file()) return;
    Hid g = checked(H5Gopen2(file_, path.c_str(), H5P_DEFAULT), H5Gclose, f, "open group '" + path + "'");
    attr_bool(g.get(), path, "complete", true, f);
  });
  flush();
  ++complete_;
}

void OutputFile::write_metrics(const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                               const std::vector<RankTimes>& my_rows) {
  require_open("write group '/metrics'");
  const std::string& f = final_path_;

  // /metrics/ranks: every rank's rows, in rank order, on rank 0.
  std::vector<RankRow> mine;
  mine.reserve(my_rows.size());
  for (const RankTimes& r : my_rows)
    mine.push_back(
        RankRow{r.rank, r.compute_s, r.halo_wait_s, r.reduction_s, r.reductions_per_iteration, r.reduction_wait_s});
  int my_count = static_cast<int>(mine.size());
  std::vector<int> counts(size_), bytes(size_), displs(size_);
  MPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
  std::size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    bytes[r] = counts[r] * static_cast<int>(sizeof(RankRow));
    displs[r] = static_cast<int>(total * sizeof(RankRow));
    total += static_cast<std::size_t>(counts[r]);
  }
  std::vector<RankRow> rows(is_root() ? total : 0);
  MPI_Gatherv(mine.data(), my_count * static_cast<int>(sizeof(RankRow)), MPI_BYTE, rows.data(), bytes.data(),
              displs.data(), MPI_BYTE, 0, comm_);
  // The kernel table is rank 0's; every rank that creates the dataset needs its length.
  unsigned long long nk = kernels.size();
  if (mode_ == OutputIo::Collective) MPI_Bcast(&nk, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);

  step([&] {
    if (!holds_file()) return;
    const Io io{mode_ == OutputIo::Collective, is_root()};
    Hid metrics = create_group(file_, "metrics", "/metrics", f);

    Hid peak_group = create_group(metrics.get(), "peak", "/metrics/peak", f);
    const hid_t pg = peak_group.get();
    attr_double(pg, "/metrics/peak", "copy_gbs", peak.copy_gbs, f);
    attr_double(pg, "/metrics/peak", "triad_gbs", peak.triad_gbs, f);
    attr_double(pg, "/metrics/peak", "read_gbs", peak.read_gbs, f);
    attr_double(pg, "/metrics/peak", "peak_gbs", peak.peak_gbs, f);
    attr_bool(pg, "/metrics/peak", "measured", peak.measured, f);

    Hid kmem = kernel_row_type(f);
    Hid kfile = Types(f).packed(kmem.get());
    if (io.collective) {  // MPI-IO cannot write variable-length data (the names): commit() does
      create_dataset(metrics.get(), "/metrics", "kernels", kfile.get(), {hsize_t(nk)}, f);
      pending_kernels_ = true;
      if (is_root()) pending_kernel_rows_ = kernels;
    } else {
      const std::vector<KernelRow> krows = kernel_rows(kernels);
      write_dataset(io, metrics.get(), "/metrics", "kernels", kfile.get(), kmem.get(), {krows.size()}, krows.data(), f);
    }

    Hid rmem = rank_row_type(f);
    Hid rfile = Types(f).packed(rmem.get());
    write_dataset(io, metrics.get(), "/metrics", "ranks", rfile.get(), rmem.get(), {total}, rows.data(), f);
  });
}

void OutputFile::write_comm_metrics(const std::vector<CommRow>& my_rows) {
  require_open("write dataset '/metrics/comm'");
  const std::string& f = final_path_;
  std::vector<CommRowMem> mine;
  mine.reserve(my_rows.size());
  for (const CommRow& r : my_rows) mine.push_back(comm_row_mem(r));
  // Every rank's rows, in rank order, on rank 0 (as /metrics/ranks).
  const int row = static_cast<int>(sizeof(CommRowMem));
  int my_count = static_cast<int>(mine.size());
  std::vector<int> counts(size_), bytes(size_), displs(size_);
  MPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
  std::size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    bytes[r] = counts[r] * row;
    displs[r] = static_cast<int>(total) * row;
    total += static_cast<std::size_t>(counts[r]);
  }
  std::vector<CommRowMem> rows(is_root() ? total : 0);
  MPI_Gatherv(mine.data(), my_count * row, MPI_BYTE, rows.data(), bytes.data(), displs.data(), MPI_BYTE, 0, comm_);
  step([&] {
    if (!holds_file()) return;
    const Io io{mode_ == OutputIo::Collective, is_root()};
    Hid metrics = checked(H5Gopen2(file_, "/metrics", H5P_DEFAULT), H5Gclose, f, "open group '/metrics'");
    Hid mem = comm_row_type(f);
    Hid file_type = Types(f).packed(mem.get());
    write_dataset(io, metrics.get(), "/metrics", "comm", file_type.get(), mem.get(), {total}, rows.data(), f);
  });
}

void OutputFile::flush() {
  require_open("flush");
  step([&] {
    if (!holds_file()) return;
    checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), final_path_, "flush the partial file '" + temp_path_ + "'");
  });
}

void OutputFile::write_deferred() {
  if (!pending_input_ && !pending_kernels_) return;
  const std::string& f = final_path_;
  const std::string what = "reopen the partial file '" + temp_path_ + "'";
  Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, f, what);
  checked(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), f, what);
  Hid file = checked(H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, f, what);
  if (pending_input_) {
    Hid type = Types(f).vlen_string();
    Hid dset = checked(H5Dopen2(file.get(), "/input", H5P_DEFAULT), H5Dclose, f, "open dataset '/input'");
    const char* p = pending_input_text_.c_str();
    write_whole(Io{}, dset.get(), "/input", type.get(), 1, &p, f);
  }
  if (pending_kernels_) {
    const std::vector<KernelRow> krows = kernel_rows(pending_kernel_rows_);
    Hid kmem = kernel_row_type(f);
    Hid dset =
        checked(H5Dopen2(file.get(), "/metrics/kernels", H5P_DEFAULT), H5Dclose, f, "open dataset '/metrics/kernels'");
    write_whole(Io{}, dset.get(), "/metrics/kernels", kmem.get(), krows.size(), krows.data(), f);
  }
  checked(H5Fclose(file.release()), f, "close the partial file '" + temp_path_ + "'");
}

void OutputFile::commit() {
  if (committed_) return;
  require_open("commit");
  open_ = false;
  const hid_t file = file_;
  file_ = -1;
  step([&] {  // collective in Collective mode; the agreement after it means every rank has closed
    if (file >= 0) checked(H5Fclose(file), final_path_, "close the partial file '" + temp_path_ + "'");
  });
  step([&] {
    if (!is_root()) return;
    write_deferred();
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

}  // namespace emprism::io
