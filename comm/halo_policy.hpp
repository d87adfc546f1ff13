// halo_policy.hpp: the choices of the halo exchange and how the ranks agree on them (comm/ holds no physics).
// A policy names, per partitioned direction, the transport that moves the faces, and how the kernels meet the
// exchange: overlapped (the interior kernel runs while the faces travel, then the boundary sites are finished by
// one fused exterior kernel or by one kernel per direction, split) or whole (one pack launch for every direction,
// then one kernel over all sites once every face is in place: no overlap, no second pass over the boundary sites).
//   staged     device -> pinned host memory -> MPI -> pinned host memory -> device, asynchronous copies on the
//              direction's stream; to itself (force_halo) the faces go device -> pinned -> device, no MPI
//   gpu_aware  device buffers handed to MPI (an MPI that accepts device memory; on the CPU backend, where field
//              memory is host memory, this is plain MPI without copies)
//   peer       the pack kernel stores straight into the neighbour's receive buffer: mapped through CUDA/HIP IPC
//              for ranks on one node (MPI shared memory on the CPU backend), the rank's own buffer for itself
// Candidates. When every partitioned direction goes by peer (requested "peer" or "auto" with peer possible in all of
// them), the one candidate is peer, whole: the
// stores of the pack are the transfer, so there is nothing to overlap (measured on one H100 with force_halo in x y z t:
// 0.47 against 0.52-0.55 ms per application, BENCHMARKS.md). Otherwise, overlapped: for "auto" every transport MPI
// offers for all directions (staged, gpu_aware when available) and, where peer is possible, peer in those directions
// with each of them elsewhere; a forced transport keeps only candidates that use it (peer: where possible, the rest
// tuned); each with the exterior fused and (when more than one direction is partitioned) split. Staged is no candidate
// of "auto" on the CPU backend (two pointless host copies). Every rank computes the same list from agreed availability.
// Bits: the candidates of one list give bitwise the same results (the overlapped ones add the same terms in the same
// order; the transports only move bytes), so the tuning never changes a result and a run is reproducible. Whole sums
// a site's hops in another order than the overlapped kernels (kernels/wilson_clover.hpp, DslashWhole): the two differ
// by rounding, and only where the request or the placement of the ranks differs.
// Agreement: each rank times every candidate; the slowest rank's time decides (max over ranks), the fastest of
// those wins, ties to the earlier candidate; every rank ends with the same index.
// Who may call: candidate_policies, fastest_of_slowest and describe are pure; agree_on_policy and
// check_transport_request are collective over the communicator / the grid.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "comm/process_grid.hpp"

namespace emprism {

class Communicator;

enum class Transport { Staged, GpuAware, Peer };
const char* transport_name(Transport t);  // "staged", "gpu_aware", "peer"

// What the input asks for (comm.transport, or the older comm.gpu_aware; see src/run/config.hpp).
struct TransportRequest {
  enum class Choice { Auto, Staged, GpuAware, Peer };
  Choice choice = Choice::Auto;
  bool gpu_aware_in_auto = true;       // comm.gpu_aware = false: auto never hands device memory to MPI
  std::string key = "comm.transport";  // the input key named by errors
};

// What this build, this MPI and this placement of ranks offer (the same on every rank).
struct TransportAvailability {
  bool host_memory = false;           // CPU backend: field memory is host memory
  bool gpu_aware = false;             // MPI accepts device memory (always true on the CPU backend)
  std::array<bool, 4> peer{};         // per direction: both neighbours mapped (or the rank itself)
  std::array<bool, 4> partitioned{};  // directions that exchange halos
};

struct HaloPolicy {
  std::array<Transport, 4> transport{Transport::Staged, Transport::Staged, Transport::Staged, Transport::Staged};
  bool split_exterior = false;
  bool whole = false;  // one kernel over all sites after the exchange (every partitioned direction by peer)
  bool operator==(const HaloPolicy& o) const {
    return transport == o.transport && split_exterior == o.split_exterior && whole == o.whole;
  }
  // "fused", "split" or "whole": how the kernels meet the exchange.
  const char* exterior_name() const { return whole ? "whole" : split_exterior ? "split" : "fused"; }
  // E.g. "peer in x y z, staged in t; exterior split by direction", "peer in x y z t; one kernel after the exchange".
  std::string describe(const std::array<bool, 4>& partitioned) const;
};

// Candidates in a fixed order (see the top of the file). Throws InputError naming request.key when the request
// cannot be met at all (gpu_aware without a GPU-aware MPI; peer in no partitioned direction).
std::vector<HaloPolicy> candidate_policies(const TransportRequest& request, const TransportAvailability& avail);

// Index of the smallest entry (the first of equal ones); slowest[i] is candidate i's time on its slowest rank.
std::size_t fastest_of_slowest(const std::vector<double>& slowest);

// Collective: every rank passes its own times (same length everywhere); all get the same fastest_of_slowest.
std::size_t agree_on_policy(const Communicator& comm, const std::vector<double>& my_times);

// Before any work (collective over grid.cart): throws the same InputError on every rank when the request cannot be
// met whatever the tuning finds: gpu_aware forced without GPU-aware MPI (GPU backends), or peer forced while no
// partitioned direction has both its neighbours on this node. Needs no device.
void check_transport_request(const TransportRequest& request, const ProcessGrid& grid);

// Per direction (collective over grid.cart, agreed by all ranks): true when every rank's two neighbours in mu are
// itself or ranks on its node (MPI_COMM_TYPE_SHARED).
std::array<bool, 4> node_local_directions(const ProcessGrid& grid);

}  // namespace emprism
