// halo_policy.cpp: halo policy candidates and the agreement on the fastest (see halo_policy.hpp).
#include "comm/halo_policy.hpp"

#include <mpi.h>

#include <algorithm>

#include "comm/communicator.hpp"
#include "comm/gpu_aware.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"

namespace emprism {
namespace {

constexpr const char* kDirNames[4] = {"x", "y", "z", "t"};

std::string quoted(TransportRequest::Choice c) {
  switch (c) {
    case TransportRequest::Choice::Staged:
      return "\"staged\"";
    case TransportRequest::Choice::GpuAware:
      return "\"gpu_aware\"";
    case TransportRequest::Choice::Peer:
      return "\"peer\"";
    case TransportRequest::Choice::Auto:
      break;
  }
  return "\"auto\"";
}

std::string gpu_aware_error(const TransportRequest& r) {
  const std::string value = r.key == "comm.gpu_aware" ? "true" : "\"gpu_aware\"";
  return r.key + ": " + value +
         " needs an MPI library that accepts device memory, and this one does not say it does (Open MPI built with "
         "CUDA or ROCm, or Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=1); use comm.transport = \"staged\", \"peer\" "
         "or \"auto\"";
}

// The remote transports (those going through MPI) a request allows, in candidate order.
std::vector<Transport> remote_choices(const TransportRequest& r, const TransportAvailability& a) {
  using C = TransportRequest::Choice;
  std::vector<Transport> out;
  const bool staged = r.choice == C::Staged || ((r.choice == C::Auto || r.choice == C::Peer) && !a.host_memory);
  const bool aware = a.gpu_aware && (r.choice == C::GpuAware || ((r.choice == C::Auto || r.choice == C::Peer) &&
                                                                 (r.gpu_aware_in_auto || a.host_memory)));
  if (staged) out.push_back(Transport::Staged);
  if (aware) out.push_back(Transport::GpuAware);
  return out;
}

// Peer is possible in every partitioned direction (and at least one is partitioned).
bool all_peer(const TransportAvailability& a) {
  bool any = false;
  for (int mu = 0; mu < 4; ++mu) {
    if (a.partitioned[mu] && !a.peer[mu]) return false;
    any = any || a.partitioned[mu];
  }
  return any;
}

void add_unique(std::vector<HaloPolicy>& list, const HaloPolicy& p) {
  if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
}

}  // namespace

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::GpuAware:
      return "gpu_aware";
    case Transport::Peer:
      return "peer";
    case Transport::Staged:
      break;
  }
  return "staged";
}

std::string HaloPolicy::describe(const std::array<bool, 4>& partitioned) const {
  std::string out;
  for (Transport t : {Transport::Peer, Transport::GpuAware, Transport::Staged}) {
    std::string dirs;
    for (int mu = 0; mu < 4; ++mu)
      if (partitioned[mu] && transport[mu] == t) dirs += std::string(dirs.empty() ? "" : " ") + kDirNames[mu];
    if (!dirs.empty()) out += std::string(out.empty() ? "" : ", ") + transport_name(t) + " in " + dirs;
  }
  if (out.empty()) return "no halo exchange";
  if (whole) return out + "; one kernel after the exchange";
  return out + (split_exterior ? "; exterior split by direction" : "; exterior fused");
}

std::vector<HaloPolicy> candidate_policies(const TransportRequest& r, const TransportAvailability& a) {
  using C = TransportRequest::Choice;
  int nparts = 0;
  bool any_peer = false;
  for (int mu = 0; mu < 4; ++mu) {
    nparts += a.partitioned[mu] ? 1 : 0;
    any_peer = any_peer || (a.partitioned[mu] && a.peer[mu]);
  }
  if (r.choice == C::GpuAware && !a.gpu_aware) throw InputError(gpu_aware_error(r));
  if (r.choice == C::Peer && nparts > 0 && !any_peer)
    throw InputError(r.key +
                     ": \"peer\" is not possible: no partitioned direction has both its "
                     "neighbours on this node with memory this rank can map");
  const std::vector<Transport> remote = remote_choices(r, a);
  std::vector<HaloPolicy> base;
  const bool use_peer = r.choice == C::Peer || (r.choice == C::Auto && any_peer);
  for (Transport rem : remote) {
    HaloPolicy p;
    for (int mu = 0; mu < 4; ++mu) p.transport[mu] = use_peer && a.peer[mu] ? Transport::Peer : rem;
    add_unique(base, p);
  }
  if (use_peer && remote.empty()) {  // every partitioned direction can use peer (checked below)
    HaloPolicy p;
    for (int mu = 0; mu < 4; ++mu) p.transport[mu] = Transport::Peer;
    base.push_back(p);
  }
  if (r.choice == C::Auto) {
    for (Transport rem : remote) {
      HaloPolicy p;
      p.transport.fill(rem);
      add_unique(base, p);
    }
  }
  std::vector<HaloPolicy> out;
  if (use_peer && all_peer(a)) {  // every partitioned direction by peer: whole, the only candidate (see the header)
    HaloPolicy p;
    p.transport.fill(Transport::Peer);
    p.whole = true;
    out.push_back(p);
    return out;
  }
  for (const HaloPolicy& p : base) {
    bool ok = true;  // every partitioned direction has an available transport
    for (int mu = 0; mu < 4; ++mu)
      if (a.partitioned[mu] && p.transport[mu] == Transport::Peer && !a.peer[mu]) ok = false;
    if (!ok) continue;
    out.push_back(p);
    if (nparts > 1) {
      HaloPolicy s = p;
      s.split_exterior = true;
      out.push_back(s);
    }
  }
  if (out.empty())
    throw InputError(r.key + ": " + quoted(r.choice) +
                     " leaves a partitioned direction without a transport (its neighbours are on other nodes); use "
                     "comm.transport = \"auto\"");
  return out;
}

std::size_t fastest_of_slowest(const std::vector<double>& slowest) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < slowest.size(); ++i)
    if (slowest[i] < slowest[best]) best = i;
  return best;
}

std::size_t agree_on_policy(const Communicator& comm, const std::vector<double>& my_times) {
  std::vector<double> slowest(my_times);
  if (!slowest.empty())
    MPI_Allreduce(MPI_IN_PLACE, slowest.data(), static_cast<int>(slowest.size()), MPI_DOUBLE, MPI_MAX, comm.handle());
  return fastest_of_slowest(slowest);
}

std::array<bool, 4> node_local_directions(const ProcessGrid& grid) {
  MPI_Comm cart = grid.cart != MPI_COMM_NULL ? grid.cart : MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(cart, &rank);
  MPI_Comm_size(cart, &size);
  MPI_Comm node;
  MPI_Comm_split_type(cart, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_id = rank;  // the lowest rank of the node names it
  MPI_Allreduce(MPI_IN_PLACE, &node_id, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> ids(static_cast<std::size_t>(size));
  MPI_Allgather(&node_id, 1, MPI_INT, ids.data(), 1, MPI_INT, cart);
  int local[4];
  for (int mu = 0; mu < 4; ++mu)
    local[mu] = ids[static_cast<std::size_t>(grid.fwd[mu])] == node_id &&
                ids[static_cast<std::size_t>(grid.bwd[mu])] == node_id;
  MPI_Allreduce(MPI_IN_PLACE, local, 4, MPI_INT, MPI_LAND, cart);
  return {local[0] != 0, local[1] != 0, local[2] != 0, local[3] != 0};
}

void check_transport_request(const TransportRequest& r, const ProcessGrid& grid) {
  using C = TransportRequest::Choice;
  if (r.choice == C::GpuAware && !backend::device_is_host() && !mpi_is_gpu_aware())
    throw InputError(gpu_aware_error(r));
  if (r.choice != C::Peer || !grid.any_partitioned()) return;
  const std::array<bool, 4> local = node_local_directions(grid);
  for (int mu = 0; mu < 4; ++mu)
    if (grid.partitioned[mu] && local[mu]) return;
  throw InputError(r.key +
                   ": \"peer\" is not possible: in every partitioned direction some rank has a neighbour on another "
                   "node; use \"auto\", \"staged\" or \"gpu_aware\"");
}

}  // namespace emprism
