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

HaloPolicy uniform(Transport t, bool split) {
  HaloPolicy p;
  p.transport.fill(t);
  p.split_exterior = split;
  return p;
}

std::string error_of(const TransportRequest& r, const TransportAvailability& a) {
  try {
    candidate_policies(r, a);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

HaloPolicy peer_whole() {
  HaloPolicy p = uniform(Transport::Peer, false);
  p.whole = true;
  return p;
}

TEST(HaloPolicy, AutoWithPeerInEveryDirectionIsPeerWholeAlone) {
  EXPECT_EQ(candidate_policies(request(Choice::Auto), gpu_node(true, kAll)), std::vector<HaloPolicy>{peer_whole()});
}

TEST(HaloPolicy, ForcedPeerInEveryDirectionIsPeerWhole) {
  EXPECT_EQ(candidate_policies(request(Choice::Peer), gpu_node(false, kAll)), std::vector<HaloPolicy>{peer_whole()});
}

TEST(HaloPolicy, AutoWithPeerInSomeDirectionsTriesOverlappedPoliciesOnly) {
  HaloPolicy mixed;
  mixed.transport = {Transport::Staged, Transport::Staged, Transport::Peer, Transport::Peer};
  HaloPolicy mixed_split = mixed;
  mixed_split.split_exterior = true;
  const auto c = candidate_policies(request(Choice::Auto), gpu_node(false, {false, false, true, true}));
  const std::vector<HaloPolicy> expected{mixed, mixed_split, uniform(Transport::Staged, false),
                                         uniform(Transport::Staged, true)};
  EXPECT_EQ(c, expected);
}

TEST(HaloPolicy, AutoWithGpuAwareMpiAlsoTriesGpuAware) {
  const auto c = candidate_policies(request(Choice::Auto), gpu_node(true, {false, false, false, false}));
  const std::vector<HaloPolicy> expected{uniform(Transport::Staged, false), uniform(Transport::Staged, true),
                                         uniform(Transport::GpuAware, false), uniform(Transport::GpuAware, true)};
  EXPECT_EQ(c, expected);
}

TEST(HaloPolicy, GpuAwareFalseKeepsDeviceMemoryAwayFromMpiInAuto) {
  TransportRequest r = request(Choice::Auto);
  r.gpu_aware_in_auto = false;
  for (const HaloPolicy& p : candidate_policies(r, gpu_node(true, {false, false, false, false})))
    for (Transport t : p.transport) EXPECT_NE(t, Transport::GpuAware);
}

TEST(HaloPolicy, PeerWherePossibleFallsBackElsewhere) {
  const auto c = candidate_policies(request(Choice::Peer), gpu_node(false, {false, false, true, true}));
  ASSERT_EQ(c.size(), 2u);
  for (const HaloPolicy& p : c)
    EXPECT_EQ(p.transport,
              (std::array<Transport, 4>{Transport::Staged, Transport::Staged, Transport::Peer, Transport::Peer}));
  EXPECT_FALSE(c[0].split_exterior);
  EXPECT_TRUE(c[1].split_exterior);
}

TEST(HaloPolicy, ForcedStagedOffersOnlyStaged) {
  const auto c = candidate_policies(request(Choice::Staged), gpu_node(true, kAll));
  ASSERT_EQ(c.size(), 2u);
  for (const HaloPolicy& p : c) EXPECT_EQ(p.transport, uniform(Transport::Staged, false).transport);
}

TEST(HaloPolicy, OnePartitionedDirectionHasNoSplitCandidate) {
  TransportAvailability a = gpu_node(true, {false, false, false, false});
  a.partitioned = {false, false, false, true};
  for (const HaloPolicy& p : candidate_policies(request(Choice::Auto), a)) EXPECT_FALSE(p.split_exterior);
}

TEST(HaloPolicy, CpuAutoHandsHostMemoryToMpiNeverStaged) {
  TransportAvailability a;
  a.host_memory = true;
  a.gpu_aware = true;
  a.peer = {false, false, false, false};
  a.partitioned = kAll;
  const auto c = candidate_policies(request(Choice::Auto), a);
  const std::vector<HaloPolicy> expected{uniform(Transport::GpuAware, false), uniform(Transport::GpuAware, true)};
  EXPECT_EQ(c, expected);
  EXPECT_EQ(candidate_policies(request(Choice::Staged), a)[0], uniform(Transport::Staged, false));  // when forced
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
  p.split_exterior = true;
  EXPECT_EQ(p.describe(kAll), "peer in x y t, staged in z; exterior split by direction");
  EXPECT_EQ(p.describe({false, false, true, false}), "staged in z; exterior split by direction");
  EXPECT_EQ(p.describe({false, false, false, false}), "no halo exchange");
  EXPECT_EQ(peer_whole().describe(kAll), "peer in x y z t; one kernel after the exchange");
  EXPECT_STREQ(peer_whole().exterior_name(), "whole");
  EXPECT_STREQ(p.exterior_name(), "split");
}

}  // namespace
}  // namespace emprism
