// halo_transport.hpp: the halo exchange of the hopping kernels with streams and events, behind one interface for
// the three transports of comm/halo_policy.hpp (comm/ holds no physics: faces are bytes). For direction mu:
//   the face a rank packs "to_bwd" goes to its backward neighbour and lands in that rank's "from_fwd" buffer,
//   the face it packs "to_fwd" goes to its forward neighbour and lands in that rank's "from_bwd" buffer.
// One exchange (a round), as the operator drives it (src/physics/dirac.cpp):
//   begin()          records `start` on the compute stream; each direction's stream waits on it (the pack reads
//                    the input the compute stream produced); posts this round's receives
//   pack_target(mu)  where the pack kernel of mu writes its two faces, and the stream it runs on
//   packed(mu)       after the pack kernel was enqueued: starts the direction's transfer
//   (the interior kernel is enqueued on the compute stream here)
//   wait(mu)         the host progresses every direction (events, MPI) until mu's faces are in place, then the
//                    compute stream waits for them (an event); the exterior of mu may be enqueued after it
//   end()            posts whatever send is still pending, so no neighbour depends on this rank's next call
// No call blocks on the device except begin() in the rare case a buffer of two rounds ago is still in use.
//
// Buffers: every receive buffer, send buffer and pinned buffer exists twice, by round parity p = round & 1.
// Receive buffers live in the HaloArena (comm/halo_arena.hpp), which same-node neighbours may map.
//
// Per transport, direction mu, round k (p = k & 1):
//   staged     pack -> send[p] (device); async copy send[p] -> pinned_send[p] on mu's stream, event `sent`;
//              the host sees `sent` done -> MPI_Isend of the pinned faces; the host sees MPI_Irecv into
//              pinned_recv[p] done -> async copy pinned_recv[p] -> arena[p] on mu's stream, event `ready`.
//              To itself: pack -> send[p] -> pinned_send[p] -> arena[p], all on mu's stream, no MPI, no host.
//              Reuse: begin(k) completes the Isends of round k-2 (pinned_send[p]) and waits for `ready` of
//              round k-2 (the copy out of pinned_recv[p]) before the new Irecv may write it.
//   gpu_aware  pack -> send[p]; event `sent`; the host sees it -> MPI_Isend(send[p]); MPI_Irecv(arena[p]);
//              when it completes, `ready` is recorded on mu's stream. Reuse: begin(k) completes the Isends of
//              round k-2 and waits for `round_end` of round k-2 (after its exterior kernels) before the Irecv
//              into arena[p] is posted (MPI may write it at once).
//   peer       the pack kernel stores into the neighbours' arenas[p] (its own arena for itself); then this rank
//              records its interprocess event E(mu, p) on mu's stream and sends each neighbour a zero-byte
//              token (MPI) after the record call returned. On receiving both tokens of mu, the host enqueues on
//              mu's stream a wait on each neighbour's E(mu, p), then records `ready`.
//   Why this is safe (peer). (1) A wait binds to the right record: a neighbour records E(mu, p) of round k
//   before its token k; it records E(mu, p) again only in round k+2, after receiving this rank's token k+1,
//   which this rank sends after it enqueued its wait for round k (and the events alternate with p, so round
//   k+1's record is another event). (2) No write into a buffer still being read: a neighbour's pack of round
//   k+2 writes this rank's arena[p]; it runs after the neighbour's `start` of k+2, recorded after its exterior
//   of k+1, which waited for this rank's E(mu, p') of k+1, recorded after this rank's pack of k+1, which waited
//   for this rank's `start` of k+1, recorded after this rank's exterior of round k, the last reader of
//   arena[p]. The chain uses only stream order and these events, never data dependencies between rounds, so
//   independent operator applications (both parities of M) are covered. (3) The compute stream never runs past
//   a direction before its pack kernel finished reading the input (`ready` follows the pack on mu's stream).
//   On the CPU backend kernels are synchronous, the arena is an MPI shared window and the same tokens order
//   the stores (with MPI_Win_sync on both sides).
// Whole policy (every partitioned direction by peer, comm/halo_policy.hpp): the same protocol with every direction's
// stream replaced by the compute stream: one pack kernel for all directions there (no `start` wait), the
// interprocess events recorded and waited for there. The argument above holds as written, each "mu's stream" being
// the compute stream, whose order also puts this rank's pack of round k+1 after its kernel of round k. A rank that
// is its own neighbour needs no event at all: its faces are in place when the pack kernel is done.
// Policy changes (tuning) first wait for the device, complete every request and pass a barrier, so no round
// of one policy overlaps one of another.
// Statistics per direction (recorded unless switched off while tuning): device events around each wait of the
// compute stream give the time exposed (the compute stream's idle wait for that direction, after the interior
// kernel), and `start` -> faces in place gives the exchange time; resolved lazily (a ring of rounds). Under a whole
// policy nothing overlaps the exchange: both are `start` -> the last direction's wait (the pack included), from two
// events per round (no per-direction `ready` events there: everything runs on the compute stream).
// On the CPU backend events are host timestamps, so the same numbers are host times.
// Who may call: one operator; every rank in the same order (collective in effect); the constructor and
// destructor are collective over grid.cart when a direction is partitioned.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/halo_arena.hpp"
#include "comm/halo_policy.hpp"
#include "comm/process_grid.hpp"
#include "kernels/backend/runtime.hpp"

namespace emprism {

class HaloTransport {
 public:
  // face_bytes[mu]: bytes of one face of mu (a direction sends two). Throws InputError (request.key) when the
  // request cannot be met at all (halo_policy.hpp).
  HaloTransport(const ProcessGrid& grid, const std::array<std::size_t, 4>& face_bytes, const TransportRequest& request);
  ~HaloTransport();
  HaloTransport(const HaloTransport&) = delete;
  HaloTransport& operator=(const HaloTransport&) = delete;

  bool active() const { return grid_.any_partitioned(); }
  const std::array<bool, 4>& partitioned() const { return grid_.partitioned; }
  const std::vector<HaloPolicy>& candidates() const { return candidates_; }
  const TransportAvailability& availability() const { return avail_; }
  bool has_policy() const { return has_policy_; }
  const HaloPolicy& policy() const { return policy_; }
  // Every rank the same p. Waits for the device and all ranks first when rounds ran under another policy.
  void set_policy(const HaloPolicy& p);
  // agree_on_policy over this transport's communicator.
  std::size_t agree(const std::vector<double>& my_times) const;
  void set_recording(bool on) { recording_ = on; }

  struct PackTarget {
    void* to_bwd;
    void* to_fwd;
    backend::Stream stream;
  };
  void begin();
  PackTarget pack_target(int mu) const;
  void packed(int mu);
  void wait(int mu);
  const void* from_fwd(int mu) const { return recv_buf(round_ & 1, mu, 1); }
  const void* from_bwd(int mu) const { return recv_buf(round_ & 1, mu, 0); }
  void end();

  struct DirectionStats {
    int mu;
    Transport transport;
    const char* exterior;  // "fused", "split" or "whole" (HaloPolicy::exterior_name)
    std::int64_t calls;
    double bytes_per_call;  // sent by this rank, both faces
    double exchange_s;      // start of the round -> faces in place, summed
    double exposed_s;       // compute stream waiting for them after the interior, summed
  };
  // The partitioned directions' statistics (waits for the device to resolve the pending timings).
  std::vector<DirectionStats> stats();

 private:
  struct Dir;
  struct RoundTiming;
  std::byte* recv_buf(int p, int mu, int side) const;
  std::byte* send_buf(int p, int mu, int side) const;
  std::byte* pinned_send(int p, int mu, int side) const;
  std::byte* pinned_recv(int p, int mu, int side) const;
  void post_receives(Dir& d, int mu, int p);
  void progress();
  void progress(Dir& d, int mu, int p);
  void mark_ready(Dir& d, int mu, int p);
  void complete_sends(Dir& d, int p);
  void quiesce();
  void ensure_buffers(const HaloPolicy& p);
  void resolve(RoundTiming& t);
  // The stream a direction's pack, copies and events use: its own, or the compute stream under a whole policy.
  backend::Stream stream(const Dir& d) const;
  int last_partitioned() const;

  ProcessGrid grid_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::array<std::size_t, 4> face_bytes_{}, offset_{};
  std::size_t parity_bytes_ = 0;  // one parity's buffers, all directions
  std::unique_ptr<HaloArena> arena_;
  std::byte* send_ = nullptr;    // device
  std::byte* pinned_ = nullptr;  // host: send[2] then recv[2]
  TransportAvailability avail_;
  std::vector<HaloPolicy> candidates_;
  HaloPolicy policy_;
  bool has_policy_ = false, recording_ = true;
  std::vector<std::unique_ptr<Dir>> dirs_;
  backend::Event start_[2] = {}, round_end_[2] = {};
  std::int64_t round_ = 0;
  std::vector<std::unique_ptr<RoundTiming>> timing_;
  RoundTiming* current_ = nullptr;  // this round's timing, or null when not recording
};

}  // namespace emprism
