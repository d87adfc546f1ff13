// halo_transport.cpp: the halo exchange rounds of the three transports (protocol in halo_transport.hpp).
// Tags on the transport's own communicator: data to the backward neighbour 2 mu, to the forward one 2 mu + 1;
// peer tokens the same plus 8. A rank receives from its forward neighbour what that one sent "to bwd".
#include "comm/halo_transport.hpp"

#include <exception>
#include <limits>

#include "comm/gpu_aware.hpp"
#include "kernels/errors.hpp"

namespace emprism {
namespace {

constexpr int kTokenTag = 8;
constexpr std::size_t kAlign = 256;
constexpr std::size_t kTimingRing = 32;  // rounds whose statistics may be pending on the device

std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

int count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw RuntimeFailure("halo face larger than 2 GiB");
  return static_cast<int>(bytes);
}

}  // namespace

struct HaloTransport::Dir {
  bool self = false;  // the rank is its own neighbour in mu
  Transport transport = Transport::Staged;
  backend::Stream stream;
  backend::Event ready[2], sent[2];
  MPI_Request recv[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
  MPI_Request send[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
  bool packed = true, posted_send = true, is_ready = true;  // this round's state
  std::int64_t calls = 0;
  double exchange_s = 0, exposed_s = 0;
};

struct HaloTransport::RoundTiming {
  backend::Event start, before[4], after[4], in_place[4];
  bool pending = false;
  bool whole = false;  // no overlap: the whole exchange from `start` on is exposed
};

HaloTransport::HaloTransport(const ProcessGrid& grid, const std::array<std::size_t, 4>& face_bytes,
                             const TransportRequest& request)
    : grid_(grid), face_bytes_(face_bytes) {
  if (!active()) return;
  MPI_Comm_dup(grid.cart != MPI_COMM_NULL ? grid.cart : MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  for (int mu = 0; mu < 4; ++mu) {
    offset_[mu] = parity_bytes_;
    if (grid_.partitioned[mu]) parity_bytes_ += 2 * aligned(face_bytes_[mu]);
  }
  avail_.host_memory = backend::device_is_host();
  int aware = avail_.host_memory || mpi_is_gpu_aware();
  MPI_Allreduce(MPI_IN_PLACE, &aware, 1, MPI_INT, MPI_LAND, comm_);
  avail_.gpu_aware = aware != 0;
  avail_.partitioned = grid_.partitioned;
  const bool wants_peer =
      request.choice == TransportRequest::Choice::Auto || request.choice == TransportRequest::Choice::Peer;
  std::array<bool, 4> want{};
  if (wants_peer) want = node_local_directions(grid_);
  arena_ = std::make_unique<HaloArena>(comm_, grid_, 2 * parity_bytes_, want);
  avail_.peer = arena_->mapped();
  candidates_ = candidate_policies(request, avail_);
  for (int mu = 0; mu < 4; ++mu) {
    auto d = std::make_unique<Dir>();
    if (grid_.partitioned[mu]) {
      d->self = grid_.fwd[mu] == rank_ && grid_.bwd[mu] == rank_;
      d->stream = backend::create_stream();
      for (int p = 0; p < 2; ++p) {
        d->ready[p] = backend::create_event(backend::EventKind::Sync);
        d->sent[p] = backend::create_event(backend::EventKind::Sync);
      }
    }
    dirs_.push_back(std::move(d));
  }
  for (int p = 0; p < 2; ++p) {
    start_[p] = backend::create_event(backend::EventKind::Sync);
    round_end_[p] = backend::create_event(backend::EventKind::Sync);
  }
}

HaloTransport::~HaloTransport() {
  if (!active()) return;
  const bool unwinding = std::uncaught_exceptions() > 0;
  if (!unwinding) quiesce();
  for (auto& d : dirs_) {
    for (int p = 0; p < 2; ++p) {
      backend::destroy_event(d->ready[p]);
      backend::destroy_event(d->sent[p]);
    }
    backend::destroy_stream(d->stream);
  }
  for (int p = 0; p < 2; ++p) {
    backend::destroy_event(start_[p]);
    backend::destroy_event(round_end_[p]);
  }
  for (auto& t : timing_) {
    backend::destroy_event(t->start);
    for (int mu = 0; mu < 4; ++mu)
      for (backend::Event e : {t->before[mu], t->after[mu], t->in_place[mu]}) backend::destroy_event(e);
  }
  backend::device_free(send_);
  backend::host_free_pinned(pinned_);
  arena_.reset();  // collective when peers are mapped (before the communicator goes)
  if (!unwinding) MPI_Comm_free(&comm_);
}

std::byte* HaloTransport::recv_buf(int p, int mu, int side) const {
  return arena_->local() + static_cast<std::size_t>(p) * parity_bytes_ + offset_[mu] +
         static_cast<std::size_t>(side) * aligned(face_bytes_[mu]);
}
std::byte* HaloTransport::send_buf(int p, int mu, int side) const {
  return send_ + static_cast<std::size_t>(p) * parity_bytes_ + offset_[mu] +
         static_cast<std::size_t>(side) * aligned(face_bytes_[mu]);
}
std::byte* HaloTransport::pinned_send(int p, int mu, int side) const {
  return pinned_ + static_cast<std::size_t>(p) * parity_bytes_ + offset_[mu] +
         static_cast<std::size_t>(side) * aligned(face_bytes_[mu]);
}
std::byte* HaloTransport::pinned_recv(int p, int mu, int side) const {
  return pinned_send(p, mu, side) + 2 * parity_bytes_;
}

void HaloTransport::ensure_buffers(const HaloPolicy& pol) {
  for (int mu = 0; mu < 4; ++mu) {
    if (!grid_.partitioned[mu]) continue;
    if (pol.transport[mu] != Transport::Peer && send_ == nullptr)
      send_ = static_cast<std::byte*>(backend::device_alloc(2 * parity_bytes_));
    if (pol.transport[mu] == Transport::Staged && pinned_ == nullptr)
      pinned_ = static_cast<std::byte*>(backend::host_alloc_pinned(4 * parity_bytes_));
  }
}

void HaloTransport::set_policy(const HaloPolicy& p) {
  if (!active() || (has_policy_ && p == policy_)) return;
  if (has_policy_ && round_ > 0) quiesce();
  ensure_buffers(p);
  policy_ = p;
  has_policy_ = true;
  for (int mu = 0; mu < 4; ++mu) dirs_[static_cast<std::size_t>(mu)]->transport = p.transport[mu];
}

std::size_t HaloTransport::agree(const std::vector<double>& my_times) const {
  std::vector<double> slowest(my_times);
  if (!slowest.empty())
    MPI_Allreduce(MPI_IN_PLACE, slowest.data(), static_cast<int>(slowest.size()), MPI_DOUBLE, MPI_MAX, comm_);
  return fastest_of_slowest(slowest);
}

void HaloTransport::complete_sends(Dir& d, int p) { MPI_Waitall(2, d.send[p], MPI_STATUSES_IGNORE); }

void HaloTransport::quiesce() {
  backend::synchronize();
  for (auto& d : dirs_)
    for (int p = 0; p < 2; ++p) {
      complete_sends(*d, p);
      MPI_Waitall(2, d->recv[p], MPI_STATUSES_IGNORE);  // none is left pending by a finished round
    }
  MPI_Barrier(comm_);
}

void HaloTransport::post_receives(Dir& d, int mu, int p) {
  const int n = count(face_bytes_[mu]);
  const int fwd = grid_.fwd[mu], bwd = grid_.bwd[mu];
  switch (d.transport) {
    case Transport::Staged:
      if (d.self) return;
      if (round_ >= 2) backend::wait_event(d.ready[p]);  // round k-2's copy out of pinned_recv[p] is done
      MPI_Irecv(pinned_recv(p, mu, 1), n, MPI_BYTE, fwd, 2 * mu, comm_, &d.recv[p][1]);
      MPI_Irecv(pinned_recv(p, mu, 0), n, MPI_BYTE, bwd, 2 * mu + 1, comm_, &d.recv[p][0]);
      return;
    case Transport::GpuAware:
      MPI_Irecv(recv_buf(p, mu, 1), n, MPI_BYTE, fwd, 2 * mu, comm_, &d.recv[p][1]);
      MPI_Irecv(recv_buf(p, mu, 0), n, MPI_BYTE, bwd, 2 * mu + 1, comm_, &d.recv[p][0]);
      return;
    case Transport::Peer:
      if (d.self) return;
      MPI_Irecv(nullptr, 0, MPI_BYTE, fwd, kTokenTag + 2 * mu, comm_, &d.recv[p][1]);
      MPI_Irecv(nullptr, 0, MPI_BYTE, bwd, kTokenTag + 2 * mu + 1, comm_, &d.recv[p][0]);
      return;
  }
}

void HaloTransport::begin() {
  const int p = static_cast<int>(round_ & 1);
  const backend::Stream compute = backend::compute_stream();
  backend::record(start_[p], compute);
  current_ = nullptr;
  if (recording_) {
    const std::size_t slot = static_cast<std::size_t>(round_) % kTimingRing;
    while (timing_.size() <= slot) {
      auto t = std::make_unique<RoundTiming>();
      t->start = backend::create_event(backend::EventKind::Timing);
      for (int mu = 0; mu < 4; ++mu) {
        t->before[mu] = backend::create_event(backend::EventKind::Timing);
        t->after[mu] = backend::create_event(backend::EventKind::Timing);
        t->in_place[mu] = backend::create_event(backend::EventKind::Timing);
      }
      timing_.push_back(std::move(t));
    }
    current_ = timing_[slot].get();
    if (current_->pending) resolve(*current_);
    current_->whole = policy_.whole;
    backend::record(current_->start, compute);
  }
  bool waited_round_end = false;
  for (int mu = 0; mu < 4; ++mu) {
    if (!grid_.partitioned[mu]) continue;
    Dir& d = *dirs_[static_cast<std::size_t>(mu)];
    complete_sends(d, p);  // round k-2's sends out of this parity's buffers
    if (d.transport == Transport::GpuAware && !waited_round_end && round_ >= 2) {
      backend::wait_event(round_end_[p]);  // round k-2's exterior no longer reads arena[p]
      waited_round_end = true;
    }
    d.packed = false;
    d.posted_send = false;
    d.is_ready = false;
    post_receives(d, mu, p);
    if (!policy_.whole) backend::wait(d.stream, start_[p]);  // (whole: the pack runs on the compute stream)
  }
}

backend::Stream HaloTransport::stream(const Dir& d) const {
  return policy_.whole ? backend::compute_stream() : d.stream;
}

HaloTransport::PackTarget HaloTransport::pack_target(int mu) const {
  const int p = static_cast<int>(round_ & 1);
  const Dir& d = *dirs_[static_cast<std::size_t>(mu)];
  if (d.transport != Transport::Peer) return {send_buf(p, mu, 0), send_buf(p, mu, 1), stream(d)};
  // Peer: what goes to the backward neighbour lands in its buffer "from fwd", and vice versa.
  const std::size_t off_from_fwd = recv_buf(p, mu, 1) - arena_->local();
  const std::size_t off_from_bwd = recv_buf(p, mu, 0) - arena_->local();
  return {arena_->neighbour(mu, 0) + off_from_fwd, arena_->neighbour(mu, 1) + off_from_bwd, stream(d)};
}

void HaloTransport::mark_ready(Dir& d, int mu, int p) {
  d.is_ready = true;
  if (policy_.whole) return;  // everything on the compute stream: its order is the readiness (wait(mu) times it)
  backend::record(d.ready[p], stream(d));
  if (current_) backend::record(current_->in_place[mu], stream(d));
}

void HaloTransport::packed(int mu) {
  const int p = static_cast<int>(round_ & 1);
  Dir& d = *dirs_[static_cast<std::size_t>(mu)];
  const std::size_t n = face_bytes_[mu];
  d.packed = true;
  switch (d.transport) {
    case Transport::Staged:
      for (int side = 0; side < 2; ++side)
        backend::copy_async(pinned_send(p, mu, side), send_buf(p, mu, side), n, stream(d));
      if (d.self) {  // to itself: what went "to bwd" comes back "from fwd"
        backend::copy_async(recv_buf(p, mu, 1), pinned_send(p, mu, 0), n, stream(d));
        backend::copy_async(recv_buf(p, mu, 0), pinned_send(p, mu, 1), n, stream(d));
        d.posted_send = true;
        mark_ready(d, mu, p);
      } else {
        backend::record(d.sent[p], stream(d));
      }
      return;
    case Transport::GpuAware:
      backend::record(d.sent[p], stream(d));
      return;
    case Transport::Peer:
      d.posted_send = true;
      if (d.self) {
        mark_ready(d, mu, p);
        return;
      }
      backend::record(arena_->own_event(mu, p), stream(d));
      arena_->sync();
      MPI_Isend(nullptr, 0, MPI_BYTE, grid_.bwd[mu], kTokenTag + 2 * mu, comm_, &d.send[p][0]);
      MPI_Isend(nullptr, 0, MPI_BYTE, grid_.fwd[mu], kTokenTag + 2 * mu + 1, comm_, &d.send[p][1]);
      return;
  }
}

void HaloTransport::progress(Dir& d, int mu, int p) {
  const int n = count(face_bytes_[mu]);
  if (d.packed && !d.posted_send && backend::done(d.sent[p])) {  // staged or gpu_aware to another rank
    const bool staged = d.transport == Transport::Staged;
    MPI_Isend(staged ? pinned_send(p, mu, 0) : send_buf(p, mu, 0), n, MPI_BYTE, grid_.bwd[mu], 2 * mu, comm_,
              &d.send[p][0]);
    MPI_Isend(staged ? pinned_send(p, mu, 1) : send_buf(p, mu, 1), n, MPI_BYTE, grid_.fwd[mu], 2 * mu + 1, comm_,
              &d.send[p][1]);
    d.posted_send = true;
  }
  if (d.is_ready || !d.packed) return;
  int arrived = 0;
  MPI_Testall(2, d.recv[p], &arrived, MPI_STATUSES_IGNORE);
  if (!arrived) return;
  switch (d.transport) {
    case Transport::Staged:
      backend::copy_async(recv_buf(p, mu, 0), pinned_recv(p, mu, 0), face_bytes_[mu], stream(d));
      backend::copy_async(recv_buf(p, mu, 1), pinned_recv(p, mu, 1), face_bytes_[mu], stream(d));
      break;
    case Transport::GpuAware:
      break;  // MPI wrote the arena
    case Transport::Peer:
      arena_->sync();
      backend::wait(stream(d), arena_->neighbour_event(mu, 0, p));
      backend::wait(stream(d), arena_->neighbour_event(mu, 1, p));
      break;
  }
  mark_ready(d, mu, p);
}

void HaloTransport::progress() {
  const int p = static_cast<int>(round_ & 1);
  for (int mu = 0; mu < 4; ++mu)
    if (grid_.partitioned[mu]) progress(*dirs_[static_cast<std::size_t>(mu)], mu, p);
}

void HaloTransport::wait(int mu) {
  const int p = static_cast<int>(round_ & 1);
  const backend::Stream compute = backend::compute_stream();
  Dir& d = *dirs_[static_cast<std::size_t>(mu)];
  if (policy_.whole) {  // the faces are in place once the compute stream passes this point: one timing event
    while (!d.is_ready) progress();
    if (current_ && mu == last_partitioned()) backend::record(current_->after[mu], compute);
    return;
  }
  if (current_) backend::record(current_->before[mu], compute);
  while (!d.is_ready) progress();
  backend::wait(compute, d.ready[p]);
  if (current_) backend::record(current_->after[mu], compute);
}

int HaloTransport::last_partitioned() const {
  int last = -1;
  for (int mu = 0; mu < 4; ++mu)
    if (grid_.partitioned[mu]) last = mu;
  return last;
}

void HaloTransport::end() {
  const int p = static_cast<int>(round_ & 1);
  for (;;) {  // every send of this round posted: a neighbour may be waiting for it
    bool all = true;
    for (int mu = 0; mu < 4; ++mu)
      if (grid_.partitioned[mu] && !dirs_[static_cast<std::size_t>(mu)]->posted_send) all = false;
    if (all) break;
    progress();
  }
  backend::record(round_end_[p], backend::compute_stream());
  if (current_) current_->pending = true;
  current_ = nullptr;
  ++round_;
}

void HaloTransport::resolve(RoundTiming& t) {
  const int last = last_partitioned();
  for (int mu = 0; mu < 4; ++mu) {
    if (!grid_.partitioned[mu]) continue;
    Dir& d = *dirs_[static_cast<std::size_t>(mu)];
    if (t.whole) {  // no overlap: every direction's exchange is the whole of it, all exposed
      backend::wait_event(t.after[last]);
      const double s = backend::elapsed_seconds(t.start, t.after[last]);
      d.exchange_s += s;
      d.exposed_s += s;
    } else {
      backend::wait_event(t.after[mu]);
      backend::wait_event(t.in_place[mu]);
      d.exchange_s += backend::elapsed_seconds(t.start, t.in_place[mu]);
      d.exposed_s += backend::elapsed_seconds(t.before[mu], t.after[mu]);
    }
    ++d.calls;
  }
  t.pending = false;
}

std::vector<HaloTransport::DirectionStats> HaloTransport::stats() {
  for (auto& t : timing_)
    if (t->pending) resolve(*t);
  std::vector<DirectionStats> out;
  for (int mu = 0; mu < 4; ++mu) {
    if (!grid_.partitioned[mu]) continue;
    const Dir& d = *dirs_[static_cast<std::size_t>(mu)];
    out.push_back(DirectionStats{mu, d.transport, policy_.exterior_name(), d.calls,
                                 2.0 * static_cast<double>(face_bytes_[mu]), d.exchange_s, d.exposed_s});
  }
  return out;
}

}  // namespace emprism
