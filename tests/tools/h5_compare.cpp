// h5_compare.cpp: compares two EmPRiSM-MPI output files (docs/conventions.md s. 13) for the rank-independence tests.
//
//   h5_compare A.h5 B.h5 [--rtol R] [--iter-slack N] [--ignore-data PATH]... [--cross-backend]
//
// B is the reference. Exit 0 and "h5_compare: A and B agree (N datasets)" on stdout when every rule below holds;
// exit 1 with one line per problem on stderr ("h5_compare: <path>: ...") when one does not; exit 2 for a bad
// command line or a file that cannot be opened or read.
// Rules (paths are absolute; /metrics/* holds timings and is skipped, /metrics itself must exist in both):
//   - objects: both files hold the same groups, datasets and named datatypes (H5Ovisit); a path present in one
//     file only is reported with the file that has it; an object that is a group in one and a dataset in the
//     other is a problem;
//   - shape and type: every dataset (and attribute) has the same rank, dimensions, type class and type size in
//     both; compounds also have the same member names in the same order;
//   - values: floating-point data (float datasets, and the float members of a compound such as complex {r, i},
//     taken together) must satisfy |a - b| <= rtol |b| in the 2-norm over the whole dataset (a NaN must be NaN
//     in both files at the same place, as for undefined effective masses; an infinity fails); integers, enums (bool),
//     strings and anything else must be equal exactly;
//   - attributes: every object has the same attribute names in both, and each attribute follows the value rules,
//     except: on the root group, ranks, process_grid, date, git_hash and device (the run's hardware and threads)
//     are not compared (they may differ);
//     on /solves/<name> groups, seconds (a timing) is not compared, iterations and restarts may differ by at most
//     --iter-slack, converged must be equal, and true_residual (already relative to |b|) must satisfy
//     |a - b| <= max(100 rtol |b|, rtol) (relative to the value, or absolute at the size of one rtol of |b|:
//     near the solver's tolerance the residual of two equally good solutions differs by rounding of the solution
//     amplified by the operator, not by rounding of the residual itself);
//   - with --iter-slack N > 0, /solves/<name>/residual_history (and a propagator's residual_history/<column>) may
//     differ in length by at most N; the common leading part is then compared; a propagator's column_iterations
//     may differ by N each, and its iterations and restarts attributes (sums over 12 columns) by 12 N; its
//     column_true_residual values each follow the rule of the true_residual attribute below;
//   - --cross-backend: files from different backends (CPU and GPU builds): the root attribute backend is not
//     compared either;
//   - --ignore-data PATH (repeatable): the dataset at PATH must exist in both with the same shape and type, but
//     its values are not compared (e.g. /input, whose TOML text names the process grid or the output mode);
//     a PATH in neither file is a problem (a misspelt path would otherwise hide nothing and pass silently).
// Defaults: --rtol 1e-6, --iter-slack 0.
// Who may call: anyone (tests, people); needs the HDF5 C library only (no MPI calls, no MPI initialisation).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // parallel HDF5's headers include mpi.h; keep its C++ bindings out
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kExitAgree = 0;
constexpr int kExitDiffer = 1;
constexpr int kExitUsage = 2;

// A failure to read a file (not a difference between the files): exit 2.
class ReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Owns one HDF5 identifier and closes it with the matching function.
class Hid {
 public:
  Hid() = default;
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid(Hid&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  ~Hid() { reset(); }
  hid_t get() const { return id_; }
  void reset() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

Hid check(hid_t id, herr_t (*close)(hid_t), const std::string& what) {
  if (id < 0) throw ReadError("cannot " + what);
  return Hid(id, close);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw ReadError("cannot " + what);
}

struct Options {
  std::string a, b;
  double rtol = 1e-6;
  long iter_slack = 0;
  std::set<std::string> ignore_data;
  bool cross_backend = false;  // --cross-backend: the root attributes backend and device may differ
};

// One problem line per difference; counted to decide the exit code.
class Report {
 public:
  void problem(const std::string& path, const std::string& text) {
    std::cerr << "h5_compare: " << path << ": " << text << "\n";
    ++count_;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool skipped_path(const std::string& path) { return starts_with(path, "/metrics/"); }

// /solves/<name> exactly (one level below /solves).
bool is_solve_group(const std::string& path) {
  return starts_with(path, "/solves/") && path.size() > 8 && path.find('/', 8) == std::string::npos;
}

// /solves/<name>/<tail> exactly.
bool is_in_solve_group(const std::string& path, const std::string& tail) {
  return starts_with(path, "/solves/") && path.size() > tail.size() + 1 &&
         path.compare(path.size() - tail.size() - 1, tail.size() + 1, "/" + tail) == 0 &&
         is_solve_group(path.substr(0, path.size() - tail.size() - 1));
}

// /solves/<name>/residual_history, or a propagator's /solves/<name>/residual_history/<column>.
bool is_residual_history(const std::string& path) {
  if (is_in_solve_group(path, "residual_history")) return true;
  const std::size_t slash = path.rfind('/');
  return slash != std::string::npos && slash > 0 && is_in_solve_group(path.substr(0, slash), "residual_history");
}

// ---- objects -----------------------------------------------------------------------------------------------

// The object-info struct and visit call of the HDF5 release we build against (1.10 and 1.12+ differ).
#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;
#else
using ObjectInfo = H5O_info_t;
#endif

herr_t visit_cb(hid_t, const char* name, const ObjectInfo* info, void* data) {
  auto* objects = static_cast<std::map<std::string, H5O_type_t>*>(data);
  const std::string path = std::strcmp(name, ".") == 0 ? "/" : "/" + std::string(name);
  (*objects)[path] = info->type;
  return 0;
}

std::map<std::string, H5O_type_t> list_objects(hid_t file, const std::string& file_name) {
  std::map<std::string, H5O_type_t> objects;
#if H5_VERSION_GE(1, 12, 0)
  const herr_t status = H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &objects, H5O_INFO_BASIC);
#elif H5_VERSION_GE(1, 10, 3)
  const herr_t status = H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &objects, H5O_INFO_BASIC);
#else
  const herr_t status = H5Ovisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &objects);
#endif
  check(status, "walk the objects of " + file_name);
  return objects;
}

const char* type_name(H5O_type_t t) {
  switch (t) {
    case H5O_TYPE_GROUP:
      return "group";
    case H5O_TYPE_DATASET:
      return "dataset";
    case H5O_TYPE_NAMED_DATATYPE:
      return "named datatype";
    default:
      return "object of unknown type";
  }
}

// ---- shapes, types and values of datasets and attributes ----------------------------------------------------

// A dataset or an attribute: what is needed to read it whole.
struct Item {
  std::string what;  // for messages, e.g. "dataset" or "attribute 'iterations'"
  hid_t id = -1;
  bool attribute = false;

  Hid type() const {
    return attribute ? check(H5Aget_type(id), H5Tclose, "get the type of " + what)
                     : check(H5Dget_type(id), H5Tclose, "get the type of " + what);
  }
  Hid space() const {
    return attribute ? check(H5Aget_space(id), H5Sclose, "get the dataspace of " + what)
                     : check(H5Dget_space(id), H5Sclose, "get the dataspace of " + what);
  }
  void read(hid_t mem_type, void* buf) const {
    if (attribute) {
      check(H5Aread(id, mem_type, buf), "read " + what);
    } else {
      check(H5Dread(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "read " + what);
    }
  }
};

std::vector<hsize_t> dims_of(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw ReadError("cannot get the rank of a dataspace");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

std::string dims_str(const std::vector<hsize_t>& d) {
  if (d.empty()) return "scalar";
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

std::size_t npoints(hid_t space) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0) throw ReadError("cannot count the points of a dataspace");
  return static_cast<std::size_t>(n);
}

const char* class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER:
      return "integer";
    case H5T_FLOAT:
      return "float";
    case H5T_STRING:
      return "string";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_COMPOUND:
      return "compound";
    case H5T_REFERENCE:
      return "reference";
    case H5T_ENUM:
      return "enum";
    case H5T_VLEN:
      return "vlen";
    case H5T_ARRAY:
      return "array";
    default:
      return "unknown";
  }
}

std::vector<std::string> member_names(hid_t type) {
  std::vector<std::string> names;
  const int n = H5Tget_nmembers(type);
  for (int m = 0; m < n; ++m) {
    char* name = H5Tget_member_name(type, static_cast<unsigned>(m));
    names.emplace_back(name != nullptr ? name : "");
    H5free_memory(name);
  }
  return names;
}

// Same type class, size and (compounds) member names; reports and returns false otherwise.
bool same_type(hid_t ta, hid_t tb, const std::string& path, const std::string& what, Report& report) {
  const H5T_class_t ca = H5Tget_class(ta), cb = H5Tget_class(tb);
  if (ca != cb) {
    report.problem(path, what + " has type class " + class_name(ca) + " in A but " + class_name(cb) + " in B");
    return false;
  }
  const bool vlen_a = ca == H5T_STRING && H5Tis_variable_str(ta) > 0;
  const bool vlen_b = cb == H5T_STRING && H5Tis_variable_str(tb) > 0;
  if (vlen_a != vlen_b) {
    report.problem(path, what + " is a " + (vlen_a ? "variable" : "fixed") + "-length string in A but not in B");
    return false;
  }
  if (!vlen_a && H5Tget_size(ta) != H5Tget_size(tb)) {
    report.problem(path, what + " has " + std::to_string(H5Tget_size(ta)) + "-byte " + class_name(ca) +
                             " elements in A but " + std::to_string(H5Tget_size(tb)) + "-byte in B");
    return false;
  }
  if (ca == H5T_COMPOUND && member_names(ta) != member_names(tb)) {
    report.problem(path, what + " has different compound members in A and B");
    return false;
  }
  return true;
}

// The values of one dataset or attribute, split by how they are compared.
struct Values {
  std::vector<double> floats;        // float elements, and float members of compounds, in order
  std::vector<std::string> exact;    // everything else, one string (raw bytes or text) per element and member
  std::vector<std::string> members;  // which member each exact entry belongs to (for messages)
};

std::string raw_bytes(const unsigned char* p, std::size_t n) {
  return std::string(reinterpret_cast<const char*>(p), n);
}

// Reads member `name` (type `mtype`, of class `c`) of every element of compound `item`, or the whole item when
// name is empty, and appends its values to v.
void read_part(const Item& item, hid_t ftype, std::size_t n, const std::string& name, Values& v) {
  const H5T_class_t c = H5Tget_class(ftype);
  // Memory type of the part: double for floats, the file's string type for strings (a char* per element when
  // variable-length), the native version of the file type for the rest (compared byte by byte).
  Hid part;
  std::size_t part_size = 0;
  bool vlen_string = false;
  if (c == H5T_FLOAT) {
    part = check(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose, "copy a type");
  } else if (c == H5T_STRING) {  // the file's own type: HDF5 does not convert between ASCII and UTF-8
    part = check(H5Tcopy(ftype), H5Tclose, "copy a type");
    vlen_string = H5Tis_variable_str(ftype) > 0;
  } else {
    part = check(H5Tget_native_type(ftype, H5T_DIR_ASCEND), H5Tclose, "get the native type of " + item.what);
  }
  part_size = H5Tget_size(part.get());
  Hid mem;
  std::size_t stride = part_size;
  if (name.empty()) {
    mem = std::move(part);
  } else {
    mem = check(H5Tcreate(H5T_COMPOUND, part_size), H5Tclose, "create a compound type");
    check(H5Tinsert(mem.get(), name.c_str(), 0, part.get()), "create a compound type");
  }
  std::vector<unsigned char> buf(std::max<std::size_t>(n * stride, 1));
  if (n > 0) item.read(mem.get(), buf.data());
  for (std::size_t k = 0; k < n; ++k) {
    const unsigned char* p = buf.data() + k * stride;
    if (c == H5T_FLOAT) {
      double d;
      std::memcpy(&d, p, sizeof d);
      v.floats.push_back(d);
    } else if (vlen_string) {
      char* s;
      std::memcpy(&s, p, sizeof s);
      v.exact.emplace_back(s != nullptr ? s : "");
      v.members.push_back(name);
    } else {
      v.exact.push_back(raw_bytes(p, stride));
      v.members.push_back(name);
    }
  }
  if (vlen_string && n > 0) {
    Hid space = item.space();
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
#else
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
#endif
  }
}

Values read_values(const Item& item, std::size_t n) {
  Values v;
  Hid ftype = item.type();
  if (H5Tget_class(ftype.get()) == H5T_COMPOUND) {
    const std::vector<std::string> names = member_names(ftype.get());
    for (unsigned m = 0; m < names.size(); ++m) {
      Hid mtype = check(H5Tget_member_type(ftype.get(), m), H5Tclose, "get a member type of " + item.what);
      read_part(item, mtype.get(), n, names[m], v);
    }
  } else {
    read_part(item, ftype.get(), n, "", v);
  }
  return v;
}

// |a - b| / |b| over the float values of the first n elements; the values are stored part by part (one part per
// float member of a compound, or one part), na resp. nb elements per part. NaN in both at the same place counts as
// equal; NaN when a value is NaN in one file only or infinite.
double relative_difference(const std::vector<double>& a, std::size_t na, const std::vector<double>& b, std::size_t nb,
                           std::size_t parts, std::size_t n) {
  long double diff = 0, ref = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    for (std::size_t k = 0; k < n; ++k) {
      const double x = a[p * na + k], y = b[p * nb + k];
      if (std::isnan(x) && std::isnan(y)) continue;  // "undefined here" in both (e.g. an effective mass)
      if (!std::isfinite(x) || !std::isfinite(y)) return std::nan("");
      const long double d = static_cast<long double>(x) - y;
      diff += d * d;
      ref += static_cast<long double>(y) * y;
    }
  }
  if (diff == 0) return 0;
  if (ref == 0) return HUGE_VAL;
  return static_cast<double>(std::sqrt(diff / ref));
}

enum class Rule { Values, Skip, Slack, TrueResidual };

// |a - b| <= max(100 rtol |b|, rtol): the rule of the true_residual attribute (see the file comment).
bool residuals_agree(double a, double b, double rtol) {
  return std::fabs(a - b) <= std::max(100 * rtol * std::fabs(b), rtol);
}

// A propagator's per-column true residuals (/solves/<name>/column_true_residual): each by the true_residual rule.
void compare_column_residuals(hid_t a, hid_t b, const std::string& path, const Options& opt, Report& report) {
  Hid sa(H5Dget_space(a), H5Sclose), sb(H5Dget_space(b), H5Sclose);
  const std::vector<hsize_t> da = dims_of(sa.get()), db = dims_of(sb.get());
  if (da != db) {
    report.problem(path, "dataset has shape " + dims_str(da) + " in A but " + dims_str(db) + " in B");
    return;
  }
  std::vector<double> va(npoints(sa.get())), vb(va.size());
  if (H5Dread(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, va.data()) < 0 ||
      H5Dread(b, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vb.data()) < 0) {
    report.problem(path, "dataset cannot be read as floats");
    return;
  }
  for (std::size_t k = 0; k < va.size(); ++k) {
    if (!residuals_agree(va[k], vb[k], opt.rtol)) {
      report.problem(path, "element " + std::to_string(k) + " is " + fmt(va[k]) + " in A but " + fmt(vb[k]) + " in B");
      return;
    }
  }
}

// A propagator's per-column iteration counts (/solves/<name>/column_iterations, integers of the same shape): each
// may differ by at most --iter-slack.
void compare_column_iterations(hid_t a, hid_t b, const std::string& path, const Options& opt, Report& report) {
  Hid sa(H5Dget_space(a), H5Sclose), sb(H5Dget_space(b), H5Sclose);
  const std::vector<hsize_t> da = dims_of(sa.get()), db = dims_of(sb.get());
  if (da != db) {
    report.problem(path, "dataset has shape " + dims_str(da) + " in A but " + dims_str(db) + " in B");
    return;
  }
  std::vector<long long> va(npoints(sa.get())), vb(va.size());
  if (H5Dread(a, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, va.data()) < 0 ||
      H5Dread(b, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, vb.data()) < 0) {
    report.problem(path, "dataset cannot be read as integers");
    return;
  }
  for (std::size_t k = 0; k < va.size(); ++k) {
    if (std::llabs(va[k] - vb[k]) > opt.iter_slack) {
      report.problem(path, "element " + std::to_string(k) + " is " + std::to_string(va[k]) + " in A but " +
                               std::to_string(vb[k]) + " in B (allowed difference " + std::to_string(opt.iter_slack) +
                               ")");
      return;
    }
  }
}

// Compares item a (file A) with item b (file B) at `path`: shape, type and, unless rule is Skip, values.
// `prefix_only`: the dataspaces are 1-D and may differ in length by up to opt.iter_slack (residual_history).
void compare_items(const Item& a, const Item& b, const std::string& path, Rule rule, bool prefix_only,
                   const Options& opt, Report& report) {
  Hid sa = a.space(), sb = b.space();
  const std::vector<hsize_t> da = dims_of(sa.get()), db = dims_of(sb.get());
  const H5S_class_t ka = H5Sget_simple_extent_type(sa.get()), kb = H5Sget_simple_extent_type(sb.get());
  if (ka != kb || da.size() != db.size()) {
    report.problem(path, a.what + " has shape " + dims_str(da) + " in A but " + dims_str(db) + " in B");
    return;
  }
  if (da != db) {
    const bool slack_ok = prefix_only && da.size() == 1 &&
                          std::labs(static_cast<long>(da[0]) - static_cast<long>(db[0])) <= opt.iter_slack;
    if (!slack_ok) {
      report.problem(path, a.what + " has shape " + dims_str(da) + " in A but " + dims_str(db) + " in B");
      return;
    }
  }
  Hid ta = a.type(), tb = b.type();
  if (!same_type(ta.get(), tb.get(), path, a.what, report)) return;
  if (rule == Rule::Skip) return;

  const std::size_t na = npoints(sa.get()), nb = npoints(sb.get());
  const Values va = read_values(a, na), vb = read_values(b, nb);
  const std::size_t n = std::min(na, nb);
  const std::size_t per_a = na ? va.floats.size() / na : 0, per_b = nb ? vb.floats.size() / nb : 0;

  if (rule == Rule::Slack || rule == Rule::TrueResidual) {
    // Scalar integer (Slack) or float (TrueResidual) attributes of /solves/<name>.
    if (n != 1) {
      report.problem(path, a.what + " is not a single value");
      return;
    }
    if (rule == Rule::Slack) {
      if (H5Tget_class(ta.get()) != H5T_INTEGER) {
        report.problem(path, a.what + " is not an integer");
        return;
      }
      long long ia = 0, ib = 0;
      a.read(H5T_NATIVE_LLONG, &ia);
      b.read(H5T_NATIVE_LLONG, &ib);
      if (std::llabs(ia - ib) > opt.iter_slack) {
        report.problem(path, a.what + " is " + std::to_string(ia) + " in A but " + std::to_string(ib) +
                                 " in B (allowed difference " + std::to_string(opt.iter_slack) + ")");
      }
      return;
    }
    if (va.floats.size() != 1 || vb.floats.size() != 1) {
      report.problem(path, a.what + " is not a float");
      return;
    }
    const double x = va.floats[0], y = vb.floats[0];
    const double limit = std::max(100 * opt.rtol * std::fabs(y), opt.rtol);
    if (!(std::fabs(x - y) <= limit)) {
      report.problem(path, a.what + " is " + fmt(x) + " in A but " + fmt(y) +
                               " in B (|A-B| = " + fmt(std::fabs(x - y)) + " > " + fmt(limit) + ")");
    }
    return;
  }

  // Floats: the relative 2-norm difference over the common elements.
  if (na > 0 && nb > 0 && per_a != per_b) {
    report.problem(path, a.what + " has a different element layout in A and B");
    return;
  }
  if (per_a > 0 && n > 0) {
    const double rel = relative_difference(va.floats, na, vb.floats, nb, per_a, n);
    if (std::isnan(rel)) {
      report.problem(path, a.what + " holds a NaN in one file only, or an infinite value");
    } else if (!(rel <= opt.rtol)) {
      report.problem(path, a.what + ": relative difference |A-B|/|B| = " + fmt(rel) + " > rtol " + fmt(opt.rtol));
    }
  }
  // Everything else: exactly equal, element by element; the first difference is reported.
  const std::size_t per_ea = na ? va.exact.size() / na : 0, per_eb = nb ? vb.exact.size() / nb : 0;
  if (na > 0 && nb > 0 && per_ea != per_eb) {
    report.problem(path, a.what + " has a different element layout in A and B");
    return;
  }
  // Parts are stored member by member: index = member_block * n_total + element.
  std::size_t differing = 0, first = 0;
  std::string first_member;
  for (std::size_t p = 0; p < per_ea; ++p) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t ia = p * na + k, ib = p * nb + k;
      if (va.exact[ia] != vb.exact[ib]) {
        if (differing++ == 0) {
          first = k;
          first_member = va.members[ia];
        }
      }
    }
  }
  if (differing > 0) {
    std::string where = n > 1 ? " (first at element " + std::to_string(first) + ")" : "";
    if (!first_member.empty()) where += " in member '" + first_member + "'";
    report.problem(path, a.what + ": " + std::to_string(differing) + " value(s) differ" + where);
  }
}

// ---- attributes ---------------------------------------------------------------------------------------------

herr_t attr_name_cb(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::set<std::string>*>(data)->insert(name);
  return 0;
}

std::set<std::string> attribute_names(hid_t obj, const std::string& path) {
  std::set<std::string> names;
  hsize_t idx = 0;
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, attr_name_cb, &names), "list the attributes of " + path);
  return names;
}

Rule attribute_rule(const std::string& path, const std::string& name, bool cross_backend) {
  if (path == "/" &&
      (name == "ranks" || name == "process_grid" || name == "date" || name == "git_hash" || name == "device")) {
    return Rule::Skip;
  }
  if (cross_backend && path == "/" && name == "backend") return Rule::Skip;
  if (is_solve_group(path)) {
    if (name == "seconds") return Rule::Skip;
    if (name == "iterations" || name == "restarts") return Rule::Slack;
    if (name == "true_residual") return Rule::TrueResidual;
  }
  return Rule::Values;
}

void compare_attributes(hid_t oa, hid_t ob, const std::string& path, const Options& opt, Report& report) {
  const std::set<std::string> na = attribute_names(oa, path), nb = attribute_names(ob, path);
  for (const std::string& n : na) {
    if (!nb.count(n)) report.problem(path, "attribute '" + n + "' is in A only");
  }
  for (const std::string& n : nb) {
    if (!na.count(n)) report.problem(path, "attribute '" + n + "' is in B only");
  }
  for (const std::string& n : na) {
    if (!nb.count(n)) continue;
    const Rule rule = attribute_rule(path, n, opt.cross_backend);
    if (rule == Rule::Skip) continue;  // not even the type: ranks/process_grid/date/seconds may change shape
    const std::string what = "attribute '" + n + "'";
    Hid aa = check(H5Aopen(oa, n.c_str(), H5P_DEFAULT), H5Aclose, "open " + what + " of " + path + " in A");
    Hid ab = check(H5Aopen(ob, n.c_str(), H5P_DEFAULT), H5Aclose, "open " + what + " of " + path + " in B");
    compare_items(Item{what, aa.get(), true}, Item{what, ab.get(), true}, path, rule, false, opt, report);
  }
}

// ---- files --------------------------------------------------------------------------------------------------

Hid open_file(const std::string& name) {
  if (H5Fis_hdf5(name.c_str()) <= 0) throw ReadError("'" + name + "' is not a readable HDF5 file");
  return check(H5Fopen(name.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open '" + name + "'");
}

int compare_files(const Options& opt) {
  Hid fa = open_file(opt.a), fb = open_file(opt.b);
  const std::map<std::string, H5O_type_t> oa = list_objects(fa.get(), opt.a), ob = list_objects(fb.get(), opt.b);
  Report report;
  for (const auto& [path, type] : oa) {
    if (!skipped_path(path) && !ob.count(path)) report.problem(path, std::string(type_name(type)) + " in A only");
  }
  for (const auto& [path, type] : ob) {
    if (!skipped_path(path) && !oa.count(path)) report.problem(path, std::string(type_name(type)) + " in B only");
  }
  std::size_t datasets = 0;
  for (const auto& [path, type] : oa) {
    const auto it = ob.find(path);
    if (skipped_path(path) || it == ob.end()) continue;
    if (type != it->second) {
      report.problem(path, std::string("is a ") + type_name(type) + " in A but a " + type_name(it->second) + " in B");
      continue;
    }
    Hid ha = check(H5Oopen(fa.get(), path.c_str(), H5P_DEFAULT), H5Oclose, "open " + path + " in A");
    Hid hb = check(H5Oopen(fb.get(), path.c_str(), H5P_DEFAULT), H5Oclose, "open " + path + " in B");
    if (type == H5O_TYPE_DATASET) {
      ++datasets;
      const Rule rule = opt.ignore_data.count(path) ? Rule::Skip : Rule::Values;
      const bool prefix = opt.iter_slack > 0 && is_residual_history(path);
      if (opt.iter_slack > 0 && is_in_solve_group(path, "column_iterations")) {
        compare_column_iterations(ha.get(), hb.get(), path, opt, report);
      } else if (rule == Rule::Values && is_in_solve_group(path, "column_true_residual")) {
        compare_column_residuals(ha.get(), hb.get(), path, opt, report);
      } else {
        compare_items(Item{"dataset", ha.get(), false}, Item{"dataset", hb.get(), false}, path, rule, prefix, opt,
                      report);
      }
    }
    // A propagator's iterations and restarts are sums over its 12 columns: 12 times the slack of one solve.
    Options group_opt = opt;
    if (is_solve_group(path) && H5Lexists(ha.get(), "column_iterations", H5P_DEFAULT) > 0) group_opt.iter_slack *= 12;
    compare_attributes(ha.get(), hb.get(), path, group_opt, report);
  }
  for (const std::string& p : opt.ignore_data) {
    if (!oa.count(p) && !ob.count(p)) report.problem(p, "--ignore-data names a path in neither file");
  }
  if (report.count() > 0) {
    std::cerr << "h5_compare: " << opt.a << " and " << opt.b << " differ (" << report.count() << " problem(s))\n";
    return kExitDiffer;
  }
  std::cout << "h5_compare: " << opt.a << " and " << opt.b << " agree (" << datasets << " datasets)\n";
  return kExitAgree;
}

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "h5_compare: " << why << "\n"
            << "usage: h5_compare A.h5 B.h5 [--rtol R] [--iter-slack N] [--ignore-data PATH]... [--cross-backend]\n";
  std::exit(kExitUsage);
}

Options parse(int argc, char** argv) {
  Options opt;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--rtol") {
      const std::string v = value();
      char* end = nullptr;
      opt.rtol = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(opt.rtol >= 0) || !std::isfinite(opt.rtol)) {
        usage("--rtol: '" + v + "' is not a number >= 0");
      }
    } else if (arg == "--iter-slack") {
      const std::string v = value();
      char* end = nullptr;
      opt.iter_slack = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || opt.iter_slack < 0) usage("--iter-slack: '" + v + "' is not an integer >= 0");
    } else if (arg == "--cross-backend") {
      opt.cross_backend = true;
    } else if (arg == "--ignore-data") {
      const std::string v = value();
      if (v.empty() || v[0] != '/') usage("--ignore-data: '" + v + "' is not an absolute path");
      opt.ignore_data.insert(v);
    } else if (arg == "-h" || arg == "--help") {
      std::cout << "usage: h5_compare A.h5 B.h5 [--rtol R] [--iter-slack N] [--ignore-data PATH]... [--cross-backend]\n"
                   "Exit 0 when the files agree, 1 when they differ (one line per problem), 2 on a usage or read "
                   "error. The rules are in the opening comment of tests/tools/h5_compare.cpp.\n";
      std::exit(kExitAgree);
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      usage("unknown option '" + arg + "'");
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) usage("expected two files, got " + std::to_string(files.size()));
  opt.a = files[0];
  opt.b = files[1];
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported as lines, not HDF5 stack dumps
  try {
    return compare_files(opt);
  } catch (const ReadError& e) {
    std::cerr << "h5_compare: " << e.what() << "\n";
    return kExitUsage;
  }
}
