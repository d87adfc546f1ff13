// test_gauge_openqcd_milc.cpp: the openQCD and MILC (version 5) gauge-file readers of io/gauge/openqcd.cpp and
// io/gauge/milc.cpp, on one rank (grid = nullptr). The files are written here, byte by byte, from a known random
// field by small writers transcribed from the formats' specifications (openQCD's export_cnfg() and main/README.io;
// MILC's io_lat4.c w_serial and io_lat.h), independently of the readers; the readers must give back the links
// exactly (64-bit data) or their float roundings (32-bit), and refuse corrupted, truncated or mismatched files
// with an InputError naming the file and the failed check. Both formats are also read straight to the device
// (read_gauge_file's DeviceGauge form): the host reader's links, halo included, observables and errors.
// Who may call: GoogleTest (emprism_tests).
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "io/gauge/formats.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "src/lattice/gauge.hpp"
#include "tests/support/gauge_compare.hpp"
#include "tests/support/openqcd_writer.hpp"

namespace emprism {
namespace {

namespace fs = std::filesystem;

// A small non-cubic lattice with four different extents, so that any mix-up of directions shows.
const Extents kExtents = {4, 2, 6, 8};  // (Lx, Ly, Lz, Lt)

// ---- byte writers (explicit byte order, independent of the host): put_u32, put_u64, put_double and the openQCD
// writer (openqcd_bytes, link_at) from tests/support/openqcd_writer.hpp
using test::Bytes;
using test::link_at;
using test::openqcd_bytes;
using test::put_double;
using test::put_u32;

void put_float(Bytes& b, float f, bool big) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(b, v, big);
}
std::uint32_t get_u32(const unsigned char* p, bool big) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | p[big ? i : 3 - i];
  return v;
}
double get_le_double(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}

// ---- MILC version 5 (w_serial): int32 magic 20103, int32 nx ny nz nt, char[64] time stamp, int32 order = 0,
// uint32 sum29, sum31, then per site (x fastest .. t slowest) U_x, U_y, U_z, U_t as 3x3 complex, all in the
// writer's byte order. Checksums over the data's 32-bit words v(i) (in that byte order): XOR of rotl(v, i mod 29)
// and of rotl(v, i mod 31).
std::uint32_t rotl(std::uint32_t v, unsigned r) { return r == 0 ? v : (v << r) | (v >> (32 - r)); }

Bytes milc_bytes(const HostGauge& u, int precision_bits, bool big) {
  const Extents& L = u.geometry().global();
  Bytes data;
  for (int t = 0; t < L[3]; ++t)
    for (int z = 0; z < L[2]; ++z)
      for (int y = 0; y < L[1]; ++y)
        for (int x = 0; x < L[0]; ++x)
          for (int mu = 0; mu < 4; ++mu)
            for (int a = 0; a < 3; ++a)
              for (int c = 0; c < 3; ++c) {
                const Complex<double> v = link_at(u, x, y, z, t, mu).e[a][c];
                if (precision_bits == 32) {
                  put_float(data, static_cast<float>(v.re), big);
                  put_float(data, static_cast<float>(v.im), big);
                } else {
                  put_double(data, v.re, big);
                  put_double(data, v.im, big);
                }
              }
  std::uint32_t sum29 = 0, sum31 = 0;
  for (std::size_t i = 0; i < data.size() / 4; ++i) {
    const std::uint32_t w = get_u32(data.data() + 4 * i, big);
    sum29 ^= rotl(w, static_cast<unsigned>(i % 29));
    sum31 ^= rotl(w, static_cast<unsigned>(i % 31));
  }
  Bytes b;
  put_u32(b, 20103, big);
  for (int mu = 0; mu < 4; ++mu) put_u32(b, static_cast<std::uint32_t>(L[mu]), big);
  const char stamp[64] = "Sat Nov 22 05:31:00 2025";
  b.insert(b.end(), stamp, stamp + 64);
  put_u32(b, 0, big);  // natural order
  put_u32(b, sum29, big);
  put_u32(b, sum31, big);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// ---- fixture: a temporary directory and the field
class GaugeFormatFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "emprism_oqm_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const Bytes& b) {
    const std::string path = dir_ + "/" + name;
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    EXPECT_TRUE(f.good());
    return path;
  }
  // Runs f and expects an InputError whose message names path and contains `what`.
  void expect_input_error(const std::function<void()>& f, const std::string& path, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no InputError; expected one containing '" << what << "'";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << "'" << what << "' not in: " << msg;
    }
  }

  std::string dir_;
  Geometry geom_ = Geometry::single_rank(kExtents);
  HostGauge field_ = make_random_gauge(geom_, 20251122, 0.6);
  Communicator comm_{MPI_COMM_WORLD};
};

// Every local link of a equals that of b exactly.
void expect_identical(const HostGauge& a, const HostGauge& b) {
  const Geometry& g = a.geometry();
  int bad = 0;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const Complex<double> p = a.at(x, mu).e[i][j], q = b.at(x, mu).e[i][j];
          if (p.re != q.re || p.im != q.im) ++bad;
        }
  }
  EXPECT_EQ(bad, 0) << "matrix elements differ";
}

// ================================================================ openQCD

using GaugeOpenQcd = GaugeFormatFiles;

TEST_F(GaugeOpenQcd, WriterFollowsOpenQcdOrder) {
  // Pins the test's writer to the specification: record 0 is the first odd point in openQCD order, (x0, x1, x2, x3)
  // = (0, 0, 0, 1) = our (x, y, z, t) = (0, 0, 1, 0); its links 0 and 1 are U_t there and at t = -1 (Lt - 1);
  // links 2, 3 are U_x there and at x = -1. Record 1 is (0, 0, 0, 3) (site 2 is even).
  const Bytes b = openqcd_bytes(field_, 3.0 * plaquette(field_));
  ASSERT_EQ(b.size(), 24u + std::size_t(4 * 2 * 6 * 8 / 2) * 8 * 144);
  EXPECT_EQ(get_u32(b.data(), false), 8u);       // N0 = Lt
  EXPECT_EQ(get_u32(b.data() + 4, false), 4u);   // N1 = Lx
  EXPECT_EQ(get_u32(b.data() + 8, false), 2u);   // N2 = Ly
  EXPECT_EQ(get_u32(b.data() + 12, false), 6u);  // N3 = Lz
  auto first_re = [&](std::size_t record, int slot) {
    return get_le_double(b.data() + 24 + record * 1152 + slot * 144);
  };
  EXPECT_EQ(first_re(0, 0), link_at(field_, 0, 0, 1, 0, 3).e[0][0].re);
  EXPECT_EQ(first_re(0, 1), link_at(field_, 0, 0, 1, 7, 3).e[0][0].re);
  EXPECT_EQ(first_re(0, 2), link_at(field_, 0, 0, 1, 0, 0).e[0][0].re);
  EXPECT_EQ(first_re(0, 3), link_at(field_, 3, 0, 1, 0, 0).e[0][0].re);
  EXPECT_EQ(first_re(0, 7), link_at(field_, 0, 0, 0, 0, 2).e[0][0].re);  // U(x - 3, 3): z - 1 = 0
  EXPECT_EQ(first_re(1, 0), link_at(field_, 0, 0, 3, 0, 3).e[0][0].re);
}

TEST_F(GaugeOpenQcd, ReadsBackIdenticalLinks) {
  const double p = plaquette(field_);
  const std::string path = write("cnfg.oqcd", openqcd_bytes(field_, 3.0 * p));
  HostGauge u(geom_);
  const io::GaugeFileInfo info = io::read_openqcd(path, u, nullptr, comm_);
  expect_identical(u, field_);
  EXPECT_EQ(info.format, "openqcd");
  EXPECT_EQ(info.extents, kExtents);
  EXPECT_EQ(info.precision_bits, 64);
  EXPECT_EQ(info.checksum, "none");
  EXPECT_NEAR(info.plaquette, p, 1e-14);
  EXPECT_NEAR(info.link_trace, link_trace(field_), 1e-14);
  ASSERT_TRUE(info.header_plaquette.has_value());
  EXPECT_NEAR(*info.header_plaquette, p, 1e-14);  // in our normalisation (openQCD's / 3)
  EXPECT_FALSE(info.header_link_trace.has_value());
  // The halo is filled: the plaquette of the field read is the field's.
  EXPECT_NEAR(plaquette(u), p, 1e-14);
}

TEST_F(GaugeOpenQcd, UnitFieldHasHeaderPlaquetteThree) {
  const HostGauge unit = make_unit_gauge(geom_);
  const std::string path = write("unit.oqcd", openqcd_bytes(unit, 3.0));
  HostGauge u(geom_);
  const io::GaugeFileInfo info = io::read_openqcd(path, u, nullptr, comm_);
  EXPECT_DOUBLE_EQ(info.plaquette, 1.0);
  EXPECT_DOUBLE_EQ(*info.header_plaquette, 1.0);
  // Our normalisation in the header (1 instead of 3) is refused.
  const std::string wrong = write("unit_wrong.oqcd", openqcd_bytes(unit, 1.0));
  expect_input_error([&] { io::read_openqcd(wrong, u, nullptr, comm_); }, wrong, "plaquette");
}

TEST_F(GaugeOpenQcd, WrongHeaderPlaquetteIsRefused) {
  const double p = plaquette(field_);
  const std::string path = write("badplaq.oqcd", openqcd_bytes(field_, 3.0 * p * (1 + 1e-8)));
  HostGauge u(geom_);
  expect_input_error([&] { io::read_openqcd(path, u, nullptr, comm_); }, path, "plaquette");
}

TEST_F(GaugeOpenQcd, CorruptedByteIsRefused) {
  Bytes b = openqcd_bytes(field_, 3.0 * plaquette(field_));
  b[24 + 5 * 1152 + 3 * 144 + 7] ^= 0x40;  // the exponent byte of a real part: no longer SU(3)
  const std::string path = write("corrupt.oqcd", b);
  HostGauge u(geom_);
  expect_input_error([&] { io::read_openqcd(path, u, nullptr, comm_); }, path, "SU(3)");
  // A flip in a high mantissa bit (2^-8 relative) shows as non-SU(3) too. (openQCD files have no checksum: a flip
  // in the lowest bits, ~1e-16, is below every check.)
  Bytes c = openqcd_bytes(field_, 3.0 * plaquette(field_));
  c[24 + 9 * 1152 + 6 * 144 + 16 + 5] ^= 0x10;
  const std::string path2 = write("corrupt2.oqcd", c);
  expect_input_error([&] { io::read_openqcd(path2, u, nullptr, comm_); }, path2, "SU(3)");
}

TEST_F(GaugeOpenQcd, TruncatedFileIsRefused) {
  Bytes b = openqcd_bytes(field_, 3.0 * plaquette(field_));
  b.resize(b.size() - 100);
  const std::string path = write("short.oqcd", b);
  HostGauge u(geom_);
  expect_input_error([&] { io::read_openqcd(path, u, nullptr, comm_); }, path, "truncated");
  const std::string tiny = write("tiny.oqcd", Bytes(10, 0));
  expect_input_error([&] { io::read_openqcd(tiny, u, nullptr, comm_); }, tiny, "truncated");
}

TEST_F(GaugeOpenQcd, WrongExtentsAreRefused) {
  // Same volume, z and t exchanged: the file size fits, the extents do not.
  const std::string path = write("cnfg.oqcd", openqcd_bytes(field_, 3.0 * plaquette(field_)));
  const Geometry other = Geometry::single_rank({4, 2, 8, 6});
  HostGauge u(other);
  expect_input_error([&] { io::read_openqcd(path, u, nullptr, comm_); }, path, "extents");
}

TEST_F(GaugeOpenQcd, InspectAndDetection) {
  const double p = plaquette(field_);
  const std::string oq = write("cnfg.oqcd", openqcd_bytes(field_, 3.0 * p));
  const std::string milc = write("cnfg.milc", milc_bytes(field_, 32, true));
  const std::string junk = write("junk.bin", Bytes(4096, 0x5a));
  EXPECT_TRUE(io::looks_like_openqcd(oq));
  EXPECT_FALSE(io::looks_like_openqcd(milc));
  EXPECT_FALSE(io::looks_like_openqcd(junk));
  EXPECT_FALSE(io::looks_like_openqcd(dir_ + "/missing"));
  const io::GaugeFileInfo info = io::inspect_openqcd(oq);
  EXPECT_EQ(info.extents, kExtents);
  EXPECT_NEAR(info.plaquette, p, 1e-14);
  // Through the public API, with the format detected.
  EXPECT_EQ(io::detect_gauge_format(oq), io::GaugeFormat::OpenQcd);
  HostGauge u(geom_);
  EXPECT_EQ(io::read_gauge_file(oq, io::GaugeFormat::Auto, u, nullptr, comm_).format, "openqcd");
  expect_identical(u, field_);
}

// ================================================================ MILC

using GaugeMilc = GaugeFormatFiles;

TEST_F(GaugeMilc, WriterFollowsMilcLayout) {
  const Bytes b = milc_bytes(field_, 64, true);
  ASSERT_EQ(b.size(), 96u + std::size_t(4 * 2 * 6 * 8) * 4 * 18 * 8);
  EXPECT_EQ(get_u32(b.data(), true), 20103u);
  EXPECT_EQ(get_u32(b.data() + 4, true), 4u);   // nx
  EXPECT_EQ(get_u32(b.data() + 16, true), 8u);  // nt
  EXPECT_EQ(get_u32(b.data() + 84, true), 0u);  // order
  // Site 1 is x = 1; its U_y starts 1 site + 1 link in.
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | b[96 + 576 + 144 + i];
  double d;
  std::memcpy(&d, &v, 8);
  EXPECT_EQ(d, link_at(field_, 1, 0, 0, 0, 1).e[0][0].re);
}

TEST_F(GaugeMilc, ReadsBackBothByteOrdersAndPrecisions) {
  for (const int bits : {64, 32})
    for (const bool big : {false, true}) {
      SCOPED_TRACE(std::to_string(bits) + "-bit " + (big ? "big" : "little") + "-endian");
      const std::string path = write("cnfg.milc", milc_bytes(field_, bits, big));
      HostGauge u(geom_);
      const io::GaugeFileInfo info = io::read_milc(path, u, nullptr, comm_);
      EXPECT_EQ(info.format, "milc");
      EXPECT_EQ(info.extents, kExtents);
      EXPECT_EQ(info.precision_bits, bits);
      EXPECT_EQ(info.checksum, "ok");
      EXPECT_FALSE(info.header_plaquette.has_value());
      if (bits == 64) {
        expect_identical(u, field_);
        EXPECT_NEAR(info.plaquette, plaquette(field_), 1e-14);
      } else {
        int bad = 0;
        for (std::int64_t lex = 0; lex < geom_.local_volume(); ++lex) {
          int x[4];
          geom_.local_coords(lex, x);
          for (int mu = 0; mu < 4; ++mu)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j) {
                const Complex<double> p = u.at(x, mu).e[i][j], q = field_.at(x, mu).e[i][j];
                if (p.re != double(float(q.re)) || p.im != double(float(q.im))) ++bad;
              }
        }
        EXPECT_EQ(bad, 0);
        EXPECT_NEAR(info.plaquette, plaquette(field_), 1e-6);
      }
      EXPECT_NEAR(info.link_trace, link_trace(u), 1e-15);
    }
}

TEST_F(GaugeMilc, CorruptedByteFailsTheChecksum) {
  for (const int bits : {32, 64}) {
    Bytes b = milc_bytes(field_, bits, false);
    b[96 + 1000] ^= 0x01;  // a low mantissa bit: still SU(3) to 1e-5, only the checksum sees it
    const std::string path = write("corrupt.milc", b);
    HostGauge u(geom_);
    expect_input_error([&] { io::read_milc(path, u, nullptr, comm_); }, path, "checksum");
  }
  // A corrupted checksum word in the header, too.
  Bytes c = milc_bytes(field_, 32, true);
  c[91] ^= 0x80;
  const std::string path = write("corrupt_sum.milc", c);
  HostGauge u(geom_);
  expect_input_error([&] { io::read_milc(path, u, nullptr, comm_); }, path, "checksum");
}

TEST_F(GaugeMilc, BadFilesAreRefused) {
  HostGauge u(geom_);
  const Bytes good = milc_bytes(field_, 32, false);
  Bytes b = good;
  b.resize(b.size() - 8);
  const std::string shorter = write("short.milc", b);
  expect_input_error([&] { io::read_milc(shorter, u, nullptr, comm_); }, shorter, "truncated");
  const std::string header_only = write("header.milc", Bytes(good.begin(), good.begin() + 50));
  expect_input_error([&] { io::read_milc(header_only, u, nullptr, comm_); }, header_only, "truncated");
  b = good;
  b.resize(b.size() + 4);
  const std::string longer = write("long.milc", b);
  expect_input_error([&] { io::read_milc(longer, u, nullptr, comm_); }, longer, "matches neither");
  b = good;
  b[0] ^= 0xff;
  const std::string magic = write("magic.milc", b);
  expect_input_error([&] { io::read_milc(magic, u, nullptr, comm_); }, magic, "magic");
  b = good;
  b[84] = 1;  // order = 1 (node-dump order), little-endian
  const std::string order = write("order.milc", b);
  expect_input_error([&] { io::read_milc(order, u, nullptr, comm_); }, order, "site order 1");
  const Geometry other = Geometry::single_rank({4, 2, 8, 6});
  HostGauge v(other);
  const std::string path = write("cnfg.milc", good);
  expect_input_error([&] { io::read_milc(path, v, nullptr, comm_); }, path, "extents");
  expect_input_error([&] { io::read_milc(dir_ + "/missing.milc", u, nullptr, comm_); }, dir_ + "/missing.milc",
                     "cannot open");
}

TEST_F(GaugeMilc, InspectAndDetection) {
  const std::string milc_le = write("le.milc", milc_bytes(field_, 64, false));
  const std::string milc_be = write("be.milc", milc_bytes(field_, 32, true));
  const std::string oq = write("cnfg.oqcd", openqcd_bytes(field_, 3.0 * plaquette(field_)));
  EXPECT_TRUE(io::looks_like_milc(milc_le));
  EXPECT_TRUE(io::looks_like_milc(milc_be));
  EXPECT_FALSE(io::looks_like_milc(oq));
  EXPECT_FALSE(io::looks_like_milc(dir_ + "/missing"));
  const io::GaugeFileInfo info = io::inspect_milc(milc_be);
  EXPECT_EQ(info.extents, kExtents);
  EXPECT_EQ(info.precision_bits, 32);
  EXPECT_EQ(info.checksum, "ok");
  EXPECT_EQ(io::detect_gauge_format(milc_le), io::GaugeFormat::Milc);
  EXPECT_EQ(io::detect_gauge_format(milc_be), io::GaugeFormat::Milc);
  HostGauge u(geom_);
  EXPECT_EQ(io::read_gauge_file(milc_le, io::GaugeFormat::Auto, u, nullptr, comm_).precision_bits, 64);
  expect_identical(u, field_);
}

// ================================================================ read straight to the device

// Both readers give the same links (the block and its halo), observables and checksum state, or the same error.
void expect_device_read_as_host(const std::string& path, const Geometry& g, Communicator& comm) {
  SCOPED_TRACE(path);
  HostGauge want(g);
  std::string want_err, got_err;
  io::GaugeFileInfo wi, gi;
  try {
    wi = io::read_gauge_file(path, io::GaugeFormat::Auto, want, nullptr, comm);
  } catch (const InputError& e) {
    want_err = e.what();
  }
  std::optional<HostGauge> got;
  try {
    got.emplace(test::read_through_device(path, g, comm, &gi));
  } catch (const InputError& e) {
    got_err = e.what();
  }
  EXPECT_EQ(got_err, want_err);
  if (!got || !want_err.empty()) return;
  const double tol = backend::device_is_host() ? 0.0 : 1e-13;
  EXPECT_EQ(test::max_link_diff(*got, want), 0.0);
  EXPECT_LE(std::fabs(gi.plaquette - wi.plaquette), tol);
  EXPECT_LE(std::fabs(gi.link_trace - wi.link_trace), tol);
  EXPECT_EQ(gi.checksum, wi.checksum);
  EXPECT_EQ(gi.format, wi.format);
}

// A block of a split lattice (origin not 0; x, z and t split) read slice by slice to the device on this one rank
// (detail::read_halo_slices, what the ILDG, NERSC and MILC readers use; the checksums, which need every rank's
// block, left out) holds, halo included, the whole lattice's links at the same global sites (wrapped): each rank's
// read, without exchange.
TEST_F(GaugeMilc, DeviceReadOfABlockHoldsTheWholeLatticesLinks) {
  const std::string path = write("block.milc", milc_bytes(field_, 64, true));
  const Extents local{2, 2, 2, 4}, origin{2, 0, 4, 4};
  const Geometry block(kExtents, local, origin, {true, false, true, true});
  DeviceGauge dev(block);
  {
    io::detail::SliceStage stage(dev);
    io::detail::read_halo_slices(path, 96, 4 * 18 * 8, block, comm_,
                                 [&](int t, const io::detail::HaloSliceRecords& rec) {
                                   io::detail::decode_slice(t, rec, stage, [](const unsigned char* p, int mu) {
                                     return io::detail::decode_link(p + mu * 18 * 8, 3, 64, true);
                                   });
                                 });
  }
  MetricsRegistry metrics;
  const HostGauge b = download_gauge(metrics, dev);
  int x[4], y[4], bad = 0;
  for (x[3] = -1; x[3] <= local[3]; ++x[3])
    for (x[2] = -1; x[2] <= local[2]; ++x[2])
      for (x[1] = -1; x[1] <= local[1]; ++x[1])
        for (x[0] = -1; x[0] <= local[0]; ++x[0]) {
          for (int k = 0; k < 4; ++k) y[k] = (origin[k] + x[k] + kExtents[k]) % kExtents[k];
          for (int mu = 0; mu < 4; ++mu)
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c)
                bad += b.at(x, mu).e[r][c].re != field_.at(y, mu).e[r][c].re ||
                       b.at(x, mu).e[r][c].im != field_.at(y, mu).e[r][c].im;
        }
  EXPECT_EQ(bad, 0);
}

TEST_F(GaugeMilc, DeviceReadEqualsHostRead) {
  for (const int bits : {64, 32})
    for (const bool big : {false, true}) {
      const std::string path = write("dev.milc", milc_bytes(field_, bits, big));
      expect_device_read_as_host(path, geom_, comm_);
      Bytes b = milc_bytes(field_, bits, big);
      b[96 + 1000] ^= 0x01;  // the checksum error
      expect_device_read_as_host(write("dev_corrupt.milc", b), geom_, comm_);
      b.resize(b.size() - 8);  // truncated
      expect_device_read_as_host(write("dev_short.milc", b), geom_, comm_);
    }
}

TEST_F(GaugeOpenQcd, DeviceReadEqualsHostRead) {
  const double p = plaquette(field_);
  expect_device_read_as_host(write("dev.oqcd", openqcd_bytes(field_, 3.0 * p)), geom_, comm_);
  expect_device_read_as_host(write("dev_plaq.oqcd", openqcd_bytes(field_, 3.0 * p + 1e-6)), geom_, comm_);
}

}  // namespace
}  // namespace emprism
