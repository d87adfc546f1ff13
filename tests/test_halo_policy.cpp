// test_halo_policy.cpp: the halo policy chooser's pure parts (comm/halo_policy.hpp): which candidates a request
// yields for what the machine offers, the errors naming the input key, and the choice of the fastest candidate
// on the slowest rank. The agreement over ranks is tests/mpi/test_halo_policy_mpi.cpp.
#include <gtest/gtest.h>

#include "comm/halo_policy.hpp"
#include "kernels/errors.hpp"

namespace emprism {
namespace {

using Choice = TransportRequest::Choice;
constexpr std::array<bool, 4> kAll{true, true, true, true};

TransportRequest request(Choice c) {
  TransportRequest r;
  r.choice = c;
  return r;
}

// A GPU node: staged always, gpu_aware as given, peer in the given directions, all four partitioned.
TransportAvailability gpu_node(bool gpu_aware, std::array<bool, 4> peer) {
  TransportAvailability a;
  a.host_memory = false;
  a.gpu_aware = gpu_aware;
  a.peer = peer;
  a.partitioned = kAll;
  return a;
}

HaloPolicy uniform(Transport t, Exterior e) {
  HaloPolicy p;
  p.transport.fill(t);
  p.exterior = e;
  return p;
}

// Each transport with the exterior fused, split and whole, in that order.
std::vector<HaloPolicy> each_exterior(std::initializer_list<Transport> ts) {
  std::vector<HaloPolicy> out;
  for (Transport t : ts)
    for (Exterior e : {Exterior::Fused, Exterior::Split, Exterior::Whole}) out.push_back(uniform(t, e));
  return out;
}

std::string error_of(const TransportRequest& r, const TransportAvailability& a) {
  try {
    candidate_policies(r, a);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(HaloPolicy, AutoOnOneGpuNodeTriesPeerThenStagedEachFusedSplitAndWhole) {
  const auto c = candidate_policies(request(Choice::Auto), gpu_node(false, kAll));
  EXPECT_EQ(c, each_exterior({Transport::Peer, Transport::Staged}));
}

TEST(HaloPolicy, AutoWithGpuAwareMpiAlsoTriesGpuAware) {
  const auto c = candidate_policies(request(Choice::Auto), gpu_node(true, {false, false, false, false}));
  EXPECT_EQ(c, each_exterior({Transport::Staged, Transport::GpuAware}));
}

TEST(HaloPolicy, GpuAwareFalseKeepsDeviceMemoryAwayFromMpiInAuto) {
  TransportRequest r = request(Choice::Auto);
  r.gpu_aware_in_auto = false;
  for (const HaloPolicy& p : candidate_policies(r, gpu_node(true, {false, false, false, false})))
    for (Transport t : p.transport) EXPECT_NE(t, Transport::GpuAware);
}

TEST(HaloPolicy, PeerWherePossibleFallsBackElsewhere) {
  const auto c = candidate_policies(request(Choice::Peer), gpu_node(false, {false, false, true, true}));
  ASSERT_EQ(c.size(), 3u);
  for (const HaloPolicy& p : c)
    EXPECT_EQ(p.transport,
              (std::array<Transport, 4>{Transport::Staged, Transport::Staged, Transport::Peer, Transport::Peer}));
  EXPECT_EQ(c[0].exterior, Exterior::Fused);
  EXPECT_EQ(c[1].exterior, Exterior::Split);
  EXPECT_EQ(c[2].exterior, Exterior::Whole);
}

TEST(HaloPolicy, ForcedStagedOffersOnlyStaged) {
  const auto c = candidate_policies(request(Choice::Staged), gpu_node(true, kAll));
  ASSERT_EQ(c.size(), 3u);
  for (const HaloPolicy& p : c) EXPECT_EQ(p.transport, uniform(Transport::Staged, Exterior::Fused).transport);
}

TEST(HaloPolicy, OnePartitionedDirectionHasNoSplitCandidate) {
  TransportAvailability a = gpu_node(false, kAll);
  a.partitioned = {false, false, false, true};
  for (const HaloPolicy& p : candidate_policies(request(Choice::Auto), a)) EXPECT_NE(p.exterior, Exterior::Split);
}

TEST(HaloPolicy, NoPartitionedDirectionHasOneCandidate) {
  TransportAvailability a = gpu_node(false, kAll);
  a.partitioned = {false, false, false, false};
  EXPECT_EQ(candidate_policies(request(Choice::Auto), a).size(), 1u);
}

TEST(HaloPolicy, CpuAutoHandsHostMemoryToMpiOrPeerNeverStaged) {
  TransportAvailability a;
  a.host_memory = true;
  a.gpu_aware = true;
  a.peer = kAll;
  a.partitioned = kAll;
  const auto c = candidate_policies(request(Choice::Auto), a);
  EXPECT_EQ(c, each_exterior({Transport::Peer, Transport::GpuAware}));
  EXPECT_EQ(candidate_policies(request(Choice::Staged), a)[0], uniform(Transport::Staged, Exterior::Fused));
}

TEST(HaloPolicy, ForcedGpuAwareWithoutGpuAwareMpiIsAnInputErrorNamingTheKey) {
  const std::string e = error_of(request(Choice::GpuAware), gpu_node(false, kAll));
  EXPECT_EQ(e.rfind("comm.transport: \"gpu_aware\" needs an MPI library that accepts device memory", 0), 0u) << e;
}

TEST(HaloPolicy, OlderKeyIsNamedInItsOwnTerms) {
  TransportRequest r = request(Choice::GpuAware);
  r.key = "comm.gpu_aware";
  const std::string e = error_of(r, gpu_node(false, kAll));
  EXPECT_EQ(e.rfind("comm.gpu_aware: true needs an MPI library", 0), 0u) << e;
}

TEST(HaloPolicy, ForcedPeerWithoutAnyPeerDirectionIsAnInputError) {
  const std::string e = error_of(request(Choice::Peer), gpu_node(false, {false, false, false, false}));
  EXPECT_EQ(e.rfind("comm.transport: \"peer\" is not possible", 0), 0u) << e;
}

TEST(HaloPolicy, FastestOfSlowestTakesTheSmallestAndTheFirstOfEqualOnes) {
  EXPECT_EQ(fastest_of_slowest({3.0, 1.0, 2.0}), 1u);
  EXPECT_EQ(fastest_of_slowest({2.0, 1.0, 1.0}), 1u);
  EXPECT_EQ(fastest_of_slowest({0.5}), 0u);
}

TEST(HaloPolicy, DescribeNamesTransportsByDirectionAndTheExterior) {
  HaloPolicy p;
  p.transport = {Transport::Peer, Transport::Peer, Transport::Staged, Transport::Peer};
  p.exterior = Exterior::Split;
  EXPECT_EQ(p.describe(kAll), "peer in x y t, staged in z; exterior split by direction");
  EXPECT_EQ(p.describe({false, false, true, false}), "staged in z; exterior split by direction");
  p.exterior = Exterior::Whole;
  EXPECT_EQ(p.describe(kAll), "peer in x y t, staged in z; one kernel after the exchange (no overlap)");
  EXPECT_EQ(p.describe({false, false, false, false}), "no halo exchange");
}

TEST(HaloPolicy, LabelNamesOneTransportOrEachPartitionedDirectionsAndTheExterior) {
  HaloPolicy p;
  p.transport = {Transport::Peer, Transport::Staged, Transport::Peer, Transport::Peer};
  p.exterior = Exterior::Whole;
  EXPECT_EQ(p.label({true, false, true, true}), "peer/whole");
  p.exterior = Exterior::Split;
  EXPECT_EQ(p.label(kAll), "peer+staged+peer+peer/split");
}

}  // namespace
}  // namespace emprism
