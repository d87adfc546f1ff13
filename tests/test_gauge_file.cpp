// test_gauge_file.cpp: gauge-configuration files (io/gauge_file.hpp) on one rank.
// - real files written by other codes (tests/data: Chroma's NERSC 4^4 two-row IEEE32BIG, PyQUDA's ILDG
//   4^3x8 64-bit): extents, precision, checksum ok, plaquette and link trace equal to the header's;
// - round trips write -> read of random links: ILDG 32/64 bit, NERSC 3x3 and two-row 32/64 bit (exact in 64 bit,
//   1e-7 in 32 bit); the same links through ILDG and NERSC;
// - small NERSC files built byte by byte here (2^4, a known plaquette, link trace and checksum; both byte orders);
// - failures, each an InputError naming the file and what failed: corrupted byte (checksum), truncated file,
//   wrong extents, a link not in SU(3), a header plaquette that disagrees, junk (detection);
// - gauge_info_json gives one parsable JSON line.
// Convention: docs/conventions.md s. 1, 2, 7. Runs on one rank (Communicator on MPI_COMM_WORLD, grid = nullptr).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "io/gauge_file.hpp"
#include "io/gauge_formats.hpp"
#include "src/errors.hpp"
#include "src/gauge.hpp"

namespace {

using namespace emprism;
using namespace emprism::io;

std::string data_dir() { return EMPRISM_TEST_DATA_DIR; }
std::string nersc_file() { return data_dir() + "/chroma_t_nersc.cfg"; }
std::string lime_file() { return data_dir() + "/pyquda_weak_field.lime"; }
bool have_data() { return std::ifstream(nersc_file()).good() && std::ifstream(lime_file()).good(); }

// The files are part of the repository (tests/data): missing ones are a failure, never a skip.
#define REQUIRE_TEST_DATA() \
  ASSERT_TRUE(have_data()) << "test data not found in " << data_dir() << " (tests/data of the repository)"

// A scratch file name, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& tag) {
    path_ = ::testing::TempDir() + "emprism_gauge_" + std::to_string(::getpid()) + "_" + tag;
  }
  ~TempFile() {
    std::remove(path_.c_str());
    std::remove((path_ + ".tmp").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<unsigned char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Runs f, expects an InputError whose message starts with "<path>: " and contains every one of `parts`.
template <typename F>
void expect_input_error(F&& f, const std::string& path, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError (expected one about: " << parts.front() << ")";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

// Largest |difference| of the local links of two fields.
double max_link_difference(const HostGauge& a, const HostGauge& b, int rows = 3) {
  const Geometry& g = a.geometry();
  double d = 0;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < 3; ++j) {
          d = std::fmax(d, std::fabs(a.at(x, mu).e[i][j].re - b.at(x, mu).e[i][j].re));
          d = std::fmax(d, std::fabs(a.at(x, mu).e[i][j].im - b.at(x, mu).e[i][j].im));
        }
  }
  return d;
}

// ---- real files

TEST(GaugeFile, ReadsChromaNerscFile) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  HostGauge u(g);
  const GaugeFileInfo info = read_gauge_file(nersc_file(), GaugeFormat::Nersc, u, nullptr, comm);
  EXPECT_EQ(info.format, "nersc");
  EXPECT_EQ(info.extents, (std::array<int, 4>{4, 4, 4, 4}));
  EXPECT_EQ(info.precision_bits, 32);
  EXPECT_EQ(info.checksum, "ok");
  ASSERT_TRUE(info.header_plaquette.has_value());
  ASSERT_TRUE(info.header_link_trace.has_value());
  EXPECT_DOUBLE_EQ(*info.header_plaquette, 0.0382422893);
  EXPECT_DOUBLE_EQ(*info.header_link_trace, 0.4630322094);
  EXPECT_NEAR(info.plaquette, 0.0382422893, 1e-6);
  EXPECT_NEAR(info.link_trace, 0.4630322094, 1e-6);
  // The halo is filled (periodic on one rank): the observables agree with the info.
  EXPECT_DOUBLE_EQ(plaquette(u), info.plaquette);
  const int xm[4] = {-1, 0, 0, 0}, xw[4] = {3, 0, 0, 0};
  EXPECT_EQ(std::memcmp(&u.at(xm, 2), &u.at(xw, 2), sizeof(SU3<double>)), 0);
}

TEST(GaugeFile, ReadsPyqudaIldgFile) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({4, 4, 4, 8});
  HostGauge u(g);
  const GaugeFileInfo info = read_gauge_file(lime_file(), GaugeFormat::Ildg, u, nullptr, comm);
  EXPECT_EQ(info.format, "ildg");
  EXPECT_EQ(info.extents, (std::array<int, 4>{4, 4, 4, 8}));
  EXPECT_EQ(info.precision_bits, 64);
  EXPECT_EQ(info.checksum, "ok");
  EXPECT_FALSE(info.header_plaquette.has_value());
  EXPECT_FALSE(info.header_link_trace.has_value());
  // A weak field (gauge-rotated, so the links themselves are far from 1): plaquette just below 1. Values from an
  // independent computation (Python, from the file's bytes).
  EXPECT_NEAR(info.plaquette, 0.99480413226670084, 1e-12);
  EXPECT_NEAR(info.link_trace, 0.37944934871519281, 1e-12);
  EXPECT_DOUBLE_EQ(info.link_trace, link_trace(u));
  double worst = 0;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu) worst = std::fmax(worst, unitarity_deviation(u.at(x, mu)));
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(GaugeFile, AutoDetectionAndInspectAgreeWithExplicitRead) {
  REQUIRE_TEST_DATA();
  EXPECT_EQ(detect_gauge_format(nersc_file()), GaugeFormat::Nersc);
  EXPECT_EQ(detect_gauge_format(lime_file()), GaugeFormat::Ildg);
  Communicator comm(MPI_COMM_WORLD);
  for (const auto& [path, ext] :
       {std::make_pair(nersc_file(), Extents{4, 4, 4, 4}), std::make_pair(lime_file(), Extents{4, 4, 4, 8})}) {
    const Geometry g = Geometry::single_rank(ext);
    HostGauge a(g), b(g);
    const GaugeFileInfo ia = read_gauge_file(path, GaugeFormat::Auto, a, nullptr, comm);
    const GaugeFileInfo ib = inspect_gauge_file(path);
    EXPECT_EQ(ia.format, ib.format);
    EXPECT_EQ(ia.extents, ib.extents);
    EXPECT_EQ(ia.precision_bits, ib.precision_bits);
    EXPECT_EQ(ia.checksum, ib.checksum);
    EXPECT_DOUBLE_EQ(ia.plaquette, ib.plaquette);
    EXPECT_DOUBLE_EQ(ia.link_trace, ib.link_trace);
  }
}

// The Chroma file's links written by us as ILDG and NERSC (32 bit, as they came: the stored rows are floats and
// come back exactly; the third row, reconstructed in double and rounded to float on the way, to 1e-7).
// (Written as 64-bit data they would fail the 1e-10 SU(3) check on reading: they are SU(3) only to ~1e-7.)
TEST(GaugeFile, RealNerscRewrittenAsIldgAndNersc) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  HostGauge u(g), v(g), w(g);
  read_gauge_file(nersc_file(), GaugeFormat::Nersc, u, nullptr, comm);
  TempFile fi("real.lime"), fn("real.nersc");
  write_gauge_file(fi.path(), GaugeFormat::Ildg, u, nullptr, comm, 32);
  write_gauge_file(fn.path(), GaugeFormat::Nersc, u, nullptr, comm, 32);
  const GaugeFileInfo ii = read_gauge_file(fi.path(), GaugeFormat::Auto, v, nullptr, comm);
  const GaugeFileInfo in = read_gauge_file(fn.path(), GaugeFormat::Auto, w, nullptr, comm);
  EXPECT_EQ(max_link_difference(u, v, 2), 0.0);
  EXPECT_EQ(max_link_difference(u, w, 2), 0.0);
  EXPECT_LT(max_link_difference(u, v), 1e-7);
  EXPECT_EQ(max_link_difference(v, w), 0.0);
  EXPECT_EQ(ii.checksum, "ok");
  EXPECT_EQ(in.checksum, "ok");
  EXPECT_NEAR(*in.header_plaquette, 0.0382422893, 1e-6);
  EXPECT_NEAR(in.plaquette, 0.0382422893, 1e-6);
}

// ---- round trips of random links

struct RoundTrip {
  GaugeFormat format;
  int precision;
  bool two_rows;
};

void round_trip(const RoundTrip& rt, const std::string& tag) {
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({4, 2, 2, 6});
  const HostGauge u = make_random_gauge(g, 20240611, 1.0);
  HostGauge v(g);
  TempFile f(tag);
  if (rt.format == GaugeFormat::Nersc)
    write_nersc(f.path(), u, nullptr, comm, rt.precision, rt.two_rows);
  else
    write_gauge_file(f.path(), rt.format, u, nullptr, comm, rt.precision);
  EXPECT_FALSE(std::ifstream(f.path() + ".tmp").good()) << "temporary file left behind";
  EXPECT_EQ(detect_gauge_format(f.path()), rt.format);
  const GaugeFileInfo info = read_gauge_file(f.path(), GaugeFormat::Auto, v, nullptr, comm);
  EXPECT_EQ(info.format, rt.format == GaugeFormat::Nersc ? "nersc" : "ildg");
  EXPECT_EQ(info.extents, (std::array<int, 4>{4, 2, 2, 6}));
  EXPECT_EQ(info.precision_bits, rt.precision);
  EXPECT_EQ(info.checksum, "ok");
  if (rt.precision == 64) {
    // Stored rows are exact; a reconstructed third row agrees to rounding.
    EXPECT_EQ(max_link_difference(u, v, rt.two_rows ? 2 : 3), 0.0);
    EXPECT_LT(max_link_difference(u, v), 1e-15);
    EXPECT_NEAR(info.plaquette, plaquette(u), 1e-14);
  } else {
    EXPECT_LT(max_link_difference(u, v, rt.two_rows ? 2 : 3), 1e-7);
    EXPECT_LT(max_link_difference(u, v), 1e-7);  // the reconstructed row too (seeded: deterministic)
    EXPECT_NEAR(info.plaquette, plaquette(u), 1e-6);
  }
  if (rt.format == GaugeFormat::Nersc) {
    ASSERT_TRUE(info.header_plaquette.has_value());
    EXPECT_NEAR(*info.header_plaquette, plaquette(u), 1e-14);
    EXPECT_NEAR(*info.header_link_trace, link_trace(u), 1e-14);
  }
}

TEST(GaugeFile, RoundTripIldg64) { round_trip({GaugeFormat::Ildg, 64, false}, "rt_ildg64"); }
TEST(GaugeFile, RoundTripIldg32) { round_trip({GaugeFormat::Ildg, 32, false}, "rt_ildg32"); }
TEST(GaugeFile, RoundTripNersc3x3_64) { round_trip({GaugeFormat::Nersc, 64, false}, "rt_nersc3x3_64"); }
TEST(GaugeFile, RoundTripNersc3x3_32) { round_trip({GaugeFormat::Nersc, 32, false}, "rt_nersc3x3_32"); }
TEST(GaugeFile, RoundTripNerscTwoRow64) { round_trip({GaugeFormat::Nersc, 64, true}, "rt_nersc2_64"); }
TEST(GaugeFile, RoundTripNerscTwoRow32) { round_trip({GaugeFormat::Nersc, 32, true}, "rt_nersc2_32"); }

TEST(GaugeFile, SameLinksThroughIldgAndNersc) {
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({2, 4, 2, 4});
  const HostGauge u = make_random_gauge(g, 7, 0.6);
  HostGauge a(g), b(g);
  TempFile fi("same.lime"), fn("same.nersc");
  write_gauge_file(fi.path(), GaugeFormat::Ildg, u, nullptr, comm);
  write_gauge_file(fn.path(), GaugeFormat::Nersc, u, nullptr, comm);
  const GaugeFileInfo ia = read_gauge_file(fi.path(), GaugeFormat::Ildg, a, nullptr, comm);
  const GaugeFileInfo ib = read_gauge_file(fn.path(), GaugeFormat::Nersc, b, nullptr, comm);
  EXPECT_EQ(max_link_difference(a, b), 0.0);
  EXPECT_EQ(max_link_difference(a, u), 0.0);
  EXPECT_EQ(ia.plaquette, ib.plaquette);
  EXPECT_EQ(ia.link_trace, ib.link_trace);
}

// ---- NERSC files built byte by byte

// 2^4 lattice: every link 1 except U_t(x) = D = diag(e^{i phi}, e^{i phi}, e^{-2 i phi}) on the 4 sites with
// x = 0, t = 0. Then P_{x t} = D or D^dag on the 8 sites with t = 0 and every other plaquette is 1:
//   plaquette = 1 - (1 - c) / 12,  link trace = (60 + 4 c) / 64,  c = Re tr D / 3 = (2 cos phi + cos 2 phi) / 3.
constexpr double kPhi = 0.7;
double hand_c() { return (2 * std::cos(kPhi) + std::cos(2 * kPhi)) / 3; }
double hand_plaquette() { return 1 - (1 - hand_c()) / 12; }
double hand_link_trace() { return (60 + 4 * hand_c()) / 64; }

struct HandNersc {
  int rows = 3;                // 2: 4D_SU3_GAUGE, 3: 4D_SU3_GAUGE_3x3
  int precision = 64;          // 32 or 64
  bool little = false;         // IEEE..LITTLE
  bool with_checksum = true;   // CHECKSUM line
  double plaquette_shift = 0;  // added to the stated PLAQUETTE
  double non_unitary = 0;      // added to U_x(0,0,0,0).e[0][0].re
  std::array<int, 4> dims{2, 2, 2, 2};
};

std::vector<unsigned char> hand_nersc(const HandNersc& h) {
  // Data, site by site (x fastest), mu = x..t, rows row-major, re/im; big- or little-endian by hand.
  std::vector<unsigned char> data;
  auto put = [&](double v) {
    unsigned char b[8];
    std::size_t n;
    if (h.precision == 32) {
      const float f = static_cast<float>(v);
      std::uint32_t w;
      std::memcpy(&w, &f, 4);
      for (int i = 0; i < 4; ++i) b[i] = static_cast<unsigned char>(w >> (8 * (h.little ? i : 3 - i)));
      n = 4;
    } else {
      std::uint64_t w;
      std::memcpy(&w, &v, 8);
      for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(w >> (8 * (h.little ? i : 7 - i)));
      n = 8;
    }
    data.insert(data.end(), b, b + n);
  };
  for (int t = 0; t < 2; ++t)
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 2; ++x)
          for (int mu = 0; mu < 4; ++mu) {
            const bool d = mu == 3 && x == 0 && t == 0;
            const double ph[3] = {kPhi, kPhi, -2 * kPhi};
            for (int i = 0; i < h.rows; ++i)
              for (int j = 0; j < 3; ++j) {
                double re = i == j ? 1.0 : 0.0, im = 0.0;
                if (d && i == j) {
                  re = std::cos(ph[i]);
                  im = std::sin(ph[i]);
                }
                if (i == 0 && j == 0 && mu == 0 && x == 0 && y == 0 && z == 0 && t == 0) re += h.non_unitary;
                put(re);
                put(im);
              }
          }
  // Checksum: the 32-bit words in the file's byte order, summed modulo 2^32.
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < data.size(); i += 4) {
    std::uint32_t w = 0;
    for (int k = 0; k < 4; ++k) w |= std::uint32_t(data[i + k]) << (8 * (h.little ? k : 3 - k));
    sum += w;
  }
  char buf[64];
  std::string head = "BEGIN_HEADER\n";
  head += h.rows == 2 ? "DATATYPE = 4D_SU3_GAUGE\n" : "DATATYPE = 4D_SU3_GAUGE_3x3\n";
  for (int mu = 0; mu < 4; ++mu)
    head += "DIMENSION_" + std::to_string(mu + 1) + " = " + std::to_string(h.dims[mu]) + "\n";
  std::snprintf(buf, sizeof buf, "PLAQUETTE = %.10f\n", hand_plaquette() + h.plaquette_shift);
  head += buf;
  std::snprintf(buf, sizeof buf, "LINK_TRACE =  %.10f \n", hand_link_trace());  // odd spacing on purpose
  head += buf;
  if (h.with_checksum) {
    std::snprintf(buf, sizeof buf, "CHECKSUM = %x\n", sum);
    head += buf;
  }
  head += std::string("FLOATING_POINT = IEEE") + (h.precision == 32 ? "32" : "64") + (h.little ? "LITTLE" : "BIG") +
          "\nEND_HEADER\n";
  std::vector<unsigned char> file(head.begin(), head.end());
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

TEST(GaugeFile, HandWrittenNerscFiles) {
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({2, 2, 2, 2});
  for (int rows : {2, 3})
    for (int precision : {32, 64})
      for (bool little : {false, true}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + " precision " + std::to_string(precision) +
                     (little ? " little" : " big"));
        HandNersc h;
        h.rows = rows;
        h.precision = precision;
        h.little = little;
        TempFile f("hand.nersc");
        spit(f.path(), hand_nersc(h));
        HostGauge u(g);
        const GaugeFileInfo info = read_gauge_file(f.path(), GaugeFormat::Auto, u, nullptr, comm);
        EXPECT_EQ(info.format, "nersc");
        EXPECT_EQ(info.extents, (std::array<int, 4>{2, 2, 2, 2}));
        EXPECT_EQ(info.precision_bits, precision);
        EXPECT_EQ(info.checksum, "ok");
        const double tol = precision == 32 ? 1e-6 : 1e-12;
        EXPECT_NEAR(info.plaquette, hand_plaquette(), tol);
        EXPECT_NEAR(info.link_trace, hand_link_trace(), tol);
        EXPECT_NEAR(*info.header_plaquette, hand_plaquette(), 1e-10);
        const int x0[4] = {0, 1, 1, 0}, x1[4] = {1, 1, 1, 0};
        EXPECT_NEAR(u.at(x0, 3).e[2][2].im, std::sin(-2 * kPhi), tol);  // reconstructed for two rows
        EXPECT_NEAR(u.at(x1, 3).e[2][2].re, 1.0, tol);
      }
  // Without CHECKSUM: read, checksum "none".
  HandNersc h;
  h.with_checksum = false;
  TempFile f("hand_nosum.nersc");
  spit(f.path(), hand_nersc(h));
  HostGauge u(g);
  EXPECT_EQ(read_gauge_file(f.path(), GaugeFormat::Nersc, u, nullptr, comm).checksum, "none");
}

// ---- failures

TEST(GaugeFile, CorruptedByteIsAChecksumError) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  {
    std::vector<unsigned char> bytes = slurp(nersc_file());
    bytes[bytes.size() - 997] ^= 0x01;  // the lowest mantissa bit of a big-endian float: still SU(3) to 1e-5
    TempFile f("corrupt.nersc");
    spit(f.path(), bytes);
    const Geometry g = Geometry::single_rank({4, 4, 4, 4});
    HostGauge u(g);
    expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Auto, u, nullptr, comm); }, f.path(),
                       {"CHECKSUM mismatch", "717938df"});
  }
  {
    std::vector<unsigned char> bytes = slurp(lime_file());
    bytes[1608 + 144 + 5007] ^= 0x01;  // inside ildg-binary-data (record at offset 1608), a low mantissa bit
    TempFile f("corrupt.lime");
    spit(f.path(), bytes);
    const Geometry g = Geometry::single_rank({4, 4, 4, 8});
    HostGauge u(g);
    expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Auto, u, nullptr, comm); }, f.path(),
                       {"scidac-checksum mismatch", "a2c41090"});
  }
}

TEST(GaugeFile, TruncatedFileIsAnError) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  for (const auto& [src, ext, fmt] : {std::make_tuple(nersc_file(), Extents{4, 4, 4, 4}, GaugeFormat::Nersc),
                                      std::make_tuple(lime_file(), Extents{4, 4, 4, 8}, GaugeFormat::Ildg)}) {
    std::vector<unsigned char> bytes = slurp(src);
    bytes.resize(bytes.size() - 3000);
    TempFile f("truncated");
    spit(f.path(), bytes);
    const Geometry g = Geometry::single_rank(ext);
    HostGauge u(g);
    const GaugeFormat format = fmt;  // a structured binding cannot be captured in C++17 (clang/hipcc refuses)
    expect_input_error([&] { read_gauge_file(f.path(), format, u, nullptr, comm); }, f.path(), {"truncated"});
    expect_input_error([&] { inspect_gauge_file(f.path()); }, f.path(), {"truncated"});
  }
  // A LIME file cut inside a record header.
  std::vector<unsigned char> bytes = slurp(lime_file());
  bytes.resize(1000);
  TempFile f("truncated_header.lime");
  spit(f.path(), bytes);
  const Geometry g = Geometry::single_rank({4, 4, 4, 8});
  HostGauge u(g);
  expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Auto, u, nullptr, comm); }, f.path(), {"truncated"});
}

TEST(GaugeFile, WrongExtentsAreAnError) {
  REQUIRE_TEST_DATA();
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({4, 4, 4, 8});
  HostGauge u(g);
  expect_input_error([&] { read_gauge_file(nersc_file(), GaugeFormat::Auto, u, nullptr, comm); }, nersc_file(),
                     {"lattice extents 4x4x4x4", "4x4x4x8"});
  const Geometry g2 = Geometry::single_rank({4, 4, 4, 4});
  HostGauge v(g2);
  expect_input_error([&] { read_gauge_file(lime_file(), GaugeFormat::Auto, v, nullptr, comm); }, lime_file(),
                     {"lattice extents 4x4x4x8", "4x4x4x4"});
  // The header's extents disagree with the data's size.
  HandNersc h;
  h.dims = {2, 2, 2, 4};
  TempFile f("wrong_dims.nersc");
  spit(f.path(), hand_nersc(h));
  const Geometry g3 = Geometry::single_rank({2, 2, 2, 4});
  HostGauge w(g3);
  expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Auto, w, nullptr, comm); }, f.path(), {"truncated"});
}

TEST(GaugeFile, NonUnitaryLinkAndWrongHeaderPlaquetteAreErrors) {
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({2, 2, 2, 2});
  HostGauge u(g);
  {
    HandNersc h;
    h.non_unitary = 1e-3;
    TempFile f("nonunitary.nersc");
    spit(f.path(), hand_nersc(h));
    expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Nersc, u, nullptr, comm); }, f.path(),
                       {"not in SU(3)", "U_x", "(0, 0, 0, 0)"});
  }
  {
    HandNersc h;
    h.plaquette_shift = 1e-4;
    TempFile f("badplaq.nersc");
    spit(f.path(), hand_nersc(h));
    expect_input_error([&] { read_gauge_file(f.path(), GaugeFormat::Nersc, u, nullptr, comm); }, f.path(),
                       {"plaquette", "stated in the file"});
  }
}

TEST(GaugeFile, DetectionRejectsJunkAndMissingFiles) {
  TempFile junk("junk.dat"), empty("empty.dat");
  spit(junk.path(), std::vector<unsigned char>(4096, 0x5a));
  spit(empty.path(), {});
  expect_input_error([&] { detect_gauge_format(junk.path()); }, junk.path(), {"not a gauge file of a known format"});
  expect_input_error([&] { detect_gauge_format(empty.path()); }, empty.path(), {"not a gauge file"});
  const std::string missing = ::testing::TempDir() + "emprism_no_such_gauge_file";
  expect_input_error([&] { detect_gauge_format(missing); }, missing, {"cannot open"});
  Communicator comm(MPI_COMM_WORLD);
  const Geometry g = Geometry::single_rank({2, 2, 2, 2});
  HostGauge u(g);
  expect_input_error([&] { read_gauge_file(junk.path(), GaugeFormat::Auto, u, nullptr, comm); }, junk.path(),
                     {"not a gauge file"});
  expect_input_error([&] { read_gauge_file(missing, GaugeFormat::Ildg, u, nullptr, comm); }, missing, {"cannot open"});
  expect_input_error([&] { read_gauge_file(junk.path(), GaugeFormat::Nersc, u, nullptr, comm); }, junk.path(),
                     {"not a NERSC file"});
  expect_input_error([&] { read_gauge_file(junk.path(), GaugeFormat::Ildg, u, nullptr, comm); }, junk.path(),
                     {"not a LIME file"});
  expect_input_error([&] { write_gauge_file(junk.path() + ".out", GaugeFormat::Milc, u, nullptr, comm); },
                     junk.path() + ".out", {"cannot write"});
}

TEST(GaugeFile, FormatNames) {
  for (GaugeFormat f :
       {GaugeFormat::Auto, GaugeFormat::Ildg, GaugeFormat::Nersc, GaugeFormat::OpenQcd, GaugeFormat::Milc})
    EXPECT_EQ(parse_gauge_format(gauge_format_name(f)), f);
  EXPECT_FALSE(parse_gauge_format("lime").has_value());
}

TEST(GaugeFile, SharedHelpers) {
  // CRC32 of "123456789" is the standard check value; the SciDAC rotation wraps.
  EXPECT_EQ(detail::crc32_bytes("123456789", 9), 0xcbf43926u);
  EXPECT_EQ(detail::rotl32(0x80000001u, 1), 0x00000003u);
  EXPECT_EQ(detail::rotl32(0x12345678u, 0), 0x12345678u);
  EXPECT_DOUBLE_EQ(detail::printed_resolution("0.0382422893"), 1e-10);
  EXPECT_DOUBLE_EQ(detail::printed_resolution("1.5e-3"), 1e-4);
  const Geometry g(Extents{4, 4, 4, 8}, Extents{2, 4, 2, 4}, Extents{2, 0, 2, 4});
  const std::vector<detail::BlockRow> rows = detail::block_rows(g);
  ASSERT_EQ(rows.size(), 4u * 2 * 4);
  EXPECT_EQ(rows[0].global_site, 2 + 4 * (0 + 4 * (2 + 4 * 4)));
  EXPECT_EQ(rows[1].global_site, rows[0].global_site + 4);
  EXPECT_EQ(rows[1].local_lex, 2);
  for (const auto& r : rows) EXPECT_EQ(r.length, 2);
}

// ---- gauge-info

TEST(GaugeFile, InfoJsonIsOneParsableLine) {
  GaugeFileInfo info;
  info.format = "nersc";
  info.extents = {4, 4, 4, 8};
  info.precision_bits = 32;
  info.checksum = "ok";
  info.plaquette = 0.5885131216;
  info.link_trace = -0.25;
  info.header_plaquette = 0.58851312;
  const std::string line = gauge_info_json(info);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  // A small grammar check: {"key": value, ...} with strings, numbers and one array of integers.
  const std::regex object(R"(\{"[a-z_]+": ("[a-z_]+"|-?[0-9][0-9.eE+-]*|\[[0-9]+(, [0-9]+)*\])(, "[a-z_]+": )"
                          R"(("[a-z_]+"|-?[0-9][0-9.eE+-]*|\[[0-9]+(, [0-9]+)*\]))*\})");
  EXPECT_TRUE(std::regex_match(line, object)) << line;
  std::map<std::string, std::string> kv;
  const std::regex pair(R"re("([a-z_]+)": ("[^"]*"|\[[^\]]*\]|[^,}]+))re");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator(); ++it)
    kv[(*it)[1]] = (*it)[2];
  EXPECT_EQ(kv["format"], "\"nersc\"");
  EXPECT_EQ(kv["extents"], "[4, 4, 4, 8]");
  EXPECT_EQ(kv["precision"], "32");
  EXPECT_EQ(kv["checksum"], "\"ok\"");
  EXPECT_EQ(std::stod(kv["plaquette"]), 0.5885131216);
  EXPECT_EQ(std::stod(kv["link_trace"]), -0.25);
  EXPECT_EQ(std::stod(kv["header_plaquette"]), 0.58851312);
  EXPECT_EQ(kv.count("header_link_trace"), 0u);
}

}  // namespace
