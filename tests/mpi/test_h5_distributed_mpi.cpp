// test_h5_distributed_mpi.cpp: standalone MPI test of the run's output file (src/run/schema.hpp through io/h5, and
// src/run/checkpoint.hpp) on N ranks (run with 1, 2 and 4).
// The global 4x4x4x8 lattice is split into blocks over t (unevenly, 3 + 5, when t is split in two) and then z;
// rank r holds block N-1-r, so rank 0 does not hold the origin. Every element of every field is a known function
// of its GLOBAL site and component. The same content is written in Gather mode and, when this build has parallel
// HDF5, in Collective mode; rank 0 reads both files back with the plain HDF5 C API and checks every element of
// solution, source and links, the per-rank /metrics/ranks rows and rank 0's tables, and that the two files hold
// the same objects, attributes and datasets. It also checks that argument errors on one rank throw on every rank.
// Options: --grid px,py,pz,pt picks another process grid (its product must be the rank count).
// Exit status 0 when every check passed; every failure is printed. Who may call: mpiexec -n N <this program>.
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/errors.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/config.hpp"
#include "src/run/schema.hpp"

namespace {

namespace fs = std::filesystem;
using emprism::Communicator;
using emprism::InputError;
using emprism::KernelMetric;
using emprism::OutputIo;
using emprism::PeakBandwidth;
using emprism::RuntimeFailure;
using emprism::run::BlockLayout;
using emprism::run::CheckpointStore;
using emprism::run::GaugeInfo;
using emprism::run::RankTimes;
using emprism::run::RootInfo;
using emprism::run::SolveRecord;
using emprism::run::write_gauge;
using emprism::run::write_input;
using emprism::run::write_metrics;
using emprism::run::write_root;
using emprism::run::write_solve;
using cplx = std::complex<double>;

const std::array<int, 4> kGlobal = {4, 4, 4, 8};  // Lx, Ly, Lz, Lt
const char kToml[] = "[lattice]\nextents = [4, 4, 4, 8]\n# distributed test\n";

int g_rank = 0, g_size = 1, g_failures = 0;

const Communicator& world_comm() {
  static const Communicator world(MPI_COMM_WORLD);
  return world;
}

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "[rank %d] FAIL: %s\n", g_rank, what.c_str());
}

// ---- the decomposition ----

// Boundaries of the p intervals that split [0, L): uneven 3 + 5 for L = 8 in two, otherwise equal.
std::vector<int> cuts(int L, int p) {
  if (L == 8 && p == 2) return {0, 3, 8};
  std::vector<int> c;
  for (int i = 0; i <= p; ++i) c.push_back(i * L / p);
  return c;
}

std::array<int, 4> default_grid(int n) {
  const int pt = n % 2 == 0 ? 2 : 1;
  return {1, 1, n / pt, pt};
}

BlockLayout block_of(int index, const std::array<int, 4>& grid) {
  BlockLayout b;
  b.global = kGlobal;
  int rest = index;
  for (int mu = 0; mu < 4; ++mu) {
    const int c = rest % grid[mu];
    rest /= grid[mu];
    const std::vector<int> cut = cuts(kGlobal[mu], grid[mu]);
    b.origin[mu] = cut[c];
    b.local[mu] = cut[c + 1] - cut[c];
  }
  return b;
}

// ---- the known contents, as functions of the global site s = ((t*Lz+z)*Ly+y)*Lx+x and component c ----

cplx solution_value(long s, int c, bool single) {  // exact in float32 when single
  const double v = 100.0 * s + c;
  return single ? cplx(v + 0.25, -v - 0.5) : cplx(v + 1.0 / 3.0, -v - 1.0 / 7.0);
}
cplx source_value(long s, int c, bool single) {
  const double v = 100.0 * s + c;
  return single ? cplx(-v - 0.75, 1.0e6 + v) : cplx(-v - 2.0 / 3.0, 1.0e6 + v + 1.0 / 9.0);
}
cplx link_value(long s, int c) { return cplx(1000.0 * s + c + 1.0 / 3.0, -1000.0 * s - c - 1.0 / 9.0); }

template <typename F>
std::vector<cplx> local_field(const BlockLayout& b, int per_site, F value) {
  std::vector<cplx> out;
  out.reserve(static_cast<std::size_t>(b.local[0]) * b.local[1] * b.local[2] * b.local[3] * per_site);
  for (int t = 0; t < b.local[3]; ++t) {
    for (int z = 0; z < b.local[2]; ++z) {
      for (int y = 0; y < b.local[1]; ++y) {
        for (int x = 0; x < b.local[0]; ++x) {
          const long gx = b.origin[0] + x, gy = b.origin[1] + y, gz = b.origin[2] + z, gt = b.origin[3] + t;
          const long s = ((gt * kGlobal[2] + gz) * kGlobal[1] + gy) * kGlobal[0] + gx;
          for (int c = 0; c < per_site; ++c) out.push_back(value(s, c));
        }
      }
    }
  }
  return out;
}

template <typename F>
std::vector<cplx> global_field(int per_site, F value) {
  const long volume = long(kGlobal[0]) * kGlobal[1] * kGlobal[2] * kGlobal[3];
  std::vector<cplx> out;
  for (long s = 0; s < volume; ++s) {
    for (int c = 0; c < per_site; ++c) out.push_back(value(s, c));
  }
  return out;
}

SolveRecord make_solve(const std::string& name, bool single, const BlockLayout& b) {
  SolveRecord s;
  s.name = name;
  s.source_kind = single ? "point" : "plane_wave";
  s.single_precision = single;
  s.solution = local_field(b, 12, [&](long site, int c) { return solution_value(site, c, single); });
  s.source = local_field(b, 12, [&](long site, int c) { return source_value(site, c, single); });
  s.residual_history = {1.0, 0.5, 0.25, single ? 1e-6 : 1e-9};
  s.iterations = 4;
  s.true_residual = single ? 2e-6 : 2e-9;
  s.converged = single;
  s.seconds = 0.5;
  s.inputs = {{"kappa", 0.1365}, {"csw", 1.25}, {"tol", 1e-8}};
  s.restarts = single ? 1 : 0;
  return s;
}

// Rank r passes r + 2 kernel rows named "<kernel>_r<r>": only rank 0's two rows may reach the file.
std::vector<KernelMetric> make_kernels(int rank) {
  std::vector<KernelMetric> rows(static_cast<std::size_t>(rank) + 2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].name = (i == 0 ? "dslash_r" : "axpy_r") + std::to_string(rank);
    rows[i].calls = 1000000000000LL + static_cast<long long>(i);
    rows[i].total_s = 2.5 + i;
  }
  return rows;
}

RankTimes rank_times(int rank) { return RankTimes{rank, 1.5 + rank, 0.25 * rank, 0.125 + rank}; }

// Writes the whole content through `mode` into `path` and commits.
void write_file(const std::string& path, OutputIo mode, const BlockLayout& b, const std::array<int, 4>& grid) {
  CheckpointStore out(world_comm(), path, false, mode);
  RootInfo root;
  root.program_version = "0.1.0";
  root.git_hash = "0123456789ab";
  root.date = "2024-05-06T07:08:09Z";
  root.backend = "CPU";
  root.device = "host";
  root.precision = "mixed";
  root.ranks = g_size;
  root.process_grid = grid;
  root.extents = kGlobal;
  write_root(out.file(), root);
  write_input(out.file(), kToml);
  GaugeInfo g;
  g.source = "random";
  g.plaquette = 0.5876543210123;
  g.link_trace = 0.1234567890987;
  const std::vector<cplx> links = local_field(b, 36, link_value);
  write_gauge(out.file(), g, b, &links);
  out.flush();
  write_solve(out.file(), make_solve("single", true, b), b);
  write_solve(out.file(), make_solve("double", false, b), b);
  PeakBandwidth peak;
  peak.copy_gbs = 10.5;
  peak.peak_gbs = 12.25;
  peak.measured = true;
  write_metrics(out.file(), make_kernels(g_rank), peak, rank_times(g_rank));
  out.commit();
}

// ---- reading back (rank 0) ----

struct H {  // closes any HDF5 identifier
  hid_t id;
  explicit H(hid_t i) : id(i) {}
  ~H() {
    if (id >= 0) H5Idec_ref(id);
  }
  H(const H&) = delete;
  H& operator=(const H&) = delete;
};

hid_t vlen_string() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

std::vector<hsize_t> dims_of(hid_t dset) {
  H space(H5Dget_space(dset));
  std::vector<hsize_t> d(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space.id))));
  H5Sget_simple_extent_dims(space.id, d.data(), nullptr);
  return d;
}

// Checks a complex field dataset: shape [Lt][Lz][Ly][Lx]+inner, h5py complex of real_size bytes, every value.
void check_field(hid_t file, const std::string& path, const std::vector<hsize_t>& inner, size_t real_size,
                 const std::vector<cplx>& expected) {
  H d(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  check(d.id >= 0, path + ": missing");
  if (d.id < 0) return;
  std::vector<hsize_t> want = {hsize_t(kGlobal[3]), hsize_t(kGlobal[2]), hsize_t(kGlobal[1]), hsize_t(kGlobal[0])};
  want.insert(want.end(), inner.begin(), inner.end());
  check(dims_of(d.id) == want, path + ": wrong shape");
  H t(H5Dget_type(d.id));
  check(H5Tget_class(t.id) == H5T_COMPOUND && H5Tget_nmembers(t.id) == 2 && H5Tget_size(t.id) == 2 * real_size,
        path + ": not an h5py complex of " + std::to_string(real_size) + "-byte floats");
  H mt(H5Tcreate(H5T_COMPOUND, sizeof(cplx)));
  H5Tinsert(mt.id, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  std::vector<cplx> got(expected.size());
  if (dims_of(d.id) != want) return;
  check(H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, got.data()) >= 0, path + ": read failed");
  long bad = 0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    if (got[k] == expected[k]) continue;
    if (++bad <= 5) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "%s[%zu] = (%.17g, %.17g), expected (%.17g, %.17g)", path.c_str(), k,
                    got[k].real(), got[k].imag(), expected[k].real(), expected[k].imag());
      check(false, msg);
    }
  }
  check(bad == 0, path + ": " + std::to_string(bad) + " wrong elements");
}

std::string read_string_dataset(hid_t file, const std::string& path) {
  H d(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  H mt(vlen_string());
  char* p = nullptr;
  if (d.id < 0 || H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) < 0) return "<unreadable>";
  std::string s = p ? p : "<null>";
  H5free_memory(p);
  return s;
}

std::string read_string_attr(hid_t file, const std::string& obj, const std::string& name) {
  H a(H5Aopen_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  H mt(vlen_string());
  char* p = nullptr;
  if (a.id < 0 || H5Aread(a.id, mt.id, &p) < 0) return "<unreadable>";
  std::string s = p ? p : "<null>";
  H5free_memory(p);
  return s;
}

std::vector<int> read_int_attr(hid_t file, const std::string& obj, const std::string& name) {
  H a(H5Aopen_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  if (a.id < 0) return {};
  H space(H5Aget_space(a.id));
  std::vector<int> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
  if (H5Aread(a.id, H5T_NATIVE_INT, v.data()) < 0) return {};
  return v;
}

struct KernelRowIn {
  char* name;
  long long calls;
  double total_s;
};

// /metrics/kernels: name, calls and total_s of every row.
std::vector<std::pair<std::string, std::pair<long long, double>>> read_kernels(hid_t file) {
  H d(H5Dopen2(file, "/metrics/kernels", H5P_DEFAULT));
  if (d.id < 0) return {};
  H str(vlen_string());
  H mt(H5Tcreate(H5T_COMPOUND, sizeof(KernelRowIn)));
  H5Tinsert(mt.id, "name", HOFFSET(KernelRowIn, name), str.id);
  H5Tinsert(mt.id, "calls", HOFFSET(KernelRowIn, calls), H5T_NATIVE_LLONG);
  H5Tinsert(mt.id, "total_s", HOFFSET(KernelRowIn, total_s), H5T_NATIVE_DOUBLE);
  const std::vector<hsize_t> n = dims_of(d.id);
  if (n.size() != 1) return {};
  std::vector<KernelRowIn> rows(n[0]);
  if (H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) < 0) return {};
  std::vector<std::pair<std::string, std::pair<long long, double>>> out;
  for (const KernelRowIn& r : rows) out.push_back({r.name ? r.name : "<null>", {r.calls, r.total_s}});
  H space(H5Dget_space(d.id));
  H5Dvlen_reclaim(mt.id, space.id, H5P_DEFAULT, rows.data());
  return out;
}

// Checks one written file against the known contents.
void check_file(const std::string& path, const std::array<int, 4>& grid) {
  H file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  check(file.id >= 0, path + ": cannot open");
  if (file.id < 0) return;
  const hid_t f = file.id;
  check(read_string_attr(f, "/", "git_hash") == "0123456789ab", path + ": /@git_hash");
  check(read_int_attr(f, "/", "ranks") == std::vector<int>{g_size}, path + ": /@ranks");
  check(read_int_attr(f, "/", "process_grid") == std::vector<int>(grid.begin(), grid.end()), path + ": grid");
  check(read_int_attr(f, "/", "extents") == std::vector<int>(kGlobal.begin(), kGlobal.end()), path + ": extents");
  check(read_string_dataset(f, "/input") == kToml, path + ": /input");
  check(read_string_attr(f, "/gauge", "source") == "random", path + ": /gauge@source");

  check_field(f, "/gauge/links", {4, 3, 3}, 8, global_field(36, link_value));
  for (bool single : {true, false}) {
    const std::string g = single ? "/solves/single" : "/solves/double";
    const size_t real_size = single ? 4 : 8;
    check_field(f, g + "/solution", {4, 3}, real_size,
                global_field(12, [&](long s, int c) { return solution_value(s, c, single); }));
    check_field(f, g + "/source", {4, 3}, real_size,
                global_field(12, [&](long s, int c) { return source_value(s, c, single); }));
    check(read_string_attr(f, g, "source_kind") == (single ? "point" : "plane_wave"), path + ": " + g + "@kind");
    check(read_int_attr(f, g, "restarts") == std::vector<int>{single ? 1 : 0}, path + ": " + g + "@restarts");
    H d(H5Dopen2(f, (g + "/residual_history").c_str(), H5P_DEFAULT));
    std::vector<double> hist(4, -1);
    check(d.id >= 0 && dims_of(d.id) == std::vector<hsize_t>{4} &&
              H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, hist.data()) >= 0,
          path + ": " + g + "/residual_history unreadable");
    check(hist == make_solve("x", single, block_of(0, grid)).residual_history, path + ": " + g + "/residual_history");
  }

  // /metrics/ranks: one row per rank, in rank order.
  {
    H d(H5Dopen2(f, "/metrics/ranks", H5P_DEFAULT));
    check(d.id >= 0 && dims_of(d.id) == std::vector<hsize_t>{hsize_t(g_size)},
          path + ": /metrics/ranks must have " + std::to_string(g_size) + " rows");
    H mt(H5Tcreate(H5T_COMPOUND, sizeof(RankTimes)));
    H5Tinsert(mt.id, "rank", HOFFSET(RankTimes, rank), H5T_NATIVE_INT);
    H5Tinsert(mt.id, "compute_s", HOFFSET(RankTimes, compute_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt.id, "halo_wait_s", HOFFSET(RankTimes, halo_wait_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt.id, "reduction_s", HOFFSET(RankTimes, reduction_s), H5T_NATIVE_DOUBLE);
    std::vector<RankTimes> rows(static_cast<std::size_t>(g_size), RankTimes{-1, -1, -1, -1});
    if (d.id >= 0 && dims_of(d.id) == std::vector<hsize_t>{hsize_t(g_size)}) {
      check(H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) >= 0, path + ": /metrics/ranks read");
    }
    for (int r = 0; r < g_size; ++r) {
      const RankTimes e = rank_times(r);
      const RankTimes& got = rows[static_cast<std::size_t>(r)];
      check(got.rank == r && got.compute_s == e.compute_s && got.halo_wait_s == e.halo_wait_s &&
                got.reduction_s == e.reduction_s,
            path + ": /metrics/ranks row " + std::to_string(r) + " has rank " + std::to_string(got.rank));
    }
  }
  const auto kernels = read_kernels(f);
  const std::vector<KernelMetric> e = make_kernels(0);
  check(kernels.size() == e.size(), path + ": /metrics/kernels must hold rank 0's " + std::to_string(e.size()) +
                                        " rows, has " + std::to_string(kernels.size()));
  for (std::size_t i = 0; i < std::min(kernels.size(), e.size()); ++i) {
    check(kernels[i].first == e[i].name && kernels[i].second.first == e[i].calls &&
              kernels[i].second.second == e[i].total_s,
          path + ": /metrics/kernels row " + std::to_string(i) + " is '" + kernels[i].first + "'");
  }
}

// ---- comparing two files: same objects, attributes and dataset values ----

bool has_vlen_string(hid_t type) {
  const H5T_class_t c = H5Tget_class(type);
  if (c == H5T_STRING) return H5Tis_variable_str(type) > 0;
  if (c == H5T_COMPOUND) {
    for (int m = 0; m < H5Tget_nmembers(type); ++m) {
      H mt(H5Tget_member_type(type, static_cast<unsigned>(m)));
      if (has_vlen_string(mt.id)) return true;
    }
  }
  return false;
}

std::vector<std::string> links_of(hid_t file) {
  std::vector<std::string> out;
  H5Lvisit(
      file, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &out);
  return out;
}

std::vector<std::string> attributes_of(hid_t obj) {
  std::vector<std::string> out;
  hsize_t idx = 0;
  H5Aiterate2(
      obj, H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &out);
  return out;
}

// Raw bytes of a dataset or attribute in its native memory type (types without variable-length strings).
std::vector<unsigned char> raw(hid_t obj, bool attribute) {
  H type(attribute ? H5Aget_type(obj) : H5Dget_type(obj));
  H native(H5Tget_native_type(type.id, H5T_DIR_ASCEND));
  H space(attribute ? H5Aget_space(obj) : H5Dget_space(obj));
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * H5Tget_size(native.id));
  if (out.empty()) return out;
  const herr_t rc = attribute ? H5Aread(obj, native.id, out.data())
                              : H5Dread(obj, native.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  if (rc < 0) out.assign(1, 0xEE);
  return out;
}

// Attributes of the objects at `path` in files fa and fb.
void compare_attributes(hid_t fa, hid_t fb, hid_t a, hid_t b, const std::string& path) {
  const std::string where = "compare:" + path;
  const std::vector<std::string> names = attributes_of(a);
  check(names == attributes_of(b), where + ": different attribute names");
  for (const std::string& n : names) {
    H aa(H5Aopen(a, n.c_str(), H5P_DEFAULT)), ab(H5Aopen(b, n.c_str(), H5P_DEFAULT));
    if (aa.id < 0 || ab.id < 0) continue;
    H ta(H5Aget_type(aa.id)), tb(H5Aget_type(ab.id));
    check(H5Tequal(ta.id, tb.id) > 0, where + "@" + n + ": different types");
    if (has_vlen_string(ta.id)) {
      check(read_string_attr(fa, path, n) == read_string_attr(fb, path, n), where + "@" + n + ": different strings");
    } else {
      check(raw(aa.id, true) == raw(ab.id, true), where + "@" + n + ": different values");
    }
  }
}

void compare_files(const std::string& pa, const std::string& pb) {
  H fa(H5Fopen(pa.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)), fb(H5Fopen(pb.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  check(fa.id >= 0 && fb.id >= 0, "cannot open " + pa + " or " + pb);
  if (fa.id < 0 || fb.id < 0) return;
  const std::vector<std::string> objects = links_of(fa.id);
  check(objects == links_of(fb.id), "gather and collective files hold different objects");
  check(objects.size() >= 15, "too few objects in " + pa + ": " + std::to_string(objects.size()));
  {
    H ra(H5Oopen(fa.id, "/", H5P_DEFAULT)), rb(H5Oopen(fb.id, "/", H5P_DEFAULT));
    compare_attributes(fa.id, fb.id, ra.id, rb.id, "/");
  }
  for (const std::string& name : objects) {
    const std::string path = "/" + name;
    H oa(H5Oopen(fa.id, path.c_str(), H5P_DEFAULT)), ob(H5Oopen(fb.id, path.c_str(), H5P_DEFAULT));
    if (oa.id < 0 || ob.id < 0) continue;
    check(H5Iget_type(oa.id) == H5Iget_type(ob.id), path + ": different object kinds");
    compare_attributes(fa.id, fb.id, oa.id, ob.id, path);
    if (H5Iget_type(oa.id) != H5I_DATASET || H5Iget_type(ob.id) != H5I_DATASET) continue;
    H ta(H5Dget_type(oa.id)), tb(H5Dget_type(ob.id));
    check(H5Tequal(ta.id, tb.id) > 0, path + ": different types");
    check(dims_of(oa.id) == dims_of(ob.id), path + ": different shapes");
    if (path == "/input") {
      check(read_string_dataset(fa.id, path) == read_string_dataset(fb.id, path), path + ": different");
    } else if (path == "/metrics/kernels") {
      check(read_kernels(fa.id) == read_kernels(fb.id), path + ": different");
    } else if (has_vlen_string(ta.id)) {
      check(false, path + ": unexpected variable-length dataset");
    } else {
      check(raw(oa.id, false) == raw(ob.id, false), path + ": different values");
    }
  }
}

// ---- errors must reach every rank ----

// Runs `body`, which must throw Exception on this rank with `needle` in its message; returns the message.
template <typename Exception, typename F>
std::string expect_everywhere(const std::string& what, const std::string& needle, F body) {
  bool thrown = false;
  std::string message;
  try {
    body();
  } catch (const Exception& e) {
    thrown = true;
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("wrong exception type: ") + e.what();
  }
  check(thrown, what + ": no exception on this rank (" + message + ")");
  check(!thrown || message.find(needle) != std::string::npos,
        what + ": message '" + message + "' lacks '" + needle + "'");
  return message;
}

void error_cases(const std::string& dir, OutputIo mode, const BlockLayout& b) {
  const std::string path = dir + "/errors.h5";
  const std::string tag = std::string(mode == OutputIo::Gather ? "gather" : "collective") + ": ";
  {
    CheckpointStore out(world_comm(), path, false, mode);
    // A field of the wrong size on the last rank only.
    SolveRecord bad = make_solve("bad", true, b);
    if (g_rank == g_size - 1) bad.source.pop_back();
    const std::string message = expect_everywhere<RuntimeFailure>(
        tag + "short source on the last rank", "/solves/bad/source", [&] { write_solve(out.file(), bad, b); });
    if (g_size > 1) {
      const std::string on_rank = " (on rank " + std::to_string(g_size - 1) + ")";
      check(message.find(on_rank) != std::string::npos, tag + "'" + message + "' does not name the failing rank");
      // Every rank claims the whole lattice.
      SolveRecord whole = make_solve("whole", true, BlockLayout::whole(kGlobal));
      expect_everywhere<RuntimeFailure>(tag + "overlapping blocks", "do not tile",
                                        [&] { write_solve(out.file(), whole, BlockLayout::whole(kGlobal)); });
      // Links on some ranks only.
      const std::vector<cplx> links = local_field(b, 36, link_value);
      expect_everywhere<RuntimeFailure>(tag + "links on some ranks", "some ranks only", [&] {
        write_gauge(out.file(), GaugeInfo{}, b, g_rank == 0 ? nullptr : &links);
      });
    }
    // Written twice: the second create fails (on rank 0 only in Gather mode).
    write_solve(out.file(), make_solve("twice", false, b), b);
    expect_everywhere<RuntimeFailure>(tag + "duplicate solve", "/solves/twice",
                                      [&] { write_solve(out.file(), make_solve("twice", false, b), b); });
    // The file still works after agreed failures.
    write_solve(out.file(), make_solve("after", true, b), b);
    out.flush();
  }  // destroyed without commit: nothing may be left
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string n = e.path().filename().string();
      check(n == "gather.h5" || n == "collective.h5", tag + "left behind: " + n);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

std::array<int, 4> parse_grid(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--grid") {
      std::array<int, 4> g{};
      if (std::sscanf(argv[i + 1], "%d,%d,%d,%d", &g[0], &g[1], &g[2], &g[3]) == 4) return g;
    }
  }
  return default_grid(g_size);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const std::array<int, 4> grid = parse_grid(argc, argv);
  if (grid[0] * grid[1] * grid[2] * grid[3] != g_size) {
    if (g_rank == 0) std::fprintf(stderr, "FAIL: grid product differs from the rank count %d\n", g_size);
    MPI_Finalize();
    return 1;
  }
  for (int mu = 0; mu < 4; ++mu) {
    if (kGlobal[mu] % grid[mu] != 0 && !(kGlobal[mu] == 8 && grid[mu] == 2)) {
      if (g_rank == 0) std::fprintf(stderr, "FAIL: grid does not divide the 4x4x4x8 lattice\n");
      MPI_Finalize();
      return 1;
    }
  }
  const BlockLayout block = block_of(g_size - 1 - g_rank, grid);  // rank 0 does not hold the origin

  // A fresh directory, named by rank 0.
  char dir_buf[4096] = {0};
  if (g_rank == 0) {
    std::string tmpl = (fs::temp_directory_path() / "emprism_h5_mpi_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) MPI_Abort(MPI_COMM_WORLD, 2);
    std::snprintf(dir_buf, sizeof dir_buf, "%s", tmpl.c_str());
  }
  MPI_Bcast(dir_buf, sizeof dir_buf, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string dir = dir_buf;
  const std::string gather_path = dir + "/gather.h5", collective_path = dir + "/collective.h5";
  const bool collective = emprism::io::h5::collective_available();

  try {
    {  // Auto picks Collective on several ranks when available
      CheckpointStore probe(world_comm(), dir + "/auto.h5", false, OutputIo::Auto);
      const OutputIo want = collective && g_size > 1 ? OutputIo::Collective : OutputIo::Gather;
      check(probe.mode() == want, "auto mode picked the wrong mode");
    }
    if (!collective) {
      expect_everywhere<InputError>("collective without parallel HDF5", "output.io: \"collective\" needs HDF5", [&] {
        CheckpointStore out(world_comm(), dir + "/never.h5", false, OutputIo::Collective);
      });
    }
    write_file(gather_path, OutputIo::Gather, block, grid);
    if (collective) write_file(collective_path, OutputIo::Collective, block, grid);
    error_cases(dir, OutputIo::Gather, block);
    if (collective) error_cases(dir, OutputIo::Collective, block);
  } catch (const std::exception& e) {
    check(false, std::string("unexpected exception: ") + e.what());
  }
  MPI_Barrier(MPI_COMM_WORLD);

  if (g_rank == 0) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    check_file(gather_path, grid);
    if (collective) {
      check_file(collective_path, grid);
      compare_files(gather_path, collective_path);
    }
  }
  int failures = g_failures;
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    if (failures == 0) {
      fs::remove_all(dir);
      std::printf("test_h5_distributed_mpi: %d rank(s), grid %d,%d,%d,%d, gather%s: all checks passed\n", g_size,
                  grid[0], grid[1], grid[2], grid[3], collective ? " and collective" : "");
    } else {
      std::printf("test_h5_distributed_mpi: %d failure(s); files kept in %s\n", failures, dir.c_str());
    }
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
