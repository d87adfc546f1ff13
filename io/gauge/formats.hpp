// formats.hpp: INTERNAL header of the gauge-file readers and writers (io/gauge/*.cpp); callers outside io/
// use io/gauge/gauge_file.hpp. It declares
//   - the per-format entry points that io/gauge/gauge_file.cpp dispatches to (read_*, inspect_*, write_*,
//   looks_like_*);
//   - helpers shared by the formats (namespace io::detail), implemented in io/gauge/gauge_file.cpp:
//       byte order (host_is_little_endian, byte_swap, load/store of words in a given byte order), CRC32 (zlib),
//       link encoding/decoding (3x3 or two rows, 32/64 bit, either byte order),
//       the NERSC and SciDAC checksums of a block of site records,
//       errors that all ranks agree on (agree_on_error, collective_step),
//       this rank's rows of sites (block_rows) and reading/writing a block of fixed-size site records stored in
//       global lexicographic order (read_site_block, write_site_block_file),
//       the final checks of a read field (finish_read: SU(3)-ness, halo, plaquette, link trace vs header).
// Convention: docs/conventions.md s. 1, 2; global lexicographic site index, x fastest, t slowest; per site mu = x..t.
// Who may call: io/gauge/*.cpp only. Functions taking a Communicator are COLLECTIVE over it and throw the same
// InputError on every rank; the others are local.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"

namespace emprism::io {

// ---- per-format entry points (one file each: lime.cpp, nersc.cpp, openqcd.cpp, milc.cpp); the DeviceGauge forms
// read the block with its halo straight to the device (read_halo_slices: no host copy of the block)
GaugeFileInfo read_lime(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm);
GaugeFileInfo read_lime(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm);
GaugeFileInfo inspect_lime(const std::string& path);
void write_lime(const std::string& path, const HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                int precision_bits);
bool looks_like_lime(const std::string& path);

GaugeFileInfo read_nersc(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm);
GaugeFileInfo read_nersc(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm);
GaugeFileInfo inspect_nersc(const std::string& path);
// two_rows: DATATYPE 4D_SU3_GAUGE (rows 0 and 1 stored) instead of 4D_SU3_GAUGE_3x3.
void write_nersc(const std::string& path, const HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                 int precision_bits, bool two_rows = false);
bool looks_like_nersc(const std::string& path);

GaugeFileInfo read_openqcd(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm);
GaugeFileInfo read_openqcd(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm);
GaugeFileInfo inspect_openqcd(const std::string& path);
GaugeFileInfo read_milc(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm);
GaugeFileInfo read_milc(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm);
GaugeFileInfo inspect_milc(const std::string& path);
bool looks_like_openqcd(const std::string& path);  // used by detect_gauge_format
bool looks_like_milc(const std::string& path);

// The shared helpers live in io::detail so that the formats' own file-local helpers (anonymous namespaces in
// emprism::io) never clash with them; a format file opts in with `using namespace detail;` or qualifies.
namespace detail {

// ---- byte order
bool host_is_little_endian();
// Reverses the bytes of each of `count` words of `word_size` bytes (2, 4 or 8) in place.
void byte_swap(void* data, std::size_t count, std::size_t word_size);
// Words stored in the given byte order at p.
std::uint32_t load_u32(const unsigned char* p, bool big_endian);
std::uint64_t load_u64(const unsigned char* p, bool big_endian);
void store_u32(unsigned char* p, std::uint32_t v, bool big_endian);
void store_u64(unsigned char* p, std::uint64_t v, bool big_endian);
double load_real(const unsigned char* p, int precision_bits, bool big_endian);
void store_real(unsigned char* p, double v, int precision_bits, bool big_endian);

// ---- checksums
// zlib's crc32 of n bytes (initial value 0), as used by SciDAC/QIO.
std::uint32_t crc32_bytes(const void* data, std::size_t n);
std::uint32_t rotl32(std::uint32_t v, unsigned r);  // r in [0, 32)
struct ScidacChecksum {
  std::uint32_t suma = 0, sumb = 0;
};
// Accumulates one site record: crc = crc32(record); suma ^= rotl(crc, site % 29); sumb ^= rotl(crc, site % 31),
// with `site` the global lexicographic index.
void scidac_accumulate(ScidacChecksum& sum, std::int64_t site, const unsigned char* record, std::size_t bytes);
// Combines the ranks' partial sums (XOR; collective).
ScidacChecksum scidac_allreduce(const ScidacChecksum& local, Communicator& comm);
// NERSC: the wrapped 32-bit sum of the data's 32-bit words read in the data's byte order (for 64-bit reals this is
// the sum of both halves of each double). `bytes` must be a multiple of 4. Partial, then summed over ranks.
std::uint32_t nersc_checksum_words(const unsigned char* data, std::size_t bytes, bool big_endian);
std::uint32_t nersc_checksum_allreduce(std::uint32_t local, Communicator& comm);

// ---- links
// Reals per link for `rows` stored rows (2 or 3): 6 * rows.
inline int reals_per_link(int rows) { return 6 * rows; }
// Decodes one link stored row-major (rows x 3 complex, re/im) from p; rows = 2: row 2 = conj(row0 x row1).
SU3<double> decode_link(const unsigned char* p, int rows, int precision_bits, bool big_endian);
void encode_link(unsigned char* p, const SU3<double>& u, int rows, int precision_bits, bool big_endian);
// The third row of an SU(3) matrix from the first two.
void reconstruct_third_row(SU3<double>& u);

// ---- errors that every rank agrees on
// Collective: if any rank passes a non-empty message, every rank throws InputError with the message of the
// lowest such rank (sent by MPI_Bcast). Otherwise returns on every rank.
void agree_on_error(Communicator& comm, const std::string& message);
// Runs f() on this rank, catching InputError / RuntimeFailure / std::exception (message prefixed with
// "<path>: " unless it already starts with it), then agree_on_error.
template <typename F>
void collective_step(Communicator& comm, const std::string& path, F&& f) {
  std::string message;
  try {
    f();
  } catch (const std::exception& e) {
    message = e.what();
    if (message.rfind(path + ":", 0) != 0) message = path + ": " + message;
  }
  agree_on_error(comm, message);
}
// Broadcasts a trivially copyable value from root (collective).
void bcast_bytes(Communicator& comm, void* data, std::size_t bytes, int root = 0);
template <typename T>
void bcast_pod(Communicator& comm, T& value, int root = 0) {
  bcast_bytes(comm, &value, sizeof(T), root);
}

// ---- this rank's block in a file of site records in global lexicographic order
// One contiguous run of sites along x: `length` sites from global site `global_site`, which is local site
// (0, y, z, t) = `local` of the block, at local lexicographic index `local_lex`. Rows come in ascending global
// order; in the local lexicographic order they are contiguous too (row r holds local sites r*Lx .. r*Lx + Lx - 1).
struct BlockRow {
  std::int64_t global_site = 0;
  std::int64_t local_lex = 0;
  int local[4] = {0, 0, 0, 0};
  int length = 0;
};
std::vector<BlockRow> block_rows(const Geometry& g);
// File size in bytes (throws InputError "<path>: cannot open ...").
std::int64_t file_size(const std::string& path);
std::string errno_text();  // strerror(errno)
// Closes a POSIX file descriptor on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};
// Runs of sites contiguous both in the file and in the local block (whole rows merge where x, then y, ... are not
// split), at most about 64 MiB each: one pread/pwrite per run (read_site_block's and write_site_block_file's).
struct Run {
  std::int64_t global_site = 0, local_lex = 0, length = 0;
};
std::vector<Run> contiguous_runs(const Geometry& g, std::size_t site_bytes);
// Reads this rank's site records (site_bytes each, the global lattice's records stored from data_offset on in
// global lexicographic order) with pread, one run of contiguous rows at a time (rows merge where x, then y, ...
// are not split; at most ~64 MiB per pread); returns them in local lexicographic order.
// Collective (errors agreed): InputError "<path>: cannot open ..." / "<path>: truncated ...".
std::vector<unsigned char> read_site_block(const std::string& path, std::int64_t data_offset, std::size_t site_bytes,
                                           const Geometry& g, Communicator& comm);
// Writes a file: head (rank 0's bytes, at offset 0), then the global lattice's site records (each rank its block,
// given in local lexicographic order), then tail (rank 0's). Written to "<path>.tmp", renamed to path when all
// ranks are done; removed on failure. Collective; errors agreed.
void write_site_block_file(const std::string& path, const std::string& head, const std::string& tail,
                           const std::vector<unsigned char>& block, std::size_t site_bytes, const Geometry& g,
                           Communicator& comm);

// ---- final checks of a field read from a file
// Header values with the resolution they were printed with (e.g. 1e-10 for "0.0382422893"; 0 if unknown).
struct HeaderValue {
  double value = 0;
  double resolution = 0;
};
// The place value of the last digit of a printed decimal number ("0.0382422893" -> 1e-10, "1.5e-3" -> 1e-4).
double printed_resolution(const std::string& text);
// Collective. Checks that every link of the local block is in SU(3) (the message names the first bad link,
// global coordinates and direction), fills the halo (u.fill_halo(grid)), computes the plaquette and link trace
// into info, and compares them with the header values where given (tolerance max(1e-5 for 32 bit / 1e-8 for
// 64 bit, printed resolution)). Also sets info.header_plaquette / header_link_trace. Errors: agreed InputError.
void finish_read(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                 GaugeFileInfo& info, const std::optional<HeaderValue>& header_plaquette = std::nullopt,
                 const std::optional<HeaderValue>& header_link_trace = std::nullopt);
// The message of a link (local lexicographic site lex, direction mu) that is not in SU(3) (deviation dev).
std::string non_su3_message(const std::string& path, const Geometry& g, std::int64_t lex, int mu, double dev,
                            int precision_bits);
// finish_read's last step: info.header_* set, the plaquette and link trace in info compared with the header values
// where given; the agreed InputError on a mismatch. Collective.
void compare_with_header(const std::string& path, Communicator& comm, GaugeFileInfo& info,
                         const std::optional<HeaderValue>& header_plaquette,
                         const std::optional<HeaderValue>& header_link_trace);
// The plaquette of u computed on a copy whose halo is filled (u's own halo need not be current), for writers'
// headers. Collective over comm (and grid).
double plaquette_of(const HostGauge& u, const ProcessGrid* grid, Communicator& comm);
// "<path>: lattice extents 4x4x4x8 in the file differ from the lattice's 8x8x8x16" unless equal ("" then).
std::string extents_mismatch(const std::string& path, const std::array<int, 4>& file,
                             const std::array<int, 4>& lattice);
std::string extents_string(const std::array<int, 4>& e);  // "4x4x4x8"
// ---- this rank's block with its one-site halo, read timeslice by timeslice to the device (device_read.cpp)
// The records of halo-box timeslice t (local t = -1 .. l3; the sites -1 <= x[k] <= l[k], k < 3, x fastest, as in
// Geometry::halo_box()): each the record of the site at global coordinates origin + x wrapped periodically, so the
// halo holds what the neighbours hold and needs no exchange. Only one slice of records is in host memory at a time.
class HaloSliceRecords {
 public:
  std::size_t sites() const { return global_.size(); }
  const unsigned char* record(std::size_t i) const { return record_[i]; }
  std::int64_t global_site(std::size_t i) const { return global_[i]; }  // global lexicographic index
  bool interior(std::size_t i) const { return interior_[i] != 0; }      // a site of the block, not of the halo
  std::size_t host_bytes() const { return raw_.size() + sites() * (sizeof(void*) + sizeof(std::int64_t) + 1); }

 private:
  friend class HaloSliceReader;
  std::vector<unsigned char> raw_;
  std::vector<const unsigned char*> record_;
  std::vector<std::int64_t> global_;
  std::vector<unsigned char> interior_;
};
// Reads fixed-size site records stored in global lexicographic order from data_offset on (ILDG, NERSC, MILC) slice
// by slice: fn(t, records) for t = -1 .. l3 (fn must not call collectives). The errors of read_site_block (cannot
// open, truncated, read error: the same messages), agreed on every rank. Returns the most host bytes held for the
// records at once. Collective.
std::size_t read_halo_slices(const std::string& path, std::int64_t data_offset, std::size_t site_bytes,
                             const Geometry& g, Communicator& comm,
                             const std::function<void(int, const HaloSliceRecords&)>& fn);
// The decoded links of one halo-box timeslice (4 per site, mu = 0..3) on their way to u: pinned host staging,
// uploaded by upload(t); on the CPU backend the slice of u itself (nothing copied).
class SliceStage {
 public:
  explicit SliceStage(DeviceGauge& u);
  ~SliceStage();
  SliceStage(const SliceStage&) = delete;
  SliceStage& operator=(const SliceStage&) = delete;
  SU3<double>* links(int t);  // where slice t's links go
  void upload(int t);         // slice t's links to u (after links(t) was filled)
  std::size_t host_bytes() const { return stage_ ? bytes_ : 0; }

 private:
  DeviceGauge& u_;
  std::size_t slice_links_ = 0, bytes_ = 0;
  SU3<double>* stage_ = nullptr;
};
// Decodes every site of a slice into stage.links(t) (decode(record, mu) -> SU3<double>, in parallel) and uploads it.
template <typename Decode>
void decode_slice(int t, const HaloSliceRecords& rec, SliceStage& stage, Decode&& decode);
// finish_read for a field read to the device: every link of the block in SU(3) (checked on the device: the message
// of the host's check), the plaquette and link trace computed on the device (metrics rows "setup_gauge_check",
// "setup_gauge_observables"), compared with the header values where given. u's halo was read with the block.
// Collective; errors agreed.
void finish_read_device(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm,
                        GaugeFileInfo& info, const std::optional<HeaderValue>& header_plaquette = std::nullopt,
                        const std::optional<HeaderValue>& header_link_trace = std::nullopt);

// Reads the file's extents for inspect_*: a single-rank geometry and a gauge of them, read with read(), on
// MPI_COMM_SELF. read(path, u, grid, comm) is the format's reader.
template <typename Read>
GaugeFileInfo inspect_with(const std::string& path, const std::array<int, 4>& extents, Read&& read);

// ---- template definitions

template <typename Decode>
void decode_slice(int t, const HaloSliceRecords& rec, SliceStage& stage, Decode&& decode) {
  SU3<double>* out = stage.links(t);
  const std::int64_t n = static_cast<std::int64_t>(rec.sites());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    for (int mu = 0; mu < 4; ++mu) out[i * 4 + mu] = decode(rec.record(static_cast<std::size_t>(i)), mu);
  stage.upload(t);
}

template <typename Read>
GaugeFileInfo inspect_with(const std::string& path, const std::array<int, 4>& extents, Read&& read) {
  for (int mu = 0; mu < 4; ++mu)
    if (extents[mu] < 2 || extents[mu] % 2 != 0)
      throw InputError(path + ": lattice extents " + extents_string(extents) +
                       " cannot be inspected (every extent must be even and >= 2)");
  const Geometry g = Geometry::single_rank(extents);
  HostGauge u(g);
  Communicator self(MPI_COMM_SELF);
  return read(path, u, nullptr, self);
}

}  // namespace detail
}  // namespace emprism::io
