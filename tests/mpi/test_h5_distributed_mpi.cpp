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

#include <algorithm>
#include <array>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/errors.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/config.hpp"
#include "src/run/schema.hpp"
#include "tests/support/h5_reader.hpp"
#include "tests/support/mpi_test.hpp"

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

int g_rank = 0, g_size = 1;
using emprism::test::check;

const Communicator& world_comm() { return emprism::test::current_mpi_test().comm(); }

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

// ---- reading back (rank 0), with the tests' HDF5 reader (tests/support/h5_reader.hpp) ----

using emprism::test::H5Reader;
using H = emprism::test::H5Id;

// Runs a read; a failure to read is a failed check (and the fallback value).
template <typename F, typename T>
auto read_or(F&& read, T fallback, const std::string& what) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    check(false, what + ": " + e.what());
    return fallback;
  }
}

// Checks a complex field dataset: shape [Lt][Lz][Ly][Lx]+inner, h5py complex of real_size bytes, every value.
void check_field(const H5Reader& r, const std::string& path, const std::vector<hsize_t>& inner, size_t real_size,
                 const std::vector<cplx>& expected) {
  std::vector<hsize_t> want = {hsize_t(kGlobal[3]), hsize_t(kGlobal[2]), hsize_t(kGlobal[1]), hsize_t(kGlobal[0])};
  want.insert(want.end(), inner.begin(), inner.end());
  const std::vector<hsize_t> dims = read_or([&] { return r.dims(path); }, std::vector<hsize_t>{}, path);
  check(dims == want, path + ": wrong shape");
  if (dims != want) return;
  read_or([&] { return (r.expect_complex(path, real_size), 0); }, 0, path);
  const std::vector<cplx> got = read_or([&] { return r.complex_data(path); }, std::vector<cplx>{}, path);
  if (got.size() != expected.size()) return;
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

std::string read_string_attr(const H5Reader& r, const std::string& obj, const std::string& name) {
  return read_or([&] { return r.attr_string(obj, name); }, std::string("<unreadable>"), obj + "@" + name);
}

std::vector<int> read_int_attr(const H5Reader& r, const std::string& obj, const std::string& name) {
  return read_or([&] { return r.attr_ints(obj, name); }, std::vector<int>{}, obj + "@" + name);
}

// /metrics/kernels: name, calls and total_s of every row.
std::vector<std::pair<std::string, std::pair<long long, double>>> read_kernels(const H5Reader& r) {
  const std::string t = "/metrics/kernels";
  const auto names = read_or([&] { return r.text_column(t, "name"); }, std::vector<std::string>{}, t);
  const auto calls = read_or([&] { return r.int_column(t, "calls"); }, std::vector<std::int64_t>{}, t);
  const auto total = read_or([&] { return r.double_column(t, "total_s"); }, std::vector<double>{}, t);
  std::vector<std::pair<std::string, std::pair<long long, double>>> out;
  for (std::size_t i = 0; i < names.size() && i < calls.size() && i < total.size(); ++i)
    out.push_back({names[i], {calls[i], total[i]}});
  return out;
}

void check_solve(const H5Reader& r, const std::string& path, bool single, const std::array<int, 4>& grid) {
  const std::string g = single ? "/solves/single" : "/solves/double";
  const size_t real_size = single ? 4 : 8;
  check_field(r, g + "/solution", {4, 3}, real_size,
              global_field(12, [&](long s, int c) { return solution_value(s, c, single); }));
  check_field(r, g + "/source", {4, 3}, real_size,
              global_field(12, [&](long s, int c) { return source_value(s, c, single); }));
  check(read_string_attr(r, g, "source_kind") == (single ? "point" : "plane_wave"), path + ": " + g + "@kind");
  check(read_int_attr(r, g, "restarts") == std::vector<int>{single ? 1 : 0}, path + ": " + g + "@restarts");
  const std::vector<double> hist =
      read_or([&] { return r.double_data(g + "/residual_history"); }, std::vector<double>{}, g);
  check(hist == make_solve("x", single, block_of(0, grid)).residual_history, path + ": " + g + "/residual_history");
}

// /metrics/ranks: one row per rank, in rank order; /metrics/kernels: rank 0's rows.
void check_metrics(const H5Reader& r, const std::string& path) {
  const std::string t = "/metrics/ranks";
  const auto ranks = read_or([&] { return r.int_column(t, "rank"); }, std::vector<std::int64_t>{}, t);
  const auto compute = read_or([&] { return r.double_column(t, "compute_s"); }, std::vector<double>{}, t);
  const auto wait = read_or([&] { return r.double_column(t, "halo_wait_s"); }, std::vector<double>{}, t);
  const auto reduction = read_or([&] { return r.double_column(t, "reduction_s"); }, std::vector<double>{}, t);
  check(ranks.size() == static_cast<std::size_t>(g_size),
        path + ": /metrics/ranks must have " + std::to_string(g_size) + " rows");
  for (std::size_t i = 0; i < ranks.size() && i < compute.size() && i < wait.size() && i < reduction.size(); ++i) {
    const RankTimes e = rank_times(static_cast<int>(i));
    check(ranks[i] == static_cast<std::int64_t>(i) && compute[i] == e.compute_s && wait[i] == e.halo_wait_s &&
              reduction[i] == e.reduction_s,
          path + ": /metrics/ranks row " + std::to_string(i) + " has rank " + std::to_string(ranks[i]));
  }
  const auto kernels = read_kernels(r);
  const std::vector<KernelMetric> e = make_kernels(0);
  check(kernels.size() == e.size(), path + ": /metrics/kernels must hold rank 0's " + std::to_string(e.size()) +
                                        " rows, has " + std::to_string(kernels.size()));
  for (std::size_t i = 0; i < std::min(kernels.size(), e.size()); ++i) {
    check(kernels[i].first == e[i].name && kernels[i].second.first == e[i].calls &&
              kernels[i].second.second == e[i].total_s,
          path + ": /metrics/kernels row " + std::to_string(i) + " is '" + kernels[i].first + "'");
  }
}

// Checks one written file against the known contents.
void check_file(const std::string& path, const std::array<int, 4>& grid) {
  std::unique_ptr<H5Reader> reader;
  try {
    reader = std::make_unique<H5Reader>(path);
  } catch (const std::exception& e) {
    check(false, e.what());
    return;
  }
  const H5Reader& r = *reader;
  check(read_string_attr(r, "/", "git_hash") == "0123456789ab", path + ": /@git_hash");
  check(read_int_attr(r, "/", "ranks") == std::vector<int>{g_size}, path + ": /@ranks");
  check(read_int_attr(r, "/", "process_grid") == std::vector<int>(grid.begin(), grid.end()), path + ": grid");
  check(read_int_attr(r, "/", "extents") == std::vector<int>(kGlobal.begin(), kGlobal.end()), path + ": extents");
  check(read_or([&] { return r.string_data("/input"); }, std::string(), "/input") == kToml, path + ": /input");
  check(read_string_attr(r, "/gauge", "source") == "random", path + ": /gauge@source");
  check_field(r, "/gauge/links", {4, 3, 3}, 8, global_field(36, link_value));
  for (bool single : {true, false}) check_solve(r, path, single, grid);
  check_metrics(r, path);
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

std::vector<hsize_t> dims_of(hid_t dset) {
  H space(H5Dget_space(dset));
  std::vector<hsize_t> d(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space.id))));
  H5Sget_simple_extent_dims(space.id, d.data(), nullptr);
  return d;
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

// Attributes of the objects at `path` in two files.
void compare_attributes(const H5Reader& fa, const H5Reader& fb, const std::string& path) {
  const std::string where = "compare:" + path;
  const std::vector<std::string> names = fa.attributes(path);
  check(names == fb.attributes(path), where + ": different attribute names");
  for (const std::string& n : names) {
    H aa(H5Aopen_by_name(fa.id(), path.c_str(), n.c_str(), H5P_DEFAULT, H5P_DEFAULT));
    H ab(H5Aopen_by_name(fb.id(), path.c_str(), n.c_str(), H5P_DEFAULT, H5P_DEFAULT));
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

void compare_dataset(const H5Reader& fa, const H5Reader& fb, const std::string& path, hid_t da, hid_t db) {
  H ta(H5Dget_type(da)), tb(H5Dget_type(db));
  check(H5Tequal(ta.id, tb.id) > 0, path + ": different types");
  check(dims_of(da) == dims_of(db), path + ": different shapes");
  if (path == "/input") {
    check(fa.string_data(path) == fb.string_data(path), path + ": different");
  } else if (path == "/metrics/kernels") {
    check(read_kernels(fa) == read_kernels(fb), path + ": different");
  } else if (has_vlen_string(ta.id)) {
    check(false, path + ": unexpected variable-length dataset");
  } else {
    check(raw(da, false) == raw(db, false), path + ": different values");
  }
}

void compare_files(const std::string& pa, const std::string& pb) {
  try {
    const H5Reader fa(pa), fb(pb);
    const std::vector<std::string> objects = fa.objects();
    check(objects == fb.objects(), "gather and collective files hold different objects");
    check(objects.size() >= 15, "too few objects in " + pa + ": " + std::to_string(objects.size()));
    compare_attributes(fa, fb, "/");
    for (const std::string& path : objects) {
      H oa(H5Oopen(fa.id(), path.c_str(), H5P_DEFAULT)), ob(H5Oopen(fb.id(), path.c_str(), H5P_DEFAULT));
      if (oa.id < 0 || ob.id < 0) continue;
      check(H5Iget_type(oa.id) == H5Iget_type(ob.id), path + ": different object kinds");
      compare_attributes(fa, fb, path);
      if (H5Iget_type(oa.id) == H5I_DATASET && H5Iget_type(ob.id) == H5I_DATASET)
        compare_dataset(fa, fb, path, oa.id, ob.id);
    }
  } catch (const std::exception& e) {
    check(false, std::string("comparing the files: ") + e.what());
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

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  g_rank = test.rank();
  g_size = test.size();
  const std::array<int, 4> grid = test.option_grid("--grid").value_or(default_grid(g_size));
  if (grid[0] * grid[1] * grid[2] * grid[3] != g_size)
    throw std::invalid_argument("the grid's product differs from the rank count " + std::to_string(g_size));
  for (int mu = 0; mu < 4; ++mu)
    if (kGlobal[mu] % grid[mu] != 0 && !(kGlobal[mu] == 8 && grid[mu] == 2))
      throw std::invalid_argument("the grid does not divide the 4x4x4x8 lattice");
  const BlockLayout block = block_of(g_size - 1 - g_rank, grid);  // rank 0 does not hold the origin
  const std::string dir = test.scratch_dir();
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
  test.comm().barrier();
  if (g_rank == 0) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    check_file(gather_path, grid);
    if (collective) {
      check_file(collective_path, grid);
      compare_files(gather_path, collective_path);
    }
    std::printf("grid %d,%d,%d,%d, gather%s\n", grid[0], grid[1], grid[2], grid[3],
                collective ? " and collective" : "");
  }
}
