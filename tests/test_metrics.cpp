// test_metrics.cpp: GoogleTest tests of src/metrics (MetricsRegistry, docs/conventions.md section 11).
// Each test records known calls and checks one derived figure of table(): aggregation, min, mean, GB/s,
// percent of peak, ordering. Values are chosen so that the expected results are exact in binary.
// Who may call: the test runner.
#include <gtest/gtest.h>

#include "src/metrics.hpp"

namespace emprism {
namespace {

const KernelMetric* find(const std::vector<KernelMetric>& rows, const std::string& name) {
  for (const KernelMetric& m : rows) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

TEST(Metrics, RecordAggregatesCallsTimeFlopsAndBytesPerName) {
  MetricsRegistry reg;
  reg.record("dslash", 0.5, 100.0, 1000.0);
  reg.record("axpy", 0.25, 3.0, 7.0);
  reg.record("dslash", 0.25, 200.0, 2000.0);
  reg.record("dslash", 1.0, 300.0, 4000.0);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 2u);
  const KernelMetric* d = find(rows, "dslash");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->calls, 3);
  EXPECT_EQ(d->total_s, 1.75);
  EXPECT_EQ(d->flops, 600.0);
  EXPECT_EQ(d->bytes, 7000.0);
  const KernelMetric* a = find(rows, "axpy");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->calls, 1);
  EXPECT_EQ(a->total_s, 0.25);
  EXPECT_EQ(a->flops, 3.0);
  EXPECT_EQ(a->bytes, 7.0);
}

TEST(Metrics, MinIsTheFastestCallWhateverTheOrder) {
  MetricsRegistry reg;
  reg.record("k", 0.5, 0, 0);
  reg.record("k", 0.125, 0, 0);
  reg.record("k", 0.75, 0, 0);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].min_s, 0.125);
}

TEST(Metrics, MinOfOneCallIsThatCall) {
  MetricsRegistry reg;
  reg.record("k", 2.5, 0, 0);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_EQ(reg.table()[0].min_s, 2.5);
}

TEST(Metrics, MeanIsTotalOverCalls) {
  MetricsRegistry reg;
  reg.record("k", 0.5, 0, 0);
  reg.record("k", 1.0, 0, 0);
  reg.record("k", 1.5, 0, 0);
  reg.record("k", 2.0, 0, 0);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_EQ(reg.table()[0].mean_s, 1.25);
}

TEST(Metrics, GbsIsBytesOverTotalSecondsOver1e9) {
  MetricsRegistry reg;
  reg.record("k", 0.5, 0, 3.0e9);
  reg.record("k", 1.5, 0, 5.0e9);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_DOUBLE_EQ(reg.table()[0].gbs, 4.0);  // 8e9 B / 2 s
}

TEST(Metrics, GbsIsZeroWhenNoTimeWasRecorded) {
  MetricsRegistry reg;
  reg.record("k", 0.0, 10.0, 1.0e9);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_EQ(reg.table()[0].gbs, 0.0);
  EXPECT_EQ(reg.table()[0].percent_of_peak, 0.0);
}

TEST(Metrics, PercentOfPeakUsesTheMeasuredPeak) {
  MetricsRegistry reg;
  PeakBandwidth peak;
  peak.copy_gbs = 400;
  peak.triad_gbs = 500;
  peak.read_gbs = 800;
  peak.peak_gbs = 800;
  peak.measured = true;
  reg.set_peak(peak);
  reg.record("k", 1.0, 0, 200.0e9);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_DOUBLE_EQ(reg.table()[0].gbs, 200.0);
  EXPECT_DOUBLE_EQ(reg.table()[0].percent_of_peak, 25.0);
}

TEST(Metrics, PercentOfPeakIsZeroWhenPeakNotMeasured) {
  MetricsRegistry reg;
  PeakBandwidth peak;
  peak.peak_gbs = 800;  // a value, but not measured
  reg.set_peak(peak);
  reg.record("k", 1.0, 0, 200.0e9);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_EQ(reg.table()[0].percent_of_peak, 0.0);
}

TEST(Metrics, PercentOfPeakIsZeroWhenMeasuredPeakIsZero) {
  MetricsRegistry reg;
  PeakBandwidth peak;
  peak.measured = true;
  reg.set_peak(peak);
  reg.record("k", 1.0, 0, 200.0e9);
  ASSERT_EQ(reg.table().size(), 1u);
  EXPECT_EQ(reg.table()[0].percent_of_peak, 0.0);
}

TEST(Metrics, TableIsSortedByTotalTimeDescending) {
  MetricsRegistry reg;
  reg.record("a_small", 0.25, 0, 0);
  reg.record("b_large", 2.0, 0, 0);
  reg.record("c_middle", 0.5, 0, 0);
  reg.record("c_middle", 0.5, 0, 0);
  reg.record("d_tiny", 0.125, 0, 0);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "b_large");
  EXPECT_EQ(rows[1].name, "c_middle");
  EXPECT_EQ(rows[2].name, "a_small");
  EXPECT_EQ(rows[3].name, "d_tiny");
}

TEST(Metrics, EqualTotalsAreOrderedByName) {
  MetricsRegistry reg;
  reg.record("zeta", 1.0, 0, 0);
  reg.record("alpha", 1.0, 0, 0);
  reg.record("mid", 1.0, 0, 0);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "alpha");
  EXPECT_EQ(rows[1].name, "mid");
  EXPECT_EQ(rows[2].name, "zeta");
}

TEST(Metrics, ResourcesAreCarriedIntoTheRow) {
  MetricsRegistry reg;
  reg.record("k", 1.0, 0, 0);
  KernelResources res;
  res.registers = 96;
  res.spill_bytes = 16;
  res.shared_bytes = 2048;
  res.block = 128;
  res.occupancy = 0.375;
  reg.set_resources("k", res);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].res.registers, 96);
  EXPECT_EQ(rows[0].res.spill_bytes, 16);
  EXPECT_EQ(rows[0].res.shared_bytes, 2048);
  EXPECT_EQ(rows[0].res.block, 128);
  EXPECT_EQ(rows[0].res.occupancy, 0.375);
  EXPECT_EQ(rows[0].calls, 1);
}

TEST(Metrics, ResourcesDefaultToNotApplicable) {
  MetricsRegistry reg;
  reg.record("k", 1.0, 0, 0);
  const std::vector<KernelMetric> rows = reg.table();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].res.registers, -1);
  EXPECT_EQ(rows[0].res.occupancy, -1.0);
}

TEST(Metrics, ClearEmptiesTheTable) {
  MetricsRegistry reg;
  reg.record("k", 1.0, 0, 0);
  reg.clear();
  EXPECT_TRUE(reg.table().empty());
}

// Device-time pairs (host timestamps on the CPU backend) become rows when the table is read: one call per pair,
// a non-negative time, the flops and bytes given.
TEST(Metrics, TimingPairsBecomeOneCallEachWhenTheTableIsRead) {
  MetricsRegistry reg;
  const backend::Stream s = backend::compute_stream();
  for (int i = 0; i < 3; ++i) {
    const int t = reg.start_timing(s);
    reg.stop_timing(t, s, "k", 2.0, 8.0);
  }
  const auto rows = reg.table();
  const KernelMetric* k = find(rows, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->calls, 3);
  EXPECT_GE(k->total_s, 0.0);
  EXPECT_EQ(k->flops, 6.0);
  EXPECT_EQ(k->bytes, 24.0);
}

// Many pending pairs (more than are kept before reading) lose none.
TEST(Metrics, ManyTimingPairsAreAllCounted) {
  MetricsRegistry reg;
  const backend::Stream s = backend::compute_stream();
  for (int i = 0; i < 5000; ++i) reg.stop_timing(reg.start_timing(s), s, "k", 1.0, 1.0);
  const auto rows = reg.table();
  const KernelMetric* k = find(rows, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->calls, 5000);
}

}  // namespace
}  // namespace emprism
