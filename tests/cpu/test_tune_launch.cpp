// test_tune_launch.cpp: the CPU backend's tuned launcher (kernels/launch.hpp's launch_tuned): one variant, so it never
// times and computes what run_kernel computes; the launchers' first-launch bookkeeping (first_launch_of). Compiled into
// emprism_tests only in CPU builds (its host lambdas are no device code). Who may call: the test runner.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/backend/backend.hpp"
#include "kernels/launch.hpp"
#include "kernels/metrics.hpp"
#include "kernels/tune.hpp"

namespace emprism::test {
namespace {

// The CPU backend's launcher: one variant, so a tuned launch never times and computes what run_kernel computes.
TEST(Tune, CpuBackendTunedLaunchTimesNothingAndComputesTheSameBits) {
  Tuner tuner(TuneIdentity{"v", "host CPU"}, backend::launch_variants(), backend::default_variant());
  ASSERT_EQ(tuner.candidates().size(), 1u);
  MetricsRegistry metrics;
  std::vector<double> a(1000), b(1000);
  const auto f = [&](int i) { a[static_cast<std::size_t>(i)] = 0.5 * i + 1.0 / (i + 1); };
  const auto g = [&](int i) { b[static_cast<std::size_t>(i)] = 0.5 * i + 1.0 / (i + 1); };
  launch_tuned(metrics, &tuner, "f|fp64|r18|1000", LaunchCost{"f", 0, 0}, 1000, f);
  run_kernel(1000, g);
  EXPECT_EQ(a, b);
  EXPECT_EQ(tuner.stats().candidates_timed, 0);
  EXPECT_TRUE(tuner.entries().empty());
  const auto rows = metrics.table();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].variant, "host");
}

// The launchers load a kernel before its first timed launch (first_launch_of): true once per kernel type, kind of
// launch, tag and variant, whatever order the variants come in.
struct FirstLaunchProbe {};
TEST(Tune, FirstLaunchOfIsTrueOncePerKernelKindTagAndVariant) {
  constexpr LaunchKind kTuned = LaunchKind::Tuned;
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, kTuned>(2)));
  EXPECT_FALSE((first_launch_of<FirstLaunchProbe, kTuned>(2)));
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, kTuned>(-1)));  // a lower variant after a higher one
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, kTuned>(0)));
  EXPECT_FALSE((first_launch_of<FirstLaunchProbe, kTuned>(-1)));
  EXPECT_FALSE((first_launch_of<FirstLaunchProbe, kTuned>(0)));
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, kTuned, 3>(2)));  // another tag: another kernel
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, kTuned>(7)));
  EXPECT_FALSE((first_launch_of<FirstLaunchProbe, kTuned>(2)));
  // The same functor and number in a plain launch (its launch bound) and a reduction (its width): two kernels.
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, LaunchKind::Plain, 2>(-1)));
  EXPECT_TRUE((first_launch_of<FirstLaunchProbe, LaunchKind::Reduce, 2>(-1)));
  EXPECT_FALSE((first_launch_of<FirstLaunchProbe, LaunchKind::Reduce, 2>(-1)));
}

// A launch records its kernel's resources in the registry once, and a registry made after the kernel's first launch
// gets them too (the launch after the timing).
TEST(Tune, LaunchRecordsResourcesInEachRegistry) {
  std::vector<double> a(100);
  const auto f = [&](int i) { a[static_cast<std::size_t>(i)] = 2.0 * i; };
  MetricsRegistry first, second;
  launch(first, LaunchCost{"probe", 0, 0}, 100, f);
  EXPECT_TRUE(first.has_resources("probe"));
  EXPECT_FALSE(second.has_resources("probe"));
  launch(second, LaunchCost{"probe", 0, 0}, 100, f);
  EXPECT_TRUE(second.has_resources("probe"));
  EXPECT_EQ(a[99], 198.0);
}

}  // namespace
}  // namespace emprism::test
