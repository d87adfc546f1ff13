// test_gauge_device_read.cpp: gauge fields made where they are used, on one rank:
// - gauge files read straight to the device (io/gauge's DeviceGauge read: the block with its halo, a timeslice at a
//   time) against the host reader (after its halo exchange): the files of other codes in tests/data (Chroma's NERSC,
//   PyQUDA's ILDG) and files written here (ILDG 32/64 bit, NERSC 3x3 and two rows): every link of the box equal, the
//   plaquette and link trace equal (bits on the CPU backend; on a GPU to rounding of the device's products);
// - the same errors from both readers (corrupted byte, truncated file, a link not in SU(3), wrong extents);
// - the host holds one timeslice of the halo box, not the block (GaugeFileInfo::staging_bytes);
// - the unit field made on the device; the SU(3) check on the device; the device heatbath started from a device field
//   and handed over without a download.
// Convention: docs/conventions.md s. 1, 2, 7. Runs on one rank (Communicator on MPI_COMM_WORLD, grid = nullptr).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/physics/heatbath_device.hpp"
#include "tests/support/gauge_compare.hpp"

namespace emprism {
namespace {

namespace fs = std::filesystem;
using io::GaugeFileInfo;
using io::GaugeFormat;

std::string data_dir() { return EMPRISM_TEST_DATA_DIR; }

// Observables: the host's bits on the CPU backend (the same order of sums), rounding on a GPU.
double observable_tolerance() { return backend::device_is_host() ? 0.0 : 1e-13; }

// A scratch file removed at the end of the test.
struct Scratch {
  explicit Scratch(const std::string& name)
      : path((fs::temp_directory_path() / ("emprism_devread_" + std::to_string(::getpid()) + "_" + name)).string()) {}
  ~Scratch() { std::remove(path.c_str()); }
  std::string path;
};

// path read by both readers into geometry g: the same links (halo included), observables, checksum and precision.
void expect_same_read(const std::string& path, const Geometry& g) {
  SCOPED_TRACE(path);
  Communicator comm(MPI_COMM_WORLD);
  HostGauge host(g);
  const GaugeFileInfo want = io::read_gauge_file(path, GaugeFormat::Auto, host, nullptr, comm);
  GaugeFileInfo got;
  const HostGauge dev = test::read_through_device(path, g, comm, &got);
  EXPECT_EQ(test::max_link_diff(dev, host), 0.0);
  EXPECT_LE(std::fabs(got.plaquette - want.plaquette), observable_tolerance());
  EXPECT_LE(std::fabs(got.link_trace - want.link_trace), observable_tolerance());
  EXPECT_EQ(got.format, want.format);
  EXPECT_EQ(got.checksum, want.checksum);
  EXPECT_EQ(got.precision_bits, want.precision_bits);
  EXPECT_EQ(got.header_plaquette, want.header_plaquette);
  EXPECT_EQ(got.header_link_trace, want.header_link_trace);
}

// The InputError message of f ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Both readers refuse path with the same message.
void expect_same_error(const std::string& path, const Geometry& g) {
  Communicator comm(MPI_COMM_WORLD);
  HostGauge host(g);
  const std::string want = error_of([&] { io::read_gauge_file(path, GaugeFormat::Auto, host, nullptr, comm); });
  const std::string got = error_of([&] { test::read_through_device(path, g, comm); });
  EXPECT_NE(want, "");
  EXPECT_EQ(got, want);
}

void flip_byte(const std::string& path, std::streamoff at, unsigned char bits) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ bits);
  f.seekp(at);
  f.write(&c, 1);
}

TEST(GaugeDeviceRead, FilesOfOtherCodesEqualTheHostRead) {
  expect_same_read(data_dir() + "/chroma_t_nersc.cfg", Geometry::single_rank({4, 4, 4, 4}));
  expect_same_read(data_dir() + "/pyquda_weak_field.lime", Geometry::single_rank({4, 4, 4, 8}));
}

TEST(GaugeDeviceRead, WrittenFilesEqualTheHostRead) {
  const Geometry g = Geometry::single_rank({4, 2, 6, 8});
  HostGauge u = make_random_gauge(g, 77, 0.8);
  Communicator comm(MPI_COMM_WORLD);
  for (const auto& [fmt, bits, name] :
       {std::make_tuple(GaugeFormat::Ildg, 64, "a.ildg"), std::make_tuple(GaugeFormat::Ildg, 32, "b.ildg"),
        std::make_tuple(GaugeFormat::Nersc, 64, "c.nersc"), std::make_tuple(GaugeFormat::Nersc, 32, "d.nersc")}) {
    Scratch f(name);
    io::write_gauge_file(f.path, fmt, u, nullptr, comm, bits);
    expect_same_read(f.path, g);
  }
}

TEST(GaugeDeviceRead, ErrorsAreTheHostReadersErrors) {
  const Geometry g = Geometry::single_rank({4, 2, 6, 8});
  HostGauge u = make_random_gauge(g, 78, 1.0);
  Communicator comm(MPI_COMM_WORLD);
  Scratch good("good.nersc");
  io::write_gauge_file(good.path, GaugeFormat::Nersc, u, nullptr, comm, 64);
  expect_same_error(good.path, Geometry::single_rank({4, 2, 6, 4}));  // wrong extents
  for (const auto& [fmt, name] :
       {std::make_tuple(GaugeFormat::Nersc, "e.nersc"), std::make_tuple(GaugeFormat::Ildg, "e.ildg")}) {
    Scratch f(name);
    io::write_gauge_file(f.path, fmt, u, nullptr, comm, 64);
    const auto size = static_cast<std::streamoff>(fs::file_size(f.path));
    flip_byte(f.path, size - 3001, 0x01);  // a low mantissa bit (the ILDG data end before a checksum record)
    expect_same_error(f.path, g);
    fs::resize_file(f.path, static_cast<std::uintmax_t>(size - 20000));
    expect_same_error(f.path, g);
  }
  HostGauge bad = u;
  const int x[4] = {3, 1, 5, 6};
  bad.at(x, 2).e[1][1].re += 0.01;
  Scratch f("bad_link.nersc");
  io::write_gauge_file(f.path, GaugeFormat::Nersc, bad, nullptr, comm, 64);
  expect_same_error(f.path, g);
  expect_same_error(data_dir() + "/missing.lime", g);
}

// A 4^3 x 32 block: the host holds one timeslice of the halo box (records, their index and, on a GPU, the pinned
// links), well under a quarter of the block's links.
TEST(GaugeDeviceRead, HostHoldsOneTimesliceNotTheBlock) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 32});
  Communicator comm(MPI_COMM_WORLD);
  Scratch f("long.ildg");
  io::write_gauge_file(f.path, GaugeFormat::Ildg, make_random_gauge(g, 79, 1.0), nullptr, comm, 64);
  GaugeFileInfo info;
  test::read_through_device(f.path, g, comm, &info);
  const double block = static_cast<double>(g.local_volume()) * 4 * sizeof(SU3<double>);
  EXPECT_GT(info.staging_bytes, 0u);
  EXPECT_LT(static_cast<double>(info.staging_bytes), block / 4);
}

TEST(GaugeDeviceRead, UnitFieldOnTheDeviceIsTheHostUnitField) {
  const Geometry g = Geometry::single_rank({4, 2, 2, 6});
  MetricsRegistry metrics;
  const HostGauge got = download_gauge(metrics, make_unit_gauge_device(metrics, g));
  EXPECT_EQ(test::max_link_diff(got, make_unit_gauge(g)), 0.0);
}

TEST(GaugeDeviceRead, Su3CheckFindsTheFirstBadLink) {
  const Geometry g = Geometry::single_rank({4, 2, 2, 6});
  MetricsRegistry metrics;
  HostGauge u = make_random_gauge(g, 80, 1.0);
  DeviceGauge dev(g);
  dev.buffer().copy_from_host(u.storage().data());
  EXPECT_EQ(first_non_su3_link(metrics, g, dev.data(), 1e-10, "check").lex, -1);
  const int a[4] = {1, 1, 0, 4}, b[4] = {3, 0, 1, 5};
  u.at(b, 0).e[0][0].re += 1e-3;
  u.at(a, 3).e[2][1].im += 1e-6;
  dev.buffer().copy_from_host(u.storage().data());
  const NonSu3Link bad = first_non_su3_link(metrics, g, dev.data(), 1e-10, "check");
  EXPECT_EQ(bad.lex, g.local_lex(a));
  EXPECT_EQ(bad.mu, 3);
  EXPECT_NEAR(bad.deviation, unitarity_deviation(u.at(a, 3)), backend::device_is_host() ? 0.0 : 1e-15);
  EXPECT_EQ(first_non_su3_link(metrics, g, dev.data(), 1e-5, "check").lex, g.local_lex(b));  // a's within 1e-5
}

// The heatbath started from the unit field made on the device and handed over (release) equals the one started from
// the host's unit field and downloaded.
TEST(GaugeDeviceRead, HeatbathFromAndToTheDeviceEqualsTheHostRoundTrip) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  MetricsRegistry metrics;
  Communicator comm(MPI_COMM_WORLD);
  HeatbathParams p;
  p.beta = 5.7;
  p.seed = 12;
  HostGauge want = make_unit_gauge(g);
  DeviceHeatbath from_host(metrics, want, nullptr);
  DeviceHeatbath on_device(metrics, make_unit_gauge_device(metrics, g), nullptr);
  for (std::uint64_t s = 0; s < 2; ++s) {
    from_host.sweep(p, s);
    on_device.sweep(p, s);
  }
  EXPECT_EQ(on_device.plaquette(comm), from_host.plaquette(comm));
  from_host.download(want);
  EXPECT_EQ(test::max_link_diff(download_gauge(metrics, on_device.release()), want), 0.0);
}

}  // namespace
}  // namespace emprism
