// timeslice_gather.cpp: the timeslice gather of timeslice_gather.hpp: a contiguous MPI type per site, and on rank 0 a
// subarray type per sending rank that places its rows directly into the global timeslice.
#include "comm/timeslice_gather.hpp"

#include <climits>
#include <stdexcept>

namespace emprism {

TimesliceGather::TimesliceGather(Communicator& comm, const std::vector<LatticeBlock>& blocks, std::size_t site_bytes,
                                 int tag)
    : comm_(comm), blocks_(blocks), tag_(tag) {
  if (site_bytes > static_cast<std::size_t>(INT_MAX)) throw std::length_error("timeslice gather: site too large");
  MPI_Type_contiguous(static_cast<int>(site_bytes), MPI_BYTE, &site_);
  MPI_Type_commit(&site_);
  if (comm_.rank() != 0) return;
  place_.assign(blocks_.size(), MPI_DATATYPE_NULL);
  for (std::size_t r = 1; r < blocks_.size(); ++r) {
    const LatticeBlock& b = blocks_[r];
    const int sizes[3] = {b.global[2], b.global[1], b.global[0]};
    const int subsizes[3] = {b.local[2], b.local[1], b.local[0]};
    const int starts[3] = {b.origin[2], b.origin[1], b.origin[0]};
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, site_, &place_[r]);
    MPI_Type_commit(&place_[r]);
  }
}

TimesliceGather::~TimesliceGather() {
  if (mpi_finalised()) return;
  for (MPI_Datatype& t : place_)
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  if (site_ != MPI_DATATYPE_NULL) MPI_Type_free(&site_);
}

void TimesliceGather::send(const void* sites) {
  const std::int64_t n = blocks_[static_cast<std::size_t>(comm_.rank())].slice_sites();
  if (n > INT_MAX) throw std::length_error("timeslice gather: timeslice too large");
  MPI_Send(sites, static_cast<int>(n), site_, 0, tag_, comm_.handle());
}

void TimesliceGather::start(int t, void* slice) {
  requests_.clear();
  for (std::size_t r = 1; r < blocks_.size(); ++r) {
    if (!blocks_[r].holds_t(t)) continue;
    requests_.emplace_back();
    MPI_Irecv(slice, 1, place_[r], static_cast<int>(r), tag_, comm_.handle(), &requests_.back());
  }
}

void TimesliceGather::finish() {
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  requests_.clear();
}

}  // namespace emprism
