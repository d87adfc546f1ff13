// test_gauge_openqcd_mpi.cpp: standalone MPI test of the openQCD gauge-file reader on N ranks (ctest runs it with 2
// and 4), above all its read straight to the device, where each rank's block (and its one-site halo) spans parts of
// the file's order (odd points, x0 = t slowest .. x3 = z fastest, each record holding the forward and the backward
// links of its point). Rank 0 writes the file of a random 4x8x12x16 field (four different extents, so that a mix-up
// of directions shows) with tests/support/openqcd_writer.hpp, a writer independent of the reader; then for every
// process grid of N ranks that splits the lattice into even local extents (t, x, y, z split alone and together):
//   - the host read (read_gauge_file into a HostGauge, halo exchanged) gives every rank the links of its block and
//     halo of the same random field made distributed (make_random_gauge is decomposition independent), exactly;
//   - the device read (read_gauge_file into a DeviceGauge, the block with its halo read from the file) equals the
//     host read on every rank bitwise, halo included, with the same plaquette and link trace (bits on the CPU
//     backend, rounding on a GPU) and header plaquette; the plaquette equals the file's read on one rank
//     (inspect_gauge_file) to the rounding of a sum in another order;
//   - a truncated file, a file shorter than its header, a file with one corrupt link held in a record of another
//     rank's block (the backward t link of record 0, which belongs to the last timeslice) and a file whose header
//     plaquette is wrong are refused by both readers with the same one-line InputError on every rank.
// Exit status 0 when every check passed; each failure is printed with its rank. Who may call: mpiexec -n N.
#include <mpi.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
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
#include "tests/support/openqcd_writer.hpp"

namespace {

using emprism::Communicator;
using emprism::Extents;
using emprism::Geometry;
using emprism::HostGauge;
using emprism::InputError;
using emprism::ProcessGrid;
using emprism::io::GaugeFileInfo;
using emprism::io::GaugeFormat;
using emprism::test::check;
using emprism::test::collective_error;

const Extents kGlobal = {4, 8, 12, 16};  // (Lx, Ly, Lz, Lt): every extent a multiple of 4, all different
constexpr std::uint64_t kSeed = 20261124;
constexpr std::size_t kHeader = 24, kLink = 144, kRecord = 8 * kLink;
int g_rank = 0, g_size = 1;

std::string str(const Extents& e) {
  return "[" + std::to_string(e[0]) + ", " + std::to_string(e[1]) + ", " + std::to_string(e[2]) + ", " +
         std::to_string(e[3]) + "]";
}

// Every process grid of n ranks that divides kGlobal into even local extents.
std::vector<Extents> grids(int n) {
  std::vector<Extents> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      for (int c = 1; c <= n; ++c) {
        if (n % (a * b * c) != 0) continue;
        const Extents d = {a, b, c, n / (a * b * c)};
        bool ok = true;
        for (int mu = 0; mu < 4; ++mu) ok = ok && kGlobal[mu] % d[mu] == 0 && (kGlobal[mu] / d[mu]) % 2 == 0;
        if (ok) out.push_back(d);
      }
  return out;
}

// Rank 0 writes bytes to path; every rank returns once it is there.
void write_file(const std::string& path, const emprism::test::Bytes& bytes) {
  if (g_rank == 0)
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  MPI_Barrier(MPI_COMM_WORLD);
}

struct Files {
  std::string good, truncated, tiny, corrupt, bad_plaquette;
  double single_plaquette = 0;  // the good file read whole on one rank
};

// The files of the whole field (made on rank 0 only) in dir; the 1-rank plaquette broadcast to every rank.
Files write_files(const std::string& dir) {
  Files f{dir + "/good.oqcd", dir + "/truncated.oqcd", dir + "/tiny.oqcd", dir + "/corrupt.oqcd",
          dir + "/bad_plaquette.oqcd"};
  emprism::test::Bytes good, truncated, tiny(10, 0), corrupt, bad;
  if (g_rank == 0) {
    const Geometry single = Geometry::single_rank(kGlobal);  // outlives the field, which points to it
    const HostGauge whole = emprism::make_random_gauge(single, kSeed, 1.0);
    const double p = 3.0 * emprism::plaquette(whole);
    good = emprism::test::openqcd_bytes(whole, p);
    truncated.assign(good.begin(), good.end() - 1000);
    corrupt = good;
    corrupt[kHeader + 1 * kLink + 7] ^= 0x40;             // record 0, slot 1: U(x - 0, 0), our U_t at (0, 0, 1, Lt - 1)
    bad = emprism::test::openqcd_bytes(whole, p + 1e-6);  // p is near 0 (a Haar-random field): absolute
  }
  write_file(f.good, good);
  write_file(f.truncated, truncated);
  write_file(f.tiny, tiny);
  write_file(f.corrupt, corrupt);
  write_file(f.bad_plaquette, bad);
  if (g_rank == 0) f.single_plaquette = emprism::io::inspect_gauge_file(f.good).plaquette;
  MPI_Bcast(&f.single_plaquette, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return f;
}

// The host read of the good file, checked against the field made distributed; then the device read against it.
void check_reads(const Files& f, const Geometry& g, ProcessGrid& grid, Communicator& comm, const std::string& at) {
  HostGauge u = emprism::make_random_gauge(g, kSeed, 1.0);
  u.fill_halo(&grid);
  HostGauge v(g);
  GaugeFileInfo hi, di;
  std::string err = collective_error(
      [&] { hi = emprism::io::read_gauge_file(f.good, GaugeFormat::OpenQcd, v, &grid, comm); }, at + "host read");
  check(err.empty(), at + "host read failed: " + err);
  check(emprism::test::max_link_diff(v, u) == 0.0, at + "host read (block and halo) differs from the field");
  std::optional<HostGauge> w;
  err = collective_error([&] { w.emplace(emprism::test::read_through_device(f.good, g, comm, &di)); },
                         at + "device read");
  check(err.empty(), at + "device read failed: " + err);
  if (!w) return;
  const double d = emprism::test::max_link_diff(*w, v);
  check(d == 0.0, at + "device read differs from the host read by " + std::to_string(d));
  const double tol = emprism::backend::device_is_host() ? 0.0 : 1e-13;
  check(std::fabs(di.plaquette - hi.plaquette) <= tol, at + "device plaquette differs from the host read's");
  check(std::fabs(di.link_trace - hi.link_trace) <= tol, at + "device link trace differs from the host read's");
  check(di.format == "openqcd" && di.checksum == "none" && di.precision_bits == 64, at + "device read's info");
  check(di.header_plaquette == hi.header_plaquette, at + "device read's header plaquette differs");
  // The average of 6 V plaquettes (each |Re tr / 3| <= 1) summed in another order: at most 6 V eps apart.
  const double volume = double(kGlobal[0]) * kGlobal[1] * kGlobal[2] * kGlobal[3];
  const double sum_tol = 6 * volume * DBL_EPSILON;
  check(std::fabs(di.plaquette - f.single_plaquette) <= sum_tol, at + "plaquette " + std::to_string(di.plaquette) +
                                                                     " differs from the single-rank " +
                                                                     std::to_string(f.single_plaquette));
}

// path refused by both readers (format openqcd, as gauge.format = "openqcd" reads it) with the same message on every
// rank, one line, naming the file and containing `what`.
void check_refused(const std::string& path, const Geometry& g, ProcessGrid& grid, Communicator& comm,
                   const std::string& what, const std::string& at) {
  HostGauge v(g);
  const std::string herr = collective_error(
      [&] { emprism::io::read_gauge_file(path, GaugeFormat::OpenQcd, v, &grid, comm); }, at + "host read");
  const std::string derr = collective_error(
      [&] { emprism::test::read_through_device(path, g, comm, nullptr, GaugeFormat::OpenQcd); }, at + "device read");
  check(herr.rfind(path + ": ", 0) == 0 && herr.find(what) != std::string::npos,
        at + "host read's error '" + herr + "' does not name the file and '" + what + "'");
  check(herr.find('\n') == std::string::npos, at + "the error is not one line");
  check(derr == herr, at + "device read's error '" + derr + "' differs from the host read's '" + herr + "'");
}

void test_grid(const Files& f, const Extents& dims) {
  const std::string at = "grid " + str(dims) + ": ";
  Communicator comm(MPI_COMM_WORLD);
  ProcessGrid grid = emprism::make_process_grid(comm, kGlobal, dims, {false, false, false, false});
  const Geometry g(kGlobal, grid.local_extents(kGlobal), grid.origin(kGlobal), grid.partitioned);
  check_reads(f, g, grid, comm, at);
  check_refused(f.truncated, g, grid, comm, "truncated", at + "truncated: ");
  check_refused(f.tiny, g, grid, comm, "shorter than the 24-byte openQCD header", at + "tiny: ");
  check_refused(f.corrupt, g, grid, comm, "link U_t at site (x, y, z, t) = (0, 0, 1, 15) is not in SU(3)",
                at + "corrupt: ");
  check_refused(f.bad_plaquette, g, grid, comm, "plaquette mismatch", at + "bad plaquette: ");
  emprism::free_process_grid(grid);
}

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  g_rank = test.rank();
  g_size = test.size();
  const Files f = write_files(test.scratch_dir());
  const std::vector<Extents> all = grids(g_size);
  for (const Extents& d : all) test_grid(f, d);
  if (g_rank == 0) std::printf("%zu process grids\n", all.size());
}
