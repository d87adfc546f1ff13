// test_gauge_file_mpi.cpp: standalone MPI test of io/gauge/gauge_file.hpp on N ranks (ctest runs it with 1, 2 and 4).
// For every process grid of N ranks that splits the 4x4x4x8 lattice into even local extents (x, y, z, t split
// alone and together), every rank makes its block of a random field with make_random_gauge (decomposition
// independent), and
//   - writes it collectively as ILDG (64 and 32 bit) and NERSC (3x3, 64 bit), reads each back into a fresh
//     HostGauge and compares its block exactly (32 bit: to 1e-7) and its halo with u's after u.fill_halo(&grid);
//   - rank 0 alone (MPI_COMM_SELF) reads the same files into the whole lattice and compares them with the
//     single-rank random field: the files do not depend on the decomposition; plaquettes agree;
//   - a field with one bad link on one rank only (written, so its checksums are right) is refused with the same
//     InputError on every rank, naming the site; a corrupted copy gives the same checksum error on every rank;
//   - PyQUDA's ILDG file (4^3x8, tests/data) is read distributed: checksum ok and the plaquette equals the
//     single-rank value (a missing file is a failure);
//   - every file above, and Chroma's NERSC file (4^4, tests/data) on the grids that split 4^4, is also read straight
//     to the device (the block with its halo read from the file): the same links as the host read's after its halo
//     exchange, the same plaquette and link trace (bits on the CPU backend), the same errors on every rank.
// Exit status 0 when every check passed; each failure is printed with its rank. Who may call: mpiexec -n N.
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "src/lattice/gauge.hpp"
#include "tests/support/gauge_compare.hpp"
#include "tests/support/mpi_test.hpp"

namespace {

using emprism::Communicator;
using emprism::Extents;
using emprism::Geometry;
using emprism::HostGauge;
using emprism::InputError;
using emprism::ProcessGrid;
using emprism::io::GaugeFileInfo;
using emprism::io::GaugeFormat;

const Extents kGlobal = {4, 4, 4, 8};
constexpr std::uint64_t kSeed = 424242;
int g_rank = 0, g_size = 1;
using emprism::test::check;
using emprism::test::collective_error;

std::string str(const Extents& e) {
  return "[" + std::to_string(e[0]) + ", " + std::to_string(e[1]) + ", " + std::to_string(e[2]) + ", " +
         std::to_string(e[3]) + "]";
}

// Every process grid of n ranks that divides kGlobal into even local extents.
std::vector<Extents> grids(int n, const Extents& lattice = kGlobal) {
  std::vector<Extents> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      for (int c = 1; c <= n; ++c) {
        if (n % (a * b * c) != 0) continue;
        const Extents d = {a, b, c, n / (a * b * c)};
        bool ok = true;
        for (int mu = 0; mu < 4; ++mu)
          ok = ok && lattice[mu] % d[mu] == 0 && (lattice[mu] / d[mu]) % 2 == 0 && lattice[mu] / d[mu] >= 2;
        if (ok) out.push_back(d);
      }
  return out;
}

// Largest |difference| over the links at local x with lo <= x[nu] < hi (lo = -1, hi = L + 1 includes the halo).
double max_difference(const HostGauge& a, const HostGauge& b, int lo, int extra) {
  const Extents& l = a.geometry().local();
  double d = 0;
  int x[4];
  for (x[3] = lo; x[3] < l[3] + extra; ++x[3])
    for (x[2] = lo; x[2] < l[2] + extra; ++x[2])
      for (x[1] = lo; x[1] < l[1] + extra; ++x[1])
        for (x[0] = lo; x[0] < l[0] + extra; ++x[0])
          for (int mu = 0; mu < 4; ++mu)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j) {
                d = std::fmax(d, std::fabs(a.at(x, mu).e[i][j].re - b.at(x, mu).e[i][j].re));
                d = std::fmax(d, std::fabs(a.at(x, mu).e[i][j].im - b.at(x, mu).e[i][j].im));
              }
  return d;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// path read straight to the device equals v, the host read of it (info): every link of the box, the observables.
void check_device_read(const std::string& path, const HostGauge& v, const GaugeFileInfo& info, Communicator& comm,
                       const std::string& at) {
  GaugeFileInfo di;
  std::optional<HostGauge> w;
  const std::string err = collective_error(
      [&] { w.emplace(emprism::test::read_through_device(path, v.geometry(), comm, &di)); }, at + "device read");
  check(err.empty(), at + "device read failed: " + err);
  if (!w) return;
  const double d = emprism::test::max_link_diff(*w, v), tol = emprism::backend::device_is_host() ? 0.0 : 1e-13;
  check(d == 0.0, at + "device read differs from the host read by " + std::to_string(d));
  check(std::fabs(di.plaquette - info.plaquette) <= tol && std::fabs(di.link_trace - info.link_trace) <= tol,
        at + "device read's plaquette or link trace differs");
  check(di.checksum == info.checksum, at + "device read's checksum " + di.checksum);
}

// path refused by both readers with the same message (err: the host reader's).
void check_device_error(const std::string& path, const Geometry& g, Communicator& comm, const std::string& err,
                        const std::string& at) {
  const std::string derr =
      collective_error([&] { emprism::test::read_through_device(path, g, comm); }, at + " device read");
  check(derr == err, at + ": device read's error '" + derr + "' differs from '" + err + "'");
}

std::string g_dir;

void test_grid(const Extents& dims, const std::string& data_dir) {
  const std::string label = "grid " + str(dims);
  Communicator comm(MPI_COMM_WORLD);
  ProcessGrid grid = emprism::make_process_grid(comm, kGlobal, dims, {false, false, false, false});
  const Geometry g(kGlobal, grid.local_extents(kGlobal), grid.origin(kGlobal), grid.partitioned);
  HostGauge u = emprism::make_random_gauge(g, kSeed, 1.0);
  u.fill_halo(&grid);
  const double plaq = emprism::plaquette(u, &comm);

  // Rank 0's single-rank reference field.
  const Geometry whole = Geometry::single_rank(kGlobal);
  std::optional<HostGauge> ref;
  if (g_rank == 0) ref.emplace(emprism::make_random_gauge(whole, kSeed, 1.0));

  struct Case {
    GaugeFormat fmt;
    int bits;
    const char* name;
  };
  for (const Case& c : {Case{GaugeFormat::Ildg, 64, "ildg64"}, Case{GaugeFormat::Ildg, 32, "ildg32"},
                        Case{GaugeFormat::Nersc, 64, "nersc64"}}) {
    const std::string at = label + " " + c.name + ": ";
    const std::string path = g_dir + "/" + c.name;
    std::string err =
        collective_error([&] { emprism::io::write_gauge_file(path, c.fmt, u, &grid, comm, c.bits); }, at + "write");
    check(err.empty(), at + "write failed: " + err);
    HostGauge v(g);
    GaugeFileInfo info;
    err = collective_error([&] { info = emprism::io::read_gauge_file(path, GaugeFormat::Auto, v, &grid, comm); },
                           at + "read");
    check(err.empty(), at + "read failed: " + err);
    if (!err.empty()) continue;
    const double tol = c.bits == 64 ? 0.0 : 1e-7;
    const double d_block = max_difference(u, v, 0, 0), d_all = max_difference(u, v, -1, 1);
    check(d_block <= tol, at + "block differs by " + std::to_string(d_block));
    check(d_all <= tol, at + "halo differs by " + std::to_string(d_all));
    check(info.checksum == "ok", at + "checksum " + info.checksum);
    check(std::fabs(info.plaquette - plaq) <= (c.bits == 64 ? 1e-14 : 1e-6),
          at + "plaquette " + std::to_string(info.plaquette) + " vs " + std::to_string(plaq));
    check_device_read(path, v, info, comm, at);
    // The file read whole on rank 0 alone equals the single-rank field.
    if (g_rank == 0) {
      Communicator self(MPI_COMM_SELF);
      HostGauge w(whole);
      try {
        const GaugeFileInfo wi = emprism::io::read_gauge_file(path, c.fmt, w, nullptr, self);
        const double d = max_difference(*ref, w, 0, 0);
        check(d <= tol, at + "file read on one rank differs from the single-rank field by " + std::to_string(d));
        check(std::fabs(wi.plaquette - info.plaquette) <= 1e-13, at + "single-rank plaquette differs");
      } catch (const InputError& e) {
        check(false, at + "single-rank read failed: " + e.what());
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) std::remove(path.c_str());
  }

  // One bad link, on the rank holding the last site only; its files' checksums are right.
  {
    const std::string path = g_dir + "/bad_link.nersc";
    HostGauge bad = u;
    const Extents& o = g.origin();
    const Extents& l = g.local();
    bool mine = true;
    int x[4];
    for (int mu = 0; mu < 4; ++mu) {
      x[mu] = kGlobal[mu] - 1 - o[mu];
      mine = mine && x[mu] >= 0 && x[mu] < l[mu];
    }
    if (mine) bad.at(x, 3).e[0][0].re += 0.01;
    collective_error([&] { emprism::io::write_gauge_file(path, GaugeFormat::Nersc, bad, &grid, comm); },
                     label + " bad link write");
    HostGauge v(g);
    const std::string err = collective_error(
        [&] { emprism::io::read_gauge_file(path, GaugeFormat::Nersc, v, &grid, comm); }, label + " bad link read");
    check(contains(err, path + ": link U_t at site (x, y, z, t) = (3, 3, 3, 7) is not in SU(3)"),
          label + " bad link: message '" + err + "'");
    check_device_error(path, g, comm, err, label + " bad link");
    // A corrupted copy of it: the checksum error, the same on every rank.
    const std::string corrupt = g_dir + "/corrupt.nersc";
    if (g_rank == 0) {
      std::ifstream in(path, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      bytes[bytes.size() / 2] ^= 0x10;
      std::ofstream(corrupt, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string err2 = collective_error(
        [&] { emprism::io::read_gauge_file(corrupt, GaugeFormat::Auto, v, &grid, comm); }, label + " corrupt read");
    check(contains(err2, corrupt + ": CHECKSUM mismatch"), label + " corrupt: message '" + err2 + "'");
    check_device_error(corrupt, g, comm, err2, label + " corrupt");
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
      std::remove(path.c_str());
      std::remove(corrupt.c_str());
    }
  }

  // PyQUDA's ILDG file, distributed.
  if (!data_dir.empty()) {
    const std::string path = data_dir + "/pyquda_weak_field.lime";
    double single = 0;
    if (g_rank == 0) single = emprism::io::inspect_gauge_file(path).plaquette;
    MPI_Bcast(&single, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    HostGauge v(g);
    GaugeFileInfo info;
    const std::string err = collective_error(
        [&] { info = emprism::io::read_gauge_file(path, GaugeFormat::Auto, v, &grid, comm); }, label + " pyquda");
    check(err.empty(), label + " pyquda read failed: " + err);
    check(info.checksum == "ok", label + " pyquda checksum " + info.checksum);
    check(std::fabs(info.plaquette - single) <= 1e-13,
          label + " pyquda plaquette " + std::to_string(info.plaquette) + " vs single rank " + std::to_string(single));
    check(std::fabs(info.plaquette - 0.99480413226670084) <= 1e-12, label + " pyquda plaquette value");
    check(std::fabs(emprism::plaquette(v, &comm) - info.plaquette) <= 1e-15, label + " pyquda halo");
    if (err.empty()) check_device_read(path, v, info, comm, label + " pyquda: ");
  }
  MPI_Comm_free(&grid.cart);
}

// Chroma's NERSC file (4^4, two rows, 32-bit big-endian) read by both readers on a grid that splits 4^4.
void test_chroma(const Extents& dims, const std::string& data_dir) {
  const Extents lattice = {4, 4, 4, 4};
  const std::string label = "chroma grid " + str(dims) + ": ", path = data_dir + "/chroma_t_nersc.cfg";
  Communicator comm(MPI_COMM_WORLD);
  ProcessGrid grid = emprism::make_process_grid(comm, lattice, dims, {false, false, false, false});
  const Geometry g(lattice, grid.local_extents(lattice), grid.origin(lattice), grid.partitioned);
  HostGauge v(g);
  GaugeFileInfo info;
  const std::string err = collective_error(
      [&] { info = emprism::io::read_gauge_file(path, GaugeFormat::Auto, v, &grid, comm); }, label + "read");
  check(err.empty(), label + "read failed: " + err);
  if (err.empty()) check_device_read(path, v, info, comm, label);
  MPI_Comm_free(&grid.cart);
}

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  g_rank = test.rank();
  g_size = test.size();
  const std::string data_dir = EMPRISM_TEST_DATA_DIR;
  if (!std::filesystem::exists(data_dir + "/pyquda_weak_field.lime"))
    throw std::runtime_error("no " + data_dir + "/pyquda_weak_field.lime (tests/data)");
  g_dir = test.scratch_dir();
  const std::vector<Extents> all = grids(g_size);
  for (const Extents& d : all) test_grid(d, data_dir);
  for (const Extents& d : grids(g_size, {4, 4, 4, 4})) test_chroma(d, data_dir);
  if (g_rank == 0) std::printf("%zu process grids\n", all.size());
}
