// field_writer.cpp: the block-to-global field writer of field_writer.hpp: every rank's block gathered and checked,
// hyperslab selection, the collective write, and the timeslice-by-timeslice gather to rank 0.
#include "io/h5/field_writer.hpp"

#include <algorithm>
#include <climits>
#include <type_traits>
#include <utility>

#include "comm/timeslice_gather.hpp"
#include "io/h5/hdf5.hpp"
#include "kernels/errors.hpp"

namespace emprism::io::h5 {

namespace {

using cplx = std::complex<double>;

constexpr int kSlabTag = 0x4835;  // "H5": gather messages, on the file's own communicator

// One rank's block, as every rank sees it after the gather.
struct Block {
  std::array<int, 4> global, local, origin;
  int has_data;  // the rank passes field data
  std::int64_t volume() const { return std::int64_t(local[0]) * local[1] * local[2] * local[3]; }
  bool holds_t(int t) const { return origin[3] <= t && t < origin[3] + local[3]; }
};

std::vector<Block> gather_blocks(Communicator& comm, const BlockLayout& b, bool has_data) {
  constexpr int kInts = 13;
  int mine[kInts];
  for (int mu = 0; mu < 4; ++mu) {
    mine[mu] = b.global[mu];
    mine[4 + mu] = b.local[mu];
    mine[8 + mu] = b.origin[mu];
  }
  mine[12] = has_data ? 1 : 0;
  const std::vector<int> all = all_gather(comm, mine, kInts);
  std::vector<Block> out(static_cast<std::size_t>(comm.size()));
  for (std::size_t r = 0; r < out.size(); ++r) {
    const int* p = all.data() + kInts * r;
    for (int mu = 0; mu < 4; ++mu) {
      out[r].global[mu] = p[mu];
      out[r].local[mu] = p[4 + mu];
      out[r].origin[mu] = p[8 + mu];
    }
    out[r].has_data = p[12];
  }
  return out;
}

std::string show(const std::array<int, 4>& a) {
  return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]) + ", " +
         std::to_string(a[3]) + ")";
}

// In each direction the distinct (origin, extent) intervals tile [0, L); returns the number of grid cells.
std::size_t grid_cells(std::array<std::vector<std::pair<int, int>>, 4>& intervals, const std::array<int, 4>& g,
                       const std::string& head) {
  std::size_t cells = 1;
  for (int mu = 0; mu < 4; ++mu) {
    std::vector<std::pair<int, int>>& iv = intervals[mu];
    std::sort(iv.begin(), iv.end());
    iv.erase(std::unique(iv.begin(), iv.end()), iv.end());
    int next = 0;
    for (const auto& interval : iv) {
      if (interval.first != next)
        throw RuntimeFailure(head + "the blocks do not form a grid that tiles the lattice in direction " +
                             std::to_string(mu));
      next = interval.first + interval.second;
    }
    if (next != g[mu])
      throw RuntimeFailure(head + "the blocks do not cover the lattice in direction " + std::to_string(mu));
    cells *= iv.size();
  }
  return cells;
}

// [Lt][Lz][Ly][Lx] followed by the inner dimensions.
std::vector<hsize_t> field_dims(const std::array<int, 4>& e, const std::vector<std::uint64_t>& inner) {
  std::vector<hsize_t> dims = {hsize_t(e[3]), hsize_t(e[2]), hsize_t(e[1]), hsize_t(e[0])};
  dims.insert(dims.end(), inner.begin(), inner.end());
  return dims;
}

// The hyperslab of one field's block: `start` and `count` of the lattice part, prefixed by the field's index.
void select_block(hid_t space, const FieldShape& f, const std::vector<std::uint64_t>& at, std::vector<hsize_t> start,
                  std::vector<hsize_t> count, const std::string& label, const std::string& what) {
  start.insert(start.begin(), at.begin(), at.end());
  count.insert(count.begin(), f.lead.size(), 1);
  checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), label, what);
}

template <typename T>
void convert(const cplx* src, std::size_t n, std::complex<T>* dst) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::complex<T>(src[i]);
}

// Buffers of the gather, allocated before any message flows.
template <typename T>
struct GatherBuffers {
  std::vector<std::complex<T>> slice;  // rank 0: one global timeslice [Lz][Ly][Lx][per_site]
  std::vector<std::complex<T>> slab;   // other ranks, float only: one local timeslice, converted
};

}  // namespace

struct FieldWriter::State {
  std::vector<Block> blocks;
  int rank = 0;
  GatherBuffers<float> fbuf;
  GatherBuffers<double> dbuf;
  std::string err;  // gather mode: the first failure, thrown by finish()

  const Block& mine() const { return blocks[static_cast<std::size_t>(rank)]; }
  template <typename T>
  GatherBuffers<T>& buffers() {
    if constexpr (std::is_same_v<T, float>) {
      return fbuf;
    } else {
      return dbuf;
    }
  }
  template <typename T>
  void gather(File& file, hid_t dset, const FieldShape& f, const std::vector<std::uint64_t>& at, const cplx* local);
  template <typename T>
  void write_collective(File& file, hid_t dset, const FieldShape& f, const std::vector<std::uint64_t>& at,
                        const cplx* local) const;
};

FieldWriter::FieldWriter(File& file, const BlockLayout& mine, bool has_data) : file_(file), s_(new State) {
  s_->blocks = gather_blocks(file.comm(), mine, has_data);
  s_->rank = file.comm().rank();
}

FieldWriter::~FieldWriter() = default;

const std::array<int, 4>& FieldWriter::global() const { return s_->blocks[0].global; }

bool FieldWriter::has_data() const { return s_->blocks[0].has_data != 0; }

void FieldWriter::check_has_data(const std::string& path) const {
  for (const Block& b : s_->blocks)
    if ((b.has_data != 0) != has_data())
      throw RuntimeFailure("HDF5 output '" + file_.label() + "': cannot write dataset '" + path +
                           "': links are given on some ranks only");
}

void FieldWriter::check_blocks(const std::string& what) const {
  const std::vector<Block>& blocks = s_->blocks;
  const std::string head = "HDF5 output '" + file_.label() + "': cannot write " + what + ": ";
  const std::array<int, 4>& g = blocks[0].global;
  for (int mu = 0; mu < 4; ++mu)
    if (g[mu] <= 0) throw RuntimeFailure(head + "lattice extents must be positive, not " + show(g));
  std::array<std::vector<std::pair<int, int>>, 4> intervals;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    const Block& b = blocks[r];
    const std::string who = "rank " + std::to_string(r) + "'s block";
    if (b.global != g)
      throw RuntimeFailure(head + who + " has global extents " + show(b.global) + ", rank 0's " + show(g));
    for (int mu = 0; mu < 4; ++mu) {
      if (b.local[mu] <= 0 || b.origin[mu] < 0 || b.origin[mu] > g[mu] - b.local[mu])
        throw RuntimeFailure(head + who + " (origin " + show(b.origin) + ", extents " + show(b.local) +
                             ") does not lie in the lattice " + show(g));
      intervals[mu].emplace_back(b.origin[mu], b.local[mu]);
    }
  }
  const std::size_t cells = grid_cells(intervals, g, head);
  std::vector<std::array<int, 4>> origins;
  for (const Block& b : blocks) origins.push_back(b.origin);
  std::sort(origins.begin(), origins.end());
  const bool distinct = std::adjacent_find(origins.begin(), origins.end()) == origins.end();
  if (!distinct || cells != blocks.size())
    throw RuntimeFailure(head + "the " + std::to_string(blocks.size()) + " blocks do not tile the lattice as a grid (" +
                         std::to_string(cells) + " cells)");
  const std::int64_t plane = std::int64_t(g[0]) * g[1] * g[2];
  if (plane > INT_MAX) throw RuntimeFailure(head + "a timeslice of " + std::to_string(plane) + " sites is too large");
}

void FieldWriter::check_size(std::size_t values, const FieldShape& shape) const {
  const Block& mine = s_->mine();
  const std::uint64_t need = static_cast<std::uint64_t>(mine.volume()) * shape.per_site();
  if (values != need)
    throw RuntimeFailure("HDF5 output '" + file_.label() + "': cannot write dataset '" + shape.path + "': it has " +
                         std::to_string(values) + " elements, this rank's block of " + std::to_string(mine.volume()) +
                         " sites needs " + std::to_string(need));
}

void FieldWriter::reserve(const FieldShape& shape) {
  if (file_.mode() != FieldIo::Gather) return;
  const Block& mine = s_->mine();
  const std::array<int, 4>& g = mine.global;
  const std::size_t per_site = shape.per_site();
  auto size = [&](auto& b, bool narrow) {
    if (s_->rank == 0) {
      b.slice.resize(static_cast<std::size_t>(g[0]) * g[1] * g[2] * per_site);
    } else if (narrow) {
      b.slab.resize(static_cast<std::size_t>(mine.local[0]) * mine.local[1] * mine.local[2] * per_site);
    }
  };
  if (shape.single) {
    size(s_->fbuf, true);
  } else {
    size(s_->dbuf, false);
  }
}

Object FieldWriter::create(Object& group, const std::string& name, const FieldShape& shape) const {
  if (!group.valid()) return Object();
  Hid type = complex_file_type(shape.single, file_.label());
  std::vector<std::uint64_t> dims = shape.lead;
  const std::vector<hsize_t> lattice = field_dims(global(), shape.inner);
  dims.insert(dims.end(), lattice.begin(), lattice.end());
  // A dataset of the file's complex type: written through write() below, not as rank 0's values.
  return group.create_field_dataset(name, type.get(), dims);
}

void FieldWriter::write(Object& dataset, const FieldShape& shape, const std::vector<std::uint64_t>& at,
                        const std::complex<double>* data) {
  const hid_t dset = dataset.valid() ? dataset.id() : -1;
  if (file_.mode() == FieldIo::Collective) {
    file_.step([&] {
      if (shape.single) {
        s_->write_collective<float>(file_, dset, shape, at, data);
      } else {
        s_->write_collective<double>(file_, dset, shape, at, data);
      }
    });
  } else if (shape.single) {
    s_->gather<float>(file_, dset, shape, at, data);
  } else {
    s_->gather<double>(file_, dset, shape, at, data);
  }
}

void FieldWriter::check_written() const {
  if (!s_->err.empty()) throw RuntimeFailure(s_->err);
}

// Collective mode: every rank writes its block as a hyperslab of `dset` with one collective H5Dwrite.
template <typename T>
void FieldWriter::State::write_collective(File& file, hid_t dset, const FieldShape& f,
                                          const std::vector<std::uint64_t>& at, const cplx* local) const {
  const std::string& label = file.label();
  const std::string what = "write dataset '" + f.path + "'";
  const Block& b = mine();
  const hsize_t n = static_cast<hsize_t>(b.volume()) * f.per_site();
  std::vector<std::complex<T>> narrow;
  const void* data = local;
  if constexpr (!std::is_same_v<T, double>) {
    narrow.resize(n);
    convert(local, n, narrow.data());
    data = narrow.data();
  }
  std::vector<hsize_t> start = {hsize_t(b.origin[3]), hsize_t(b.origin[2]), hsize_t(b.origin[1]), hsize_t(b.origin[0])};
  std::vector<hsize_t> count = field_dims(b.local, f.inner);
  start.resize(count.size(), 0);
  Hid fspace = checked(H5Dget_space(dset), H5Sclose, label, what);
  select_block(fspace.get(), f, at, start, count, label, what);
  Hid mspace = simple_space({n}, label);
  Hid mem_type = complex_mem_type(std::is_same_v<T, float>, label);
  Hid dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, label, "create a transfer property list");
#if EMPRISM_H5_COLLECTIVE
  checked(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), label, "create a collective transfer property list");
#endif
  test_write_fault(file.comm().rank(), label, what);
  checked(H5Dwrite(dset, mem_type.get(), mspace.get(), fspace.get(), dxpl.get(), data), label, what);
}

// Gather mode: streams one field to rank 0, one global timeslice at a time, and rank 0 writes each timeslice into
// `dset` (valid on rank 0 only). Collective; never throws. Rank 0 keeps receiving after a failure (so no sender
// is left blocked) but writes no more, and keeps its first failure in err.
template <typename T>
void FieldWriter::State::gather(File& file, hid_t dset, const FieldShape& f, const std::vector<std::uint64_t>& at,
                                const cplx* local) {
  const Block& b = mine();
  const std::array<int, 4>& g = b.global;
  const std::size_t per_site = f.per_site();
  const std::size_t local_plane = static_cast<std::size_t>(b.local[0]) * b.local[1] * b.local[2];
  std::vector<LatticeBlock> layout;
  for (const Block& x : blocks) layout.push_back(LatticeBlock{x.global, x.local, x.origin});
  TimesliceGather gather(file.comm(), layout, per_site * sizeof(std::complex<T>), kSlabTag);
  GatherBuffers<T>& buf = buffers<T>();
  if (rank != 0) {
    for (int t = b.origin[3]; t < b.origin[3] + b.local[3]; ++t) {
      const cplx* src = local + static_cast<std::size_t>(t - b.origin[3]) * local_plane * per_site;
      const void* send = src;
      if constexpr (!std::is_same_v<T, double>) {
        convert(src, local_plane * per_site, buf.slab.data());
        send = buf.slab.data();
      }
      gather.send(send);
    }
    return;
  }
  const std::string& label = file.label();
  const std::string what = "write dataset '" + f.path + "'";
  const hsize_t slice_elems = static_cast<hsize_t>(g[0]) * g[1] * g[2] * per_site;
  Hid fspace, mspace, mem_type;
  if (err.empty()) {
    try {
      fspace = checked(H5Dget_space(dset), H5Sclose, label, what);
      mspace = simple_space({slice_elems}, label);
      mem_type = complex_mem_type(std::is_same_v<T, float>, label);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  const std::size_t row = static_cast<std::size_t>(b.local[0]) * per_site;
  for (int t = 0; t < g[3]; ++t) {
    gather.start(t, buf.slice.data());
    if (b.holds_t(t)) {  // rank 0's own rows, converted in place
      const int lt = t - b.origin[3];
      for (int z = 0; z < b.local[2]; ++z)
        for (int y = 0; y < b.local[1]; ++y) {
          const std::size_t src = ((static_cast<std::size_t>(lt) * b.local[2] + z) * b.local[1] + y) * row;
          const std::size_t dst =
              ((static_cast<std::size_t>(b.origin[2] + z) * g[1] + (b.origin[1] + y)) * g[0] + b.origin[0]) * per_site;
          convert(local + src, row, buf.slice.data() + dst);
        }
    }
    gather.finish();
    if (!err.empty()) continue;
    try {
      std::vector<hsize_t> start(4 + f.inner.size(), 0), count = field_dims(g, f.inner);
      start[0] = static_cast<hsize_t>(t);
      count[0] = 1;
      select_block(fspace.get(), f, at, start, count, label, what);
      if (t == 0) test_write_fault(0, label, what);
      checked(H5Dwrite(dset, mem_type.get(), mspace.get(), fspace.get(), H5P_DEFAULT, buf.slice.data()), label, what);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
}

}  // namespace emprism::io::h5
