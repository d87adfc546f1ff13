// test_h5_output.cpp: GoogleTest tests of the run's output file: the schema (src/run/schema.hpp) written through
// io/h5 and the checkpoint store (src/run/checkpoint.hpp); docs/conventions.md section 13.
// Each test writes a file on a 4x2x2x6 lattice (one rank, MPI_COMM_SELF: the rank's block is the lattice) with distinct
// known values, reads it back with the HDF5 C API and checks one property exactly: values, shapes, h5py type
// conventions, the temporary-name protocol. Who may call: the test runner.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/errors.hpp"
#include "src/run/checkpoint.hpp"
#include "src/run/config.hpp"
#include "src/run/schema.hpp"
#include "tests/support/h5_reader.hpp"

namespace emprism::run {
namespace {

// The communicator of these one-rank tests.
const Communicator& self_comm() {
  static const Communicator self(MPI_COMM_SELF);
  return self;
}

namespace fs = std::filesystem;
using cplx = std::complex<double>;

const std::array<int, 4> kExtents = {4, 2, 2, 6};  // Lx, Ly, Lz, Lt
constexpr std::size_t kVolume = 4 * 2 * 2 * 6;

// ---- expected contents ----

RootInfo make_root() {
  RootInfo r;
  r.program_version = "0.1.0";
  r.git_hash = "0123456789ab";
  r.date = "2024-05-06T07:08:09Z";
  r.backend = "CPU";
  r.device = "host: 2 threads";
  r.precision = "single";
  r.ranks = 2;
  r.process_grid = {1, 1, 1, 2};
  r.extents = kExtents;
  return r;
}

const char kToml[] = "[lattice]\nextents = [4, 2, 2, 6]\n# ünïcode comment\n";

GaugeInfo make_gauge() {
  GaugeInfo g;
  g.source = "random";
  g.plaquette = 0.5876543210123;
  g.link_trace = 0.1234567890987;
  g.links.resize(kVolume * 36);
  for (std::size_t k = 0; k < g.links.size(); ++k) g.links[k] = cplx(k + 1.0 / 3.0, -0.5 * k - 1.0 / 7.0);
  return g;
}

// Values exact in float32 when single, not representable in float32 otherwise.
SolveRecord make_solve(const std::string& name, bool single, double offset) {
  SolveRecord s;
  s.name = name;
  s.source_kind = single ? "point" : "plane_wave";
  s.single_precision = single;
  s.solution.resize(kVolume * 12);
  s.source.resize(kVolume * 12);
  const double frac = single ? 0.25 : 1.0 / 3.0;
  for (std::size_t k = 0; k < s.solution.size(); ++k) {
    s.solution[k] = cplx(offset + k + frac, -0.5 * k - 1.0);
    s.source[k] = cplx(-(offset + k) - frac, 0.125 * k + 2.0);
  }
  s.residual_history = {1.0, 0.5, 0.1, 1e-3, 3.0e-9 + offset};
  s.iterations = 5;
  s.true_residual = 2.5e-9 + offset;
  s.converged = single;
  s.seconds = 1.75 + offset;
  s.inputs = {{"kappa", 0.1365}, {"csw", 1.0 + offset}, {"tol", 1e-8}};
  s.restarts = single ? 1 : 0;
  return s;
}

std::vector<KernelMetric> make_kernels() {
  std::vector<KernelMetric> rows(3);
  const char* names[] = {"dslash_eo", "axpy", "norm2"};
  for (int i = 0; i < 3; ++i) {
    KernelMetric& k = rows[i];
    k.name = names[i];
    k.calls = 1000000000000LL + i;  // needs 64 bits
    k.total_s = 10.5 - i;
    k.mean_s = 0.125 + i;
    k.min_s = 0.0625 + i;
    k.flops = 1.5e12 + i;
    k.bytes = 2.5e12 + i;
    k.gbs = 300.25 + i;
    k.percent_of_peak = 60.5 + i;
    k.res.registers = 64 + i;
    k.res.spill_bytes = i == 2 ? -1 : 8 * i;
    k.res.shared_bytes = 1024 + i;
    k.res.block = 256 * (i + 1);
    k.res.occupancy = 0.5 + 0.125 * i;
  }
  return rows;
}

PeakBandwidth make_peak() {
  PeakBandwidth p;
  p.copy_gbs = 1500.5;
  p.triad_gbs = 1600.25;
  p.read_gbs = 1700.125;
  p.peak_gbs = 1700.125;
  p.measured = true;
  return p;
}

std::vector<RankTimes> make_ranks() {
  return {RankTimes{0, 1.5, 0.25, 0.125, 2.0, 0.03125}, RankTimes{1, 1.75, 0.375, 0.0625, 2.0, 0.015625}};
}

std::vector<CommRow> make_comm_rows() {
  std::vector<CommRow> rows;
  for (int mu = 0; mu < 4; ++mu) {
    CommRow r;
    r.rank = 0;
    r.precision_bits = mu < 2 ? 32 : 64;
    r.direction = mu;
    r.transport = mu == 3 ? "gpu_aware" : mu == 2 ? "staged" : "peer";
    r.exterior = mu == 1 ? "split" : mu == 2 ? "whole" : "fused";
    r.calls = 100 + mu;
    r.bytes_per_call = 1.5e6 * (mu + 1);
    r.exchange_s = 0.5 + mu;
    r.exposed_s = 0.125 * mu;
    r.hidden_fraction = 1.0 - r.exposed_s / r.exchange_s;
    rows.push_back(r);
  }
  return rows;
}

const BlockLayout kWhole = BlockLayout::whole(kExtents);

// Writes every part with the values above into `path` through `mode` and commits. One rank: its block is the
// whole lattice.
void write_full(const std::string& path, bool overwrite = false, OutputIo mode = OutputIo::Auto) {
  CheckpointStore out(self_comm(), path, overwrite, mode);
  write_root(out.file(), make_root());
  write_input(out.file(), kToml);
  const GaugeInfo gauge = make_gauge();
  write_gauge(out.file(), gauge, kWhole, &gauge.links);
  write_solve(out.file(), make_solve("single_point", true, 0.0), kWhole);
  write_solve(out.file(), make_solve("double_wave", false, 100.0), kWhole);
  write_metrics(out.file(), make_kernels(), make_peak(), make_ranks());
  out.flush();
  out.commit();
}

// ---- reading back: the tests' HDF5 reader (tests/support/h5_reader.hpp) ----

using H = emprism::test::H5Id;
using Reader = emprism::test::H5Reader;

// ---- fixture ----

class H5Output : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "emprism_h5_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/run.h5";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Entries of the directory other than the final file (temporaries left behind).
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename() != "run.h5") out.push_back(e.path().filename().string());
    }
    return out;
  }
  std::string dir_, path_;
};

std::vector<hsize_t> field_dims(std::initializer_list<hsize_t> inner) {
  std::vector<hsize_t> d = {6, 2, 2, 4};  // Lt, Lz, Ly, Lx
  d.insert(d.end(), inner);
  return d;
}

// ---- root and input ----

TEST_F(H5Output, RootStringAttributesRoundTrip) {
  write_full(path_);
  Reader r(path_);
  ASSERT_GE(r.id(), 0);
  const RootInfo e = make_root();
  EXPECT_EQ(r.attr_string("/", "program_version"), e.program_version);
  EXPECT_EQ(r.attr_string("/", "git_hash"), e.git_hash);
  EXPECT_EQ(r.attr_string("/", "date"), e.date);
  EXPECT_EQ(r.attr_string("/", "backend"), e.backend);
  EXPECT_EQ(r.attr_string("/", "device"), e.device);
  EXPECT_EQ(r.attr_string("/", "precision"), e.precision);
}

TEST_F(H5Output, RootIntegerAttributesRoundTrip) {
  write_full(path_);
  Reader r(path_);
  EXPECT_EQ(r.attr_ints("/", "ranks"), (std::vector<int>{2}));
  EXPECT_EQ(r.attr_ints("/", "process_grid"), (std::vector<int>{1, 1, 1, 2}));
  EXPECT_EQ(r.attr_ints("/", "extents"), (std::vector<int>{4, 2, 2, 6}));
}

TEST_F(H5Output, InputIsScalarUtf8StringWithTheTomlText) {
  write_full(path_);
  Reader r(path_);
  H d(H5Dopen2(r.id(), "/input", H5P_DEFAULT));
  ASSERT_GE(d.id, 0);
  H space(H5Dget_space(d.id));
  EXPECT_EQ(H5Sget_simple_extent_type(space.id), H5S_SCALAR);
  H ftype(H5Dget_type(d.id));
  EXPECT_EQ(H5Tis_variable_str(ftype.id), 1);
  EXPECT_EQ(H5Tget_cset(ftype.id), H5T_CSET_UTF8);
  H mtype(emprism::test::vlen_utf8_type());
  char* p = nullptr;
  ASSERT_GE(H5Dread(d.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::string(p), std::string(kToml));
  H5free_memory(p);
}

// ---- gauge ----

TEST_F(H5Output, GaugeAttributesRoundTrip) {
  write_full(path_);
  Reader r(path_);
  const GaugeInfo e = make_gauge();
  EXPECT_EQ(r.attr_double("/gauge", "plaquette"), e.plaquette);
  EXPECT_EQ(r.attr_double("/gauge", "link_trace"), e.link_trace);
  EXPECT_EQ(r.attr_string("/gauge", "source"), e.source);
}

TEST_F(H5Output, GaugeLinksHaveNaturalOrderShapeAndExactValues) {
  write_full(path_);
  Reader r(path_);
  EXPECT_EQ(r.dims("/gauge/links"), field_dims({4, 3, 3}));
  r.expect_complex("/gauge/links", 8);
  EXPECT_EQ(r.complex_data("/gauge/links"), make_gauge().links);
}

TEST_F(H5Output, WholeLatticeGaugeOverloadWritesGaugeInfoLinks) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_gauge(out.file(), make_gauge(), kExtents);
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/gauge/links"), field_dims({4, 3, 3}));
  EXPECT_EQ(r.complex_data("/gauge/links"), make_gauge().links);
}

TEST_F(H5Output, NullLinksWriteNoDatasetWhateverGaugeInfoHolds) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_gauge(out.file(), make_gauge(), kWhole, nullptr);
    out.commit();
  }
  Reader r(path_);
  EXPECT_TRUE(r.exists("/gauge"));
  EXPECT_FALSE(r.exists("/gauge/links"));
}

TEST_F(H5Output, GaugeWithoutLinksWritesNoDataset) {
  {
    CheckpointStore out(self_comm(), path_, false);
    GaugeInfo g = make_gauge();
    g.links.clear();
    write_gauge(out.file(), g, kExtents);
    out.commit();
  }
  Reader r(path_);
  EXPECT_TRUE(r.exists("/gauge"));
  EXPECT_FALSE(r.exists("/gauge/links"));
  EXPECT_EQ(r.attr_double("/gauge", "plaquette"), make_gauge().plaquette);
}

// ---- solves ----

TEST_F(H5Output, SolveAttributesRoundTrip) {
  write_full(path_);
  Reader r(path_);
  for (const auto& [name, single, offset] : {std::tuple{"single_point", true, 0.0}, {"double_wave", false, 100.0}}) {
    SCOPED_TRACE(name);
    const SolveRecord e = make_solve(name, single, offset);
    const std::string g = std::string("/solves/") + name;
    EXPECT_EQ(r.attr_ints(g, "iterations"), (std::vector<int>{e.iterations}));
    EXPECT_EQ(r.attr_double(g, "true_residual"), e.true_residual);
    EXPECT_EQ(r.attr_bool(g, "converged"), e.converged ? 1 : 0);
    EXPECT_EQ(r.attr_double(g, "seconds"), e.seconds);
    EXPECT_EQ(r.attr_double(g, "kappa"), 0.1365);
    EXPECT_EQ(r.attr_double(g, "csw"), 1.0 + offset);
    EXPECT_EQ(r.attr_double(g, "tol"), 1e-8);
    EXPECT_EQ(r.attr_ints(g, "restarts"), (std::vector<int>{e.restarts}));
    EXPECT_EQ(r.attr_string(g, "source_kind"), e.source_kind);
  }
}

TEST_F(H5Output, SinglePrecisionFieldsAreFloat32ComplexWithExactValues) {
  write_full(path_);
  Reader r(path_);
  const SolveRecord e = make_solve("single_point", true, 0.0);
  for (const char* field : {"solution", "source"}) {
    const std::string path = std::string("/solves/single_point/") + field;
    SCOPED_TRACE(path);
    EXPECT_EQ(r.dims(path), field_dims({4, 3}));
    r.expect_complex(path, 4);
    EXPECT_EQ(r.complex_data(path), std::string(field) == "solution" ? e.solution : e.source);
  }
}

TEST_F(H5Output, DoublePrecisionFieldsAreFloat64ComplexWithExactValues) {
  write_full(path_);
  Reader r(path_);
  const SolveRecord e = make_solve("double_wave", false, 100.0);
  for (const char* field : {"solution", "source"}) {
    const std::string path = std::string("/solves/double_wave/") + field;
    SCOPED_TRACE(path);
    EXPECT_EQ(r.dims(path), field_dims({4, 3}));
    r.expect_complex(path, 8);
    EXPECT_EQ(r.complex_data(path), std::string(field) == "solution" ? e.solution : e.source);
  }
}

TEST_F(H5Output, SinglePrecisionRoundsEachComponentToFloat) {
  {
    CheckpointStore out(self_comm(), path_, false);
    SolveRecord s = make_solve("s", true, 0.0);
    s.solution[7] = cplx(1.0 / 3.0, -2.0 / 3.0);
    write_solve(out.file(), s, kExtents);
    out.commit();
  }
  Reader r(path_);
  const std::vector<cplx> got = r.complex_data("/solves/s/solution");
  ASSERT_EQ(got.size(), kVolume * 12);
  EXPECT_EQ(got[7], cplx(static_cast<float>(1.0 / 3.0), static_cast<float>(-2.0 / 3.0)));
}

TEST_F(H5Output, ResidualHistoryIsOneDimensionalFloat64) {
  write_full(path_);
  Reader r(path_);
  const SolveRecord e = make_solve("double_wave", false, 100.0);
  EXPECT_EQ(r.dims("/solves/double_wave/residual_history"), (std::vector<hsize_t>{5}));
  EXPECT_EQ(r.double_data("/solves/double_wave/residual_history"), e.residual_history);
}

TEST_F(H5Output, EmptyResidualHistoryIsZeroLengthDataset) {
  {
    CheckpointStore out(self_comm(), path_, false);
    SolveRecord s = make_solve("s", true, 0.0);
    s.residual_history.clear();
    write_solve(out.file(), s, kExtents);
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/solves/s/residual_history"), (std::vector<hsize_t>{0}));
}

TEST_F(H5Output, BoolAttributeIsH5pyEnumOfInt8) {
  write_full(path_);
  Reader r(path_);
  EXPECT_EQ(r.attr_bool("/solves/single_point", "converged"), 1);
  EXPECT_EQ(r.attr_bool("/solves/double_wave", "converged"), 0);
}

TEST_F(H5Output, FieldOfWrongSizeIsRuntimeFailureNamingDataset) {
  CheckpointStore out(self_comm(), path_, false);
  SolveRecord s = make_solve("short", true, 0.0);
  s.source.pop_back();
  try {
    write_solve(out.file(), s, kExtents);
    FAIL() << "no exception";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("/solves/short/source"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

TEST_F(H5Output, DuplicateSolveNameIsRuntimeFailureNamingGroup) {
  CheckpointStore out(self_comm(), path_, false);
  write_solve(out.file(), make_solve("twice", true, 0.0), kExtents);
  try {
    write_solve(out.file(), make_solve("twice", true, 0.0), kExtents);
    FAIL() << "no exception";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("/solves/twice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

TEST_F(H5Output, HDF5ErrorIsRuntimeFailureNamingFileAndAttribute) {
  CheckpointStore out(self_comm(), path_, false);
  write_root(out.file(), make_root());
  try {
    write_root(out.file(), make_root());  // attributes exist already: H5Acreate2 fails
    FAIL() << "no exception";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("program_version"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

// ---- metrics ----

TEST_F(H5Output, PeakAttributesRoundTrip) {
  write_full(path_);
  Reader r(path_);
  const PeakBandwidth e = make_peak();
  EXPECT_EQ(r.attr_double("/metrics/peak", "copy_gbs"), e.copy_gbs);
  EXPECT_EQ(r.attr_double("/metrics/peak", "triad_gbs"), e.triad_gbs);
  EXPECT_EQ(r.attr_double("/metrics/peak", "read_gbs"), e.read_gbs);
  EXPECT_EQ(r.attr_double("/metrics/peak", "peak_gbs"), e.peak_gbs);
  EXPECT_EQ(r.attr_bool("/metrics/peak", "measured"), 1);
}

TEST_F(H5Output, KernelTableHasTheNamedFieldsInOrder) {
  write_full(path_);
  Reader r(path_);
  const std::vector<std::pair<std::string, H5T_class_t>> expected = {
      {"name", H5T_STRING},       {"calls", H5T_INTEGER},       {"total_s", H5T_FLOAT},
      {"mean_s", H5T_FLOAT},      {"min_s", H5T_FLOAT},         {"flops", H5T_FLOAT},
      {"bytes", H5T_FLOAT},       {"gbs", H5T_FLOAT},           {"percent_of_peak", H5T_FLOAT},
      {"registers", H5T_INTEGER}, {"spill_bytes", H5T_INTEGER}, {"shared_bytes", H5T_INTEGER},
      {"block", H5T_INTEGER},     {"occupancy", H5T_FLOAT},     {"variant", H5T_STRING}};
  EXPECT_EQ(r.compound_fields("/metrics/kernels"), expected);
  EXPECT_EQ(r.dims("/metrics/kernels"), (std::vector<hsize_t>{3}));
}

struct KernelRowIn {
  char* name;
  std::int64_t calls;
  double total_s, mean_s, min_s, flops, bytes, gbs, percent_of_peak;
  std::int32_t registers, spill_bytes, shared_bytes, block;
  double occupancy;
};

TEST_F(H5Output, KernelTableRowsRoundTrip) {
  write_full(path_);
  Reader r(path_);
  H str(emprism::test::vlen_utf8_type());
  H mt(H5Tcreate(H5T_COMPOUND, sizeof(KernelRowIn)));
  H5Tinsert(mt.id, "name", HOFFSET(KernelRowIn, name), str.id);
  H5Tinsert(mt.id, "calls", HOFFSET(KernelRowIn, calls), H5T_NATIVE_INT64);
  H5Tinsert(mt.id, "total_s", HOFFSET(KernelRowIn, total_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "mean_s", HOFFSET(KernelRowIn, mean_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "min_s", HOFFSET(KernelRowIn, min_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "flops", HOFFSET(KernelRowIn, flops), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "bytes", HOFFSET(KernelRowIn, bytes), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "gbs", HOFFSET(KernelRowIn, gbs), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "percent_of_peak", HOFFSET(KernelRowIn, percent_of_peak), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "registers", HOFFSET(KernelRowIn, registers), H5T_NATIVE_INT32);
  H5Tinsert(mt.id, "spill_bytes", HOFFSET(KernelRowIn, spill_bytes), H5T_NATIVE_INT32);
  H5Tinsert(mt.id, "shared_bytes", HOFFSET(KernelRowIn, shared_bytes), H5T_NATIVE_INT32);
  H5Tinsert(mt.id, "block", HOFFSET(KernelRowIn, block), H5T_NATIVE_INT32);
  H5Tinsert(mt.id, "occupancy", HOFFSET(KernelRowIn, occupancy), H5T_NATIVE_DOUBLE);
  H d(H5Dopen2(r.id(), "/metrics/kernels", H5P_DEFAULT));
  std::vector<KernelRowIn> rows(3);
  ASSERT_GE(H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  const std::vector<KernelMetric> e = make_kernels();
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(e[i].name);
    EXPECT_STREQ(rows[i].name, e[i].name.c_str());
    EXPECT_EQ(rows[i].calls, e[i].calls);
    EXPECT_EQ(rows[i].total_s, e[i].total_s);
    EXPECT_EQ(rows[i].mean_s, e[i].mean_s);
    EXPECT_EQ(rows[i].min_s, e[i].min_s);
    EXPECT_EQ(rows[i].flops, e[i].flops);
    EXPECT_EQ(rows[i].bytes, e[i].bytes);
    EXPECT_EQ(rows[i].gbs, e[i].gbs);
    EXPECT_EQ(rows[i].percent_of_peak, e[i].percent_of_peak);
    EXPECT_EQ(rows[i].registers, e[i].res.registers);
    EXPECT_EQ(rows[i].spill_bytes, e[i].res.spill_bytes);
    EXPECT_EQ(rows[i].shared_bytes, e[i].res.shared_bytes);
    EXPECT_EQ(rows[i].block, e[i].res.block);
    EXPECT_EQ(rows[i].occupancy, e[i].res.occupancy);
  }
  H space(H5Dget_space(d.id));
  H5Dvlen_reclaim(mt.id, space.id, H5P_DEFAULT, rows.data());
}

TEST_F(H5Output, RankTableRoundTrip) {
  write_full(path_);
  Reader r(path_);
  const std::vector<std::pair<std::string, H5T_class_t>> expected = {{"rank", H5T_INTEGER},
                                                                     {"compute_s", H5T_FLOAT},
                                                                     {"halo_wait_s", H5T_FLOAT},
                                                                     {"reduction_s", H5T_FLOAT},
                                                                     {"reductions_per_iteration", H5T_FLOAT},
                                                                     {"reduction_wait_s", H5T_FLOAT}};
  ASSERT_EQ(r.compound_fields("/metrics/ranks"), expected);
  EXPECT_EQ(r.dims("/metrics/ranks"), (std::vector<hsize_t>{2}));
  H mt(H5Tcreate(H5T_COMPOUND, sizeof(RankTimes)));
  H5Tinsert(mt.id, "rank", HOFFSET(RankTimes, rank), H5T_NATIVE_INT);
  H5Tinsert(mt.id, "compute_s", HOFFSET(RankTimes, compute_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "halo_wait_s", HOFFSET(RankTimes, halo_wait_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "reduction_s", HOFFSET(RankTimes, reduction_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "reductions_per_iteration", HOFFSET(RankTimes, reductions_per_iteration), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "reduction_wait_s", HOFFSET(RankTimes, reduction_wait_s), H5T_NATIVE_DOUBLE);
  H d(H5Dopen2(r.id(), "/metrics/ranks", H5P_DEFAULT));
  std::vector<RankTimes> rows(2);
  ASSERT_GE(H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  const std::vector<RankTimes> e = make_ranks();
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rows[i].rank, e[i].rank);
    EXPECT_EQ(rows[i].compute_s, e[i].compute_s);
    EXPECT_EQ(rows[i].halo_wait_s, e[i].halo_wait_s);
    EXPECT_EQ(rows[i].reduction_s, e[i].reduction_s);
    EXPECT_EQ(rows[i].reductions_per_iteration, e[i].reductions_per_iteration);
    EXPECT_EQ(rows[i].reduction_wait_s, e[i].reduction_wait_s);
  }
}

// /metrics/comm: one row per direction and operator, strings fixed-length, values as given.
TEST_F(H5Output, CommTableRoundTrip) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_metrics(out.file(), make_kernels(), make_peak(), make_ranks());
    write_comm_metrics(out.file(), make_comm_rows());
    out.commit();
  }
  Reader r(path_);
  const std::vector<std::pair<std::string, H5T_class_t>> expected = {
      {"rank", H5T_INTEGER},         {"precision_bits", H5T_INTEGER}, {"direction", H5T_STRING},
      {"transport", H5T_STRING},     {"exterior", H5T_STRING},        {"calls", H5T_INTEGER},
      {"bytes_per_call", H5T_FLOAT}, {"exchange_s", H5T_FLOAT},       {"exposed_s", H5T_FLOAT},
      {"hidden_fraction", H5T_FLOAT}};
  ASSERT_EQ(r.compound_fields("/metrics/comm"), expected);
  ASSERT_EQ(r.dims("/metrics/comm"), (std::vector<hsize_t>{4}));
  struct Row {
    int bits;
    char direction[2], transport[10], exterior[6];
    long long calls;
    double bytes, exposed, hidden;
  };
  H str2(H5Tcopy(H5T_C_S1)), str10(H5Tcopy(H5T_C_S1)), str6(H5Tcopy(H5T_C_S1));
  H5Tset_size(str2.id, 2);
  H5Tset_size(str10.id, 10);
  H5Tset_size(str6.id, 6);
  H mt(H5Tcreate(H5T_COMPOUND, sizeof(Row)));
  H5Tinsert(mt.id, "precision_bits", HOFFSET(Row, bits), H5T_NATIVE_INT);
  H5Tinsert(mt.id, "direction", HOFFSET(Row, direction), str2.id);
  H5Tinsert(mt.id, "transport", HOFFSET(Row, transport), str10.id);
  H5Tinsert(mt.id, "exterior", HOFFSET(Row, exterior), str6.id);
  H5Tinsert(mt.id, "calls", HOFFSET(Row, calls), H5T_NATIVE_LLONG);
  H5Tinsert(mt.id, "bytes_per_call", HOFFSET(Row, bytes), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "exposed_s", HOFFSET(Row, exposed), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt.id, "hidden_fraction", HOFFSET(Row, hidden), H5T_NATIVE_DOUBLE);
  H d(H5Dopen2(r.id(), "/metrics/comm", H5P_DEFAULT));
  std::vector<Row> rows(4);
  ASSERT_GE(H5Dread(d.id, mt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  const std::vector<CommRow> e = make_comm_rows();
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i].bits, e[i].precision_bits);
    EXPECT_EQ(std::string(rows[i].direction), std::string(1, "xyzt"[i]));
    EXPECT_EQ(std::string(rows[i].transport), e[i].transport);
    EXPECT_EQ(std::string(rows[i].exterior), e[i].exterior);
    EXPECT_EQ(rows[i].calls, e[i].calls);
    EXPECT_EQ(rows[i].bytes, e[i].bytes_per_call);
    EXPECT_EQ(rows[i].exposed, e[i].exposed_s);
    EXPECT_EQ(rows[i].hidden, e[i].hidden_fraction);
  }
}

TEST_F(H5Output, EmptyCommTableHasNoRows) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_metrics(out.file(), make_kernels(), make_peak(), make_ranks());
    write_comm_metrics(out.file(), {});
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/metrics/comm"), (std::vector<hsize_t>{0}));
}

// ---- temporary name, commit, overwrite ----

TEST_F(H5Output, PartialFileIsBesideTheTarget) {
  CheckpointStore out(self_comm(), path_, false);
  EXPECT_EQ(out.temp_path(), dir_ + "/run.h5.partial");
  EXPECT_TRUE(fs::exists(out.temp_path()));
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(H5Output, CommitRenamesAndLeavesNoTemporary) {
  std::string temp;
  {
    CheckpointStore out(self_comm(), path_, false);
    temp = out.temp_path();
    write_root(out.file(), make_root());
    out.commit();
    EXPECT_FALSE(fs::exists(temp));
    EXPECT_TRUE(fs::exists(path_));
  }
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, DestructionWithoutCommitLeavesNothing) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_root(out.file(), make_root());
    write_solve(out.file(), make_solve("s", true, 0.0), kExtents);
  }
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, ExistingFileWithoutOverwriteIsInputErrorAndUntouched) {
  { std::ofstream(path_) << "precious"; }
  try {
    CheckpointStore out(self_comm(), path_, false);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "output.file: '" + path_ + "' exists; set output.overwrite = true to replace it");
  }
  std::ifstream in(path_);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, ExistingFileWithOverwriteIsReplaced) {
  { std::ofstream(path_) << "old"; }
  write_full(path_, true);
  EXPECT_GT(H5Fis_hdf5(path_.c_str()), 0);
  Reader r(path_);
  EXPECT_EQ(r.attr_string("/", "git_hash"), make_root().git_hash);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, MissingDirectoryIsInputError) {
  const std::string missing = dir_ + "/no/such";
  try {
    check_output_path(missing + "/run.h5", false);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "output.file: directory '" + missing + "' does not exist");
  }
  EXPECT_THROW(CheckpointStore(self_comm(), missing + "/run.h5", true), InputError);
}

TEST_F(H5Output, UnwritableDirectoryIsInputError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  const std::string locked = dir_ + "/locked";
  ASSERT_EQ(::mkdir(locked.c_str(), 0555), 0);
  try {
    CheckpointStore out(self_comm(), locked + "/run.h5", false);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "output.file: directory '" + locked + "' is not writable");
  }
}

TEST_F(H5Output, DirectoryAsTargetIsInputError) { EXPECT_THROW(check_output_path(dir_, true), InputError); }

TEST_F(H5Output, BareFileNameUsesCurrentDirectory) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  {
    CheckpointStore out(self_comm(), "run.h5", false);
    EXPECT_EQ(out.temp_path(), "run.h5.partial");
    out.commit();
  }
  fs::current_path(cwd);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, WriteAfterCommitIsRuntimeFailure) {
  CheckpointStore out(self_comm(), path_, false);
  out.commit();
  EXPECT_THROW(write_root(out.file(), make_root()), RuntimeFailure);
}

// ---- propagators, correlators, checkpoints and resume ----

// Column k of a propagator: value (k, site, component) recoverable from the number.
std::array<std::vector<cplx>, 12> make_columns() {
  std::array<std::vector<cplx>, 12> cols;
  for (int k = 0; k < 12; ++k) {
    cols[k].resize(kVolume * 12);
    for (std::size_t i = 0; i < cols[k].size(); ++i) cols[k][i] = cplx(1000.0 * k + i + 0.25, -0.5 * i - k);
  }
  return cols;
}

PropagatorRecord make_propagator(const std::string& name, const std::array<std::vector<cplx>, 12>* cols, bool single) {
  PropagatorRecord p;
  p.name = name;
  p.single_precision = single;
  p.write_fields = cols != nullptr;
  p.columns = cols;
  for (int k = 0; k < 12; ++k) {
    p.residual_history[k] = std::vector<double>(static_cast<std::size_t>(k + 1), 0.5 / (k + 1));
    p.iterations[k] = 10 + k;
    p.restarts[k] = k % 2;
    p.true_residual[k] = 1e-9 * (k + 1);
    p.seconds[k] = 0.5;
    p.converged[k] = k != 7;
  }
  p.inputs = {{"kappa", 0.125},
              {"csw", 1.0},
              {"tol", 1e-8},
              {"source_site", std::array<int, 4>{1, 0, 1, 5}},
              {"smearing", std::string("wuppertal")},
              {"smearing_steps", 20},
              {"smearing_weight", 0.25},
              {"link_smearing", std::string("ape")},
              {"link_smearing_steps", 3},
              {"link_smearing_weight", 0.5}};
  p.smeared_plaquette = 0.875;
  return p;
}

CorrelatorRecord make_correlators(const std::string& name) {
  CorrelatorRecord c;
  c.name = name;
  c.source_site = {1, 0, 1, 5};
  c.channels = {"pion", "axial"};
  c.momenta = {{0, 0, 0}, {1, 0, -1}};
  c.convention = "C(t) = ...";
  for (const auto& p : c.momenta) {
    for (const std::string ch : {"pion", "axial"}) {
      CorrelatorRecord::Entry e;
      e.channel = ch;
      e.momentum = p;
      for (int t = 0; t < kExtents[3]; ++t) e.values.push_back(cplx(t + 10.0 * p[0] + (ch == "pion"), -t));
      e.effective_mass.assign(kExtents[3], 0.5 + p[0]);
      e.effective_mass.back() = std::nan("");
      e.gamma_sink = ch == "pion" ? "g5" : "g4g5";
      e.gamma_source = "g5";
      e.time_parity = ch == "pion" ? 1 : -1;
      c.entries.push_back(e);
    }
  }
  c.pcac_mass.assign(kExtents[3], 0.03);
  return c;
}

TEST_F(H5Output, PropagatorColumnsLandAtTheirSourceSpinAndColour) {
  const auto cols = make_columns();
  {
    CheckpointStore out(self_comm(), path_, false);
    write_propagator(out.file(), make_propagator("prop", &cols, false), kWhole);
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/solves/prop/propagator"), (std::vector<hsize_t>{4, 3, 6, 2, 2, 4, 4, 3}));
  r.expect_complex("/solves/prop/propagator", 8);
  const std::vector<cplx> all = r.complex_data("/solves/prop/propagator");
  for (int k = 0; k < 12; ++k)
    for (std::size_t i = 0; i < kVolume * 12; ++i) ASSERT_EQ(all[k * kVolume * 12 + i], cols[k][i]) << k << " " << i;
}

TEST_F(H5Output, PropagatorAttributesSumTheColumns) {
  const auto cols = make_columns();
  {
    CheckpointStore out(self_comm(), path_, false);
    write_propagator(out.file(), make_propagator("prop", &cols, true), kWhole);
    out.commit();
  }
  Reader r(path_);
  r.expect_complex("/solves/prop/propagator", 4);
  EXPECT_EQ(r.attr_string("/solves/prop", "source_kind"), "propagator");
  EXPECT_EQ(r.attr_ints("/solves/prop", "iterations"), std::vector<int>{12 * 10 + 66});
  EXPECT_EQ(r.attr_ints("/solves/prop", "restarts"), std::vector<int>{6});
  EXPECT_DOUBLE_EQ(r.attr_double("/solves/prop", "true_residual"), 1e-9 * 12);
  EXPECT_EQ(r.attr_bool("/solves/prop", "converged"), 0);  // column 7 did not converge
  EXPECT_DOUBLE_EQ(r.attr_double("/solves/prop", "seconds"), 6.0);
  EXPECT_EQ(r.attr_ints("/solves/prop", "source_site"), (std::vector<int>{1, 0, 1, 5}));
  EXPECT_EQ(r.attr_string("/solves/prop", "smearing"), "wuppertal");
  EXPECT_EQ(r.attr_string("/solves/prop", "link_smearing"), "ape");
  EXPECT_DOUBLE_EQ(r.attr_double("/solves/prop", "smeared_plaquette"), 0.875);
  EXPECT_EQ(r.dims("/solves/prop/column_iterations"), (std::vector<hsize_t>{4, 3}));
  EXPECT_EQ(r.double_data("/solves/prop/column_true_residual")[11], 1e-9 * 12);
  EXPECT_EQ(r.double_data("/solves/prop/residual_history/s3c2").size(), 12u);
  EXPECT_EQ(r.double_data("/solves/prop/residual_history/s0c1")[0], 0.25);
}

TEST_F(H5Output, PropagatorWithoutFieldsHasNoDataset) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_propagator(out.file(), make_propagator("prop", nullptr, true), kWhole);
    out.commit();
  }
  Reader r(path_);
  EXPECT_TRUE(r.exists("/solves/prop/residual_history/s0c0"));
  EXPECT_FALSE(r.exists("/solves/prop/propagator"));
}

TEST_F(H5Output, CorrelatorsLayout) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_correlators(out.file(), make_correlators("prop"));
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/correlators/prop/pion"), (std::vector<hsize_t>{6}));
  r.expect_complex("/correlators/prop/pion", 8);
  EXPECT_EQ(r.complex_data("/correlators/prop/pion")[2], cplx(3.0, -2.0));
  EXPECT_EQ(r.complex_data("/correlators/prop/p1_0_-1/axial")[2], cplx(12.0, -2.0));
  EXPECT_EQ(r.attr_string("/correlators/prop/axial", "gamma_sink"), "g4g5");
  EXPECT_EQ(r.attr_ints("/correlators/prop/axial", "time_parity"), std::vector<int>{-1});
  EXPECT_EQ(r.attr_ints("/correlators/prop/p1_0_-1/pion", "momentum"), (std::vector<int>{1, 0, -1}));
  EXPECT_EQ(r.attr_ints("/correlators/prop", "momenta"), (std::vector<int>{0, 0, 0, 1, 0, -1}));
  EXPECT_EQ(r.attr_string("/correlators/prop/effective_mass/axial", "form"), "sinh");
  const std::vector<double> meff = r.double_data("/correlators/prop/p1_0_-1/effective_mass/pion");
  EXPECT_EQ(meff[0], 1.5);
  EXPECT_TRUE(std::isnan(meff.back()));
  EXPECT_EQ(r.double_data("/correlators/prop/pcac_mass"), std::vector<double>(6, 0.03));
}

TEST_F(H5Output, MarkCompleteFlagsTheSolveAndKeepsThePartialFile) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_root(out.file(), make_root());
    write_solve(out.file(), make_solve("a", true, 0.0), kWhole);
    out.mark_complete("a");
    write_solve(out.file(), make_solve("b", true, 1.0), kWhole);  // in progress when the run ends without commit
  }
  EXPECT_FALSE(fs::exists(path_));
  ASSERT_TRUE(fs::exists(partial_path(path_)));
  const RunState state = read_run_state(partial_path(path_));
  ASSERT_EQ(state.solves.size(), 1u);
  EXPECT_EQ(state.solves[0].name, "a");
  EXPECT_TRUE(state.solves[0].converged);
}

TEST_F(H5Output, SolveWithADatasetNeverWrittenIsNotMarkedComplete) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_root(out.file(), make_root());
    write_solve(out.file(), make_solve("whole", true, 0.0), kWhole);
    out.mark_complete("whole");
    write_solve(out.file(), make_solve("a", true, 0.0), kWhole);
    // A dataset created but whose data never reached the file (a write that failed or was skipped).
    // The file is open in this process: HDF5 shares it with a second handle opened here.
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);  // as the store opened it (a second open must agree)
    const hid_t f = H5Fopen(partial_path(path_).c_str(), H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    ASSERT_GE(f, 0);
    const hsize_t dims[2] = {4, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d =
        H5Dcreate2(f, "/solves/a/unwritten", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Fclose(f);
    try {
      out.mark_complete("a");
      FAIL() << "no exception";
    } catch (const RuntimeFailure& e) {
      EXPECT_NE(std::string(e.what()).find("/solves/a: dataset 'unwritten' holds 0 of its 96 bytes"), std::string::npos)
          << e.what();
    }
  }
  const RunState state = read_run_state(partial_path(path_));
  ASSERT_EQ(state.solves.size(), 1u);  // "a" is not flagged complete
  EXPECT_EQ(state.solves[0].name, "whole");
}

// A partial file as an interrupted run leaves it: physics text, gauge, solve a complete (with correlators),
// solve b written but not complete.
void write_interrupted(const std::string& path, const std::string& physics) {
  CheckpointStore out(self_comm(), path, false);
  RootInfo root = make_root();
  root.physics_inputs = physics;
  write_root(out.file(), root);
  write_gauge(out.file(), make_gauge(), kExtents);
  write_solve(out.file(), make_solve("a", false, 0.0), kWhole);
  write_correlators(out.file(), make_correlators("a"));
  out.mark_complete("a");
  write_solve(out.file(), make_solve("b", false, 1.0), kWhole);
}

TEST_F(H5Output, ResumeCarriesCompleteSolvesOverAndDropsTheRest) {
  write_interrupted(path_, "dirac.kappa = 0.125\n");
  CheckpointOptions o;
  o.resume = true;
  o.physics_inputs = "dirac.kappa = 0.125\n";
  {
    CheckpointStore out(self_comm(), path_, o);
    ASSERT_EQ(out.resumed().size(), 1u);
    EXPECT_EQ(out.resumed()[0].name, "a");
    RootInfo root = make_root();
    root.physics_inputs = o.physics_inputs;
    write_root(out.file(), root);
    write_gauge(out.file(), make_gauge(), kExtents);  // /gauge is written anew, not carried over
    write_solve(out.file(), make_solve("b", false, 2.0), kWhole);
    out.mark_complete("b");
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.complex_data("/solves/a/solution"), make_solve("a", false, 0.0).solution);
  EXPECT_EQ(r.complex_data("/solves/b/solution"), make_solve("b", false, 2.0).solution);
  EXPECT_EQ(r.complex_data("/correlators/a/pion"), make_correlators("a").entries[0].values);
  EXPECT_EQ(r.attr_bool("/solves/a", "complete"), 1);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, ResumeWithAnotherInputIsRefusedAndKeepsThePartialFile) {
  write_interrupted(path_, "dirac.kappa = 0.125\nsolver.tol = 1e-08\n");
  CheckpointOptions o;
  o.resume = true;
  o.physics_inputs = "dirac.kappa = 0.12\nsolver.tol = 1e-08\n";
  try {
    CheckpointStore out(self_comm(), path_, o);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "output.resume: the partial file '" + partial_path(path_) +
                                         "' was written by a different input (dirac.kappa is 0.12 here but 0.125 in "
                                         "the file); run that input, or remove the file to start again");
  }
  EXPECT_EQ(read_run_state(partial_path(path_)).solves.size(), 1u);
}

TEST_F(H5Output, ResumeWithAnotherPlaquetteIsRefused) {
  write_interrupted(path_, "x = 1\n");
  CheckpointOptions o;
  o.resume = true;
  o.physics_inputs = "x = 1\n";
  o.check_plaquette = true;
  o.plaquette = make_gauge().plaquette + 1e-6;
  EXPECT_THROW(CheckpointStore(self_comm(), path_, o), InputError);
  o.plaquette = make_gauge().plaquette;
  EXPECT_NO_THROW(CheckpointStore(self_comm(), path_, o));
}

TEST_F(H5Output, PartialFileWithoutResumeIsAnInputErrorUnlessOverwrite) {
  write_interrupted(path_, "x = 1\n");
  try {
    CheckpointStore out(self_comm(), path_, false);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("output.file: '" + partial_path(path_) +
                                              "' holds the results of an interrupted run; set output.resume = true",
                                          0),
              0u)
        << e.what();
  }
  {
    CheckpointStore out(self_comm(), path_, true);  // overwrite: starts again
    EXPECT_TRUE(out.resumed().empty());
  }
  EXPECT_FALSE(fs::exists(partial_path(path_)));  // nothing complete in the new one: removed
}

TEST_F(H5Output, UnreadablePartialFileIsAnInputErrorOnResume) {
  { std::ofstream(partial_path(path_)) << "not hdf5"; }
  CheckpointOptions o;
  o.resume = true;
  try {
    CheckpointStore out(self_comm(), path_, o);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("output.resume: cannot read '" + partial_path(path_) + "'", 0), 0u)
        << e.what();
  }
}

TEST_F(H5Output, InputDifferenceNamesTheFirstDifferingKey) {
  EXPECT_EQ(input_difference("a = 1\nb = 2\n", "a = 1\nb = 2\n"), "");
  EXPECT_EQ(input_difference("a = 1\nb = 2\n", "a = 1\nb = 3\n"), "b is 3 here but 2 in the file");
  EXPECT_EQ(input_difference("a = 1\n", "a = 1\nc = 4\n"), "c = 4 here is not in the file's input");
  EXPECT_EQ(input_difference("a = 1\nc = 4\n", "a = 1\n"), "c = 4 in the file is missing here");
  EXPECT_EQ(input_difference("", "a = 1\n"), "a = 1 here is not in the file's input");
}

// ---- the distributed interface on one rank ----

TEST_F(H5Output, AutoOnOneRankIsGather) {
  CheckpointStore out(self_comm(), path_, false);
  EXPECT_EQ(out.mode(), OutputIo::Gather);
  CheckpointStore gather(self_comm(), dir_ + "/other.h5", false, OutputIo::Gather);
  EXPECT_EQ(gather.mode(), OutputIo::Gather);
}

TEST_F(H5Output, CollectiveNeedsParallelHdf5ElseWritesTheSameContent) {
  if (!io::h5::collective_available()) {
    try {
      CheckpointStore out(self_comm(), path_, false, OutputIo::Collective);
      FAIL() << "no exception";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                "output.io: \"collective\" needs HDF5 built with MPI (this build uses serial HDF5); use \"gather\" "
                "or \"auto\"");
    }
    EXPECT_TRUE(leftovers().empty());
    return;
  }
  const std::string gathered = dir_ + "/gathered.h5";
  write_full(gathered, false, OutputIo::Gather);
  write_full(path_, false, OutputIo::Collective);
  Reader g(gathered), c(path_);
  for (const char* field : {"/gauge/links", "/solves/single_point/solution", "/solves/single_point/source",
                            "/solves/double_wave/solution", "/solves/double_wave/source"}) {
    SCOPED_TRACE(field);
    EXPECT_EQ(c.dims(field), g.dims(field));
    c.expect_complex(field, std::string(field).find("single") != std::string::npos ? 4 : 8);
    EXPECT_EQ(c.complex_data(field), g.complex_data(field));
  }
  EXPECT_EQ(c.double_data("/solves/double_wave/residual_history"), make_solve("d", false, 100.0).residual_history);
  EXPECT_EQ(c.attr_string("/", "git_hash"), make_root().git_hash);
  EXPECT_EQ(c.attr_bool("/solves/single_point", "converged"), 1);
  EXPECT_EQ(c.dims("/metrics/kernels"), (std::vector<hsize_t>{3}));
  EXPECT_EQ(c.dims("/metrics/ranks"), (std::vector<hsize_t>{2}));
  // /input and /metrics/kernels hold variable-length strings: written by commit() after the MPI-IO file closed.
  H d(H5Dopen2(c.id(), "/input", H5P_DEFAULT));
  H mtype(emprism::test::vlen_utf8_type());
  char* p = nullptr;
  ASSERT_GE(H5Dread(d.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::string(p), std::string(kToml));
  H5free_memory(p);
  H str(emprism::test::vlen_utf8_type());
  H kt(H5Tcreate(H5T_COMPOUND, sizeof(char*)));
  H5Tinsert(kt.id, "name", 0, str.id);
  H k(H5Dopen2(c.id(), "/metrics/kernels", H5P_DEFAULT));
  std::vector<char*> names(3, nullptr);
  ASSERT_GE(H5Dread(k.id, kt.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, names.data()), 0);
  const std::vector<KernelMetric> e = make_kernels();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_STREQ(names[i], e[i].name.c_str());
    H5free_memory(names[i]);
  }
}

TEST_F(H5Output, CollectiveDestructionWithoutCommitLeavesNothing) {
  if (!io::h5::collective_available()) GTEST_SKIP() << "serial HDF5";
  {
    CheckpointStore out(self_comm(), path_, false, OutputIo::Collective);
    write_input(out.file(), kToml);
    write_solve(out.file(), make_solve("s", true, 0.0), kWhole);
  }
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(H5Output, BlockOutsideTheLatticeIsRuntimeFailureNamingIt) {
  CheckpointStore out(self_comm(), path_, false);
  const BlockLayout shifted{kExtents, kExtents, {0, 0, 0, 1}};
  try {
    write_solve(out.file(), make_solve("s", true, 0.0), shifted);
    FAIL() << "no exception";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("does not lie in the lattice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/solves/s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

TEST_F(H5Output, BlockNotCoveringTheLatticeIsRuntimeFailure) {
  CheckpointStore out(self_comm(), path_, false);
  const GaugeInfo g = make_gauge();
  const BlockLayout half{kExtents, {4, 2, 2, 3}, {0, 0, 0, 0}};
  const std::vector<cplx> links(g.links.begin(), g.links.begin() + g.links.size() / 2);
  try {
    write_gauge(out.file(), g, half, &links);
    FAIL() << "no exception";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("do not cover the lattice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/gauge/links"), std::string::npos) << e.what();
  }
  out.commit();  // the failure left the file usable: nothing was created
  Reader r(path_);
  EXPECT_FALSE(r.exists("/gauge"));
}

TEST_F(H5Output, OneRankTimesGivesOneRowPerRank) {
  {
    CheckpointStore out(self_comm(), path_, false);
    write_metrics(out.file(), make_kernels(), make_peak(), RankTimes{0, 2.5, 0.5, 0.25});
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/metrics/ranks"), (std::vector<hsize_t>{1}));
}

}  // namespace
}  // namespace emprism::run
