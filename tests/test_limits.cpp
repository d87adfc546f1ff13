// test_limits.cpp: sizes and memory (issue 15, defects 6 and 8): the global volume in checked 64-bit arithmetic, the
// memory refusal of a rank's block (host, device, and the CPU backend where the device memory is the host's), and
// the paths of [generate]'s configurations.
// Who may call: ctest (emprism_tests).
#include <gtest/gtest.h>

#include <string>

#include "kernels/errors.hpp"
#include "src/run/gauge_setup.hpp"
#include "src/run/input.hpp"
#include "src/run/memory_check.hpp"

namespace emprism::run {
namespace {

std::string error_of(const std::string& extents) {
  try {
    parse_config("[lattice]\nextents = " + extents +
                     "\n[dirac]\nkappa = 0.12\n[output]\nfile = \"o.h5\"\n\n[[solve]]\ntype = \"point\"\n",
                 "t.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Limits, VolumeThatOverflowsIsRefusedNamingTheExtents) {
  EXPECT_EQ(error_of("[2, 2, 2147483646, 2147483646]").rfind("lattice.extents: ", 0), 0u);
  EXPECT_EQ(error_of("[65536, 65536, 65536, 65536]").rfind("lattice.extents: ", 0), 0u);  // 2^64 sites: 0 mod 2^64
  EXPECT_EQ(error_of("[64, 64, 64, 128]"), "<no error>");
}

TEST(Limits, MemoryRefusalComparesHostAndDevice) {
  const MemoryNeed need{10e9, 20e9};
  EXPECT_EQ(memory_refusal(need, MemoryHave{64e9, 40e9}, "8x8x8x8"), "");
  EXPECT_EQ(memory_refusal(need, MemoryHave{8e9, 40e9}, "8x8x8x8")
                .rfind("lattice.extents: the local lattice 8x8x8x8 "
                       "does not fit in host memory",
                       0),
            0u);
  EXPECT_NE(memory_refusal(need, MemoryHave{64e9, 16e9}, "8x8x8x8").find("device memory"), std::string::npos);
  // CPU backend (no device memory of its own): host and device needs add up in the host's memory.
  EXPECT_NE(memory_refusal(need, MemoryHave{25e9, 0}, "8x8x8x8"), "");
  EXPECT_EQ(memory_refusal(need, MemoryHave{31e9, 0}, "8x8x8x8"), "");
  EXPECT_EQ(memory_refusal(need, MemoryHave{0, 0}, "8x8x8x8"), "");  // unknown: no refusal
}

TEST(Limits, MemoryNeedGrowsWithVolumeAndPrecision) {
  Config cfg;
  cfg.solver.precision = Precision::Single;
  const MemoryNeed small = memory_need(cfg, 1 << 12), large = memory_need(cfg, 1 << 16);
  EXPECT_DOUBLE_EQ(large.device, 16 * small.device);
  EXPECT_GT(large.host, 15 * small.host);
  const double single = memory_estimate(cfg, 1 << 12);
  cfg.solver.precision = Precision::Double;
  const double dbl = memory_estimate(cfg, 1 << 12);
  EXPECT_GT(dbl, single);
  cfg.solver.precision = Precision::Mixed;
  EXPECT_DOUBLE_EQ(memory_estimate(cfg, 1 << 12), single + dbl);  // both operators and their fields
}

// A gauge field read from a file (as every field without [generate]) lives on the device: the host's need holds no
// copy of the links unless they are written or checked there.
TEST(Limits, GaugeFileReadNeedsNoHostCopyOfTheLinks) {
  Config cfg;
  cfg.gauge.source = GaugeSource::File;
  const MemoryNeed device = memory_need(cfg, 1 << 12);
  cfg.output.write_gauge = true;
  const MemoryNeed written = memory_need(cfg, 1 << 12);
  const double links = 4 * 18 * 8 * double(1 << 12);  // the block's double links
  EXPECT_GE(written.host - device.host, links);
  EXPECT_DOUBLE_EQ(written.device, device.device);
  EXPECT_GE(device.device - memory_estimate(cfg, 1 << 12), links);
}

TEST(Limits, GeneratePathsFollowTheSweeps) {
  Config cfg;
  cfg.gauge.sweeps = 100;
  cfg.generate.every = 10;
  cfg.generate.prefix = "run/cfg";
  cfg.generate.format = GaugeFormat::Nersc;
  EXPECT_EQ(generate_path(cfg, 0), "run/cfg_000110.nersc");
  EXPECT_EQ(generate_path(cfg, 2), "run/cfg_000130.nersc");
}

}  // namespace
}  // namespace emprism::run
