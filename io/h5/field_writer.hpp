// field_writer.hpp: the block-to-global field writer: every rank passes its block of a lattice field in LOCAL
// natural order (x fastest, complex<double>, `per_site` values per site) and the dataset holds the field in GLOBAL
// natural order [Lt][Lz][Ly][Lx][inner...], whatever the decomposition: with one collective H5Dwrite of each
// rank's hyperslab (FieldIo::Collective) or through rank 0, one global timeslice at a time (FieldIo::Gather,
// comm/timeslice_gather.hpp: rank 0 never holds more than one timeslice of the others' data). A dataset may hold
// several fields along leading dimensions (a propagator: [4][3] columns before the lattice); one write fills one.
// Single precision fields are converted to float32 on the way.
// Who may call: every rank of the file's communicator, in the same order (the constructor, write and finish are
// collective); check_* and create are called inside a File::step by every rank.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/h5/file.hpp"

namespace emprism::io::h5 {

// The block of the lattice this rank holds: extents (x, y, z, t) of the global lattice, of the block, and the
// global coordinates of the block's first site.
struct BlockLayout {
  std::array<int, 4> global{};
  std::array<int, 4> local{};
  std::array<int, 4> origin{0, 0, 0, 0};
  // One block holding the whole lattice (the single-rank case).
  static BlockLayout whole(const std::array<int, 4>& global) { return BlockLayout{global, global, {0, 0, 0, 0}}; }
};

// The shape of a field dataset: values per site and the leading dimensions.
struct FieldShape {
  std::string path;                   // the dataset's path, for messages
  std::vector<std::uint64_t> inner;   // per site: {4, 3} (spinor) or {4, 3, 3} (links)
  bool single = false;                // float32 in the file (and in the messages), else float64
  std::vector<std::uint64_t> lead{};  // leading dimensions ({} for one field, {4, 3} for a propagator)
  std::uint64_t per_site() const {
    std::uint64_t n = 1;
    for (std::uint64_t d : inner) n *= d;
    return n;
  }
};

class FieldWriter {
 public:
  // Gathers every rank's block and whether it passes field data (collective; cannot throw).
  FieldWriter(File& file, const BlockLayout& mine, bool has_data = true);
  ~FieldWriter();
  FieldWriter(const FieldWriter&) = delete;
  FieldWriter& operator=(const FieldWriter&) = delete;

  const std::array<int, 4>& global() const;
  bool has_data() const;  // rank 0 passes data
  // RuntimeFailure unless every rank passes data or none does ("<path>: ... given on some ranks only").
  void check_has_data(const std::string& path) const;
  // RuntimeFailure (the same on every rank) unless the blocks tile the global lattice as a tensor-product grid;
  // `what` names the object being written ("group '/solves/x'").
  void check_blocks(const std::string& what) const;
  // RuntimeFailure naming the dataset unless this rank passes block volume * per_site values.
  void check_size(std::size_t values, const FieldShape& shape) const;
  // Gather mode: allocates the buffers of a field of this shape before any message flows (so that an allocation
  // failure is agreed on like any other). Inside a step.
  void reserve(const FieldShape& shape);
  // Creates the dataset of a field in `group` (where the file is held). Inside a step.
  Object create(Object& group, const std::string& name, const FieldShape& shape) const;
  // Writes this rank's block of the field at index `at` of the leading dimensions (collective). Collective mode:
  // errors agreed at once; Gather mode: rank 0 keeps receiving after a failure, writes no more, and keeps the
  // failure for check_written().
  void write(Object& dataset, const FieldShape& shape, const std::vector<std::uint64_t>& at,
             const std::complex<double>* data);
  // Throws (on rank 0) the first failure of the gathered writes. Inside a step, after the last write.
  void check_written() const;

 private:
  struct State;
  File& file_;
  std::unique_ptr<State> s_;
};

}  // namespace emprism::io::h5
