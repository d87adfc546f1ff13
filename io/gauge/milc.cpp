// milc.cpp: reader for MILC version-5 binary gauge configurations (MILC's generic/io_lat4.c, io_lat_utils.c
// and include/io_lat.h; files of save_serial, natural site order).
//   read_milc        distributed read of this rank's block of links, with all checks (collective over comm)
//   inspect_milc     the whole file on the calling process alone (MPI_COMM_SELF), for gauge-info
//   looks_like_milc  the magic number 20103 in either byte order
// File layout (the byte order of the writing machine; the magic number decides it):
//   int32 magic = 20103, int32 nx ny nz nt, char time_stamp[64], int32 order (0: natural order),
//   uint32 sum29, uint32 sum31                                      (96 bytes in all)
//   then per site, x fastest .. t slowest, the 4 links U_x, U_y, U_z, U_t, each 3x3 complex {re, im} row-major,
//   single precision (MILC's default) or double; the precision follows from the file size.
// Checksums: the link data as a sequence of 32-bit words v(i), i = 0..N-1 in file order, each read in the file's
// byte order; sum29 = XOR_i rotl(v(i), i mod 29), sum31 = XOR_i rotl(v(i), i mod 31) (as MILC's r_serial; for
// 64-bit data each double counts as its two 32-bit words in file order). XOR of rotations is order-free, so every rank
// sums its own sites (word index i = site * words_per_site + k) and the partial sums are combined by an MPI_BXOR
// reduction. Convention: MILC's link[dir] at x is U_dir(x) linking x to x + dir with dir = x, y, z, t, the same as ours
// (docs/conventions.md section 2). Single-precision links are widened to double as stored (not re-unitarised).
// Distributed read: each rank preads only its own rows (runs of Lx_local sites along x; detail::read_site_block).
// Checks: magic, order (only 0), extents against u's global extents, file size, checksums, every link in SU(3)
// (1e-5 for 32-bit data, 1e-10 for 64-bit). Every failure: InputError "<path>: <what>", thrown identically on
// every rank (lowest failing rank's message).
// Who may call: read_milc is collective over comm (grid: the process grid u's geometry came from, nullptr for
// one process holding the whole lattice); inspect_milc and looks_like_milc are local.
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "io/gauge/formats.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"

namespace emprism::io {

namespace {

constexpr std::int32_t kMagic = 20103;
constexpr std::int64_t kHeaderBytes = 4 + 16 + 64 + 4 + 8;  // magic, dims, time stamp, order, sum29, sum31

using detail::load_u32;

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%x", v);
  return b;
}

// Reads up to n bytes at offset; returns the count read (short at the end of the file). Throws InputError
// "<path>: cannot open ..." / "<path>: read error ...".
std::int64_t read_at(const std::string& path, std::int64_t offset, void* buf, std::int64_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  char* p = static_cast<char*>(buf);
  std::int64_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, p + done, static_cast<std::size_t>(n - done), static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(path + ": read error (" + std::strerror(err) + ")");
    }
    if (r == 0) break;
    done += r;
  }
  ::close(fd);
  return done;
}

struct Header {
  bool big = false;           // file byte order
  std::array<int, 4> dims{};  // (nx, ny, nz, nt)
  std::int32_t order = 0;
  std::uint32_t sum29 = 0, sum31 = 0;
  int precision_bits = 0;  // from the file size
};

// The byte order in which the first 4 bytes are 20103; nullopt if in neither.
std::optional<bool> magic_byte_order(const unsigned char* m) {
  if (load_u32(m, false) == std::uint32_t(kMagic)) return false;
  if (load_u32(m, true) == std::uint32_t(kMagic)) return true;
  return std::nullopt;
}

// Reads and validates the header and infers the precision from the file size; global: u's extents, if known.
Header read_header(const std::string& path, const std::array<int, 4>* global) {
  const std::int64_t size = detail::file_size(path);
  unsigned char h[kHeaderBytes] = {};
  const std::int64_t got = read_at(path, 0, h, kHeaderBytes);
  const std::optional<bool> big = got >= 4 ? magic_byte_order(h) : std::nullopt;
  if (!big)
    throw InputError(path + ": bad magic number" + (got >= 4 ? " 0x" + hex(load_u32(h, false)) : std::string()) +
                     " (a MILC version-5 gauge file starts with 20103 = 0x" + hex(kMagic) + " in either byte order)");
  if (got < kHeaderBytes)
    throw InputError(path + ": truncated file (" + std::to_string(size) + " bytes, shorter than the " +
                     std::to_string(kHeaderBytes) + "-byte MILC header)");
  Header hd;
  hd.big = *big;
  for (int i = 0; i < 4; ++i) hd.dims[i] = static_cast<std::int32_t>(load_u32(h + 4 + 4 * i, hd.big));
  hd.order = static_cast<std::int32_t>(load_u32(h + 84, hd.big));
  hd.sum29 = load_u32(h + 88, hd.big);
  hd.sum31 = load_u32(h + 92, hd.big);
  for (int i = 0; i < 4; ++i)
    if (hd.dims[i] < 1 || hd.dims[i] > (1 << 20))
      throw InputError(path + ": bad lattice dimensions " + detail::extents_string(hd.dims) + " in the MILC header");
  if (global && hd.dims != *global) throw InputError(detail::extents_mismatch(path, hd.dims, *global));
  if (hd.order != 0)
    throw InputError(path + ": site order " + std::to_string(hd.order) +
                     " (node-dump order with a site list) is not supported; only natural order (0) is");
  // Before any 64-bit product (dimensions up to 2^20 each): the file cannot hold more sites than its bytes.
  if (double(hd.dims[0]) * hd.dims[1] * hd.dims[2] * hd.dims[3] * 4 * 18 * 4 > double(size))
    throw InputError(path + ": truncated: the file's " + std::to_string(size) + " bytes are too few for " +
                     detail::extents_string(hd.dims) + " sites");
  const std::int64_t vol = std::int64_t(hd.dims[0]) * hd.dims[1] * hd.dims[2] * hd.dims[3];
  const std::int64_t single = kHeaderBytes + vol * 4 * 18 * 4, dbl = kHeaderBytes + vol * 4 * 18 * 8;
  if (size == single)
    hd.precision_bits = 32;
  else if (size == dbl)
    hd.precision_bits = 64;
  else if (size < single)
    throw InputError(path + ": truncated file (" + std::to_string(size) + " bytes, expected " + std::to_string(single) +
                     " for single or " + std::to_string(dbl) + " for double precision with extents " +
                     detail::extents_string(hd.dims) + ")");
  else
    throw InputError(path + ": file size " + std::to_string(size) + " bytes matches neither single (" +
                     std::to_string(single) + ") nor double (" + std::to_string(dbl) + ") precision for extents " +
                     detail::extents_string(hd.dims));
  return hd;
}

// Adds the checksum terms of one site record p (global lexicographic site `site`) to sum29, sum31.
void site_checksums(const unsigned char* p, std::int64_t site, std::int64_t site_bytes, bool big, std::uint32_t& sum29,
                    std::uint32_t& sum31) {
  const std::int64_t words_per_site = site_bytes / 4;
  const std::int64_t w0 = site * words_per_site;  // index of the site's first word in the file's data
  unsigned r29 = static_cast<unsigned>(w0 % 29), r31 = static_cast<unsigned>(w0 % 31);
  for (std::int64_t k = 0; k < words_per_site; ++k) {
    const std::uint32_t v = load_u32(p + 4 * k, big);
    sum29 ^= detail::rotl32(v, r29);
    sum31 ^= detail::rotl32(v, r31);
    if (++r29 == 29) r29 = 0;
    if (++r31 == 31) r31 = 0;
  }
}

// Partial checksums of this rank's site records (given in local lexicographic order).
void accumulate_checksums(const std::vector<unsigned char>& block, std::int64_t site_bytes, const Geometry& g, bool big,
                          std::uint32_t& sum29, std::uint32_t& sum31) {
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    site_checksums(block.data() + lex * site_bytes, g.global_lex(x), site_bytes, big, sum29, sum31);
  }
}

std::string checksum_mismatch(const std::string& path, const Header& hd, const std::uint32_t* sums) {
  return path + ": checksum mismatch: the header states sum29 = " + hex(hd.sum29) + ", sum31 = " + hex(hd.sum31) +
         ", the data give sum29 = " + hex(sums[0]) + ", sum31 = " + hex(sums[1]);
}

}  // namespace

bool looks_like_milc(const std::string& path) {
  try {
    unsigned char h[kHeaderBytes];
    return read_at(path, 0, h, kHeaderBytes) == kHeaderBytes && magic_byte_order(h).has_value();
  } catch (const std::exception&) {
    return false;
  }
}

GaugeFileInfo read_milc(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
  const Geometry& g = u.geometry();
  Header hd;
  detail::collective_step(comm, path, [&] {
    if (grid == nullptr && g.local() != g.global())
      throw RuntimeFailure("read_milc without a process grid needs the whole lattice on the rank");
    hd = read_header(path, &g.global());
  });
  const std::int64_t site_bytes = 4 * 18 * hd.precision_bits / 8;
  // This rank's rows (pread, one row of Lx_local sites at a time), in local lexicographic order.
  const std::vector<unsigned char> block =
      detail::read_site_block(path, kHeaderBytes, static_cast<std::size_t>(site_bytes), g, comm);

  // Checksums before decoding: a corrupted byte shows as a checksum error rather than as a non-SU(3) link.
  std::uint32_t sums[2] = {0, 0};
  accumulate_checksums(block, site_bytes, g, hd.big, sums[0], sums[1]);
  if (grid) reduce_xor(comm, sums, 2);
  if (sums[0] != hd.sum29 || sums[1] != hd.sum31)  // the same values on every rank
    throw InputError(checksum_mismatch(path, hd, sums));

  const std::int64_t link_bytes = site_bytes / 4;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      u.at(x, mu) =
          detail::decode_link(block.data() + lex * site_bytes + mu * link_bytes, 3, hd.precision_bits, hd.big);
  }

  GaugeFileInfo info;
  info.format = "milc";
  info.extents = hd.dims;
  info.precision_bits = hd.precision_bits;
  info.checksum = "ok";
  detail::finish_read(path, u, grid, comm, info);  // SU(3)-ness, halo, plaquette, link trace
  return info;
}

GaugeFileInfo read_milc(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm) {
  const Geometry& g = u.geometry();
  Header hd;
  detail::collective_step(comm, path, [&] { hd = read_header(path, &g.global()); });
  const std::int64_t site_bytes = 4 * 18 * hd.precision_bits / 8, link_bytes = site_bytes / 4;
  const auto t0 = std::chrono::steady_clock::now();
  std::uint32_t sums[2] = {0, 0};
  detail::SliceStage stage(u);
  const std::size_t held = detail::read_halo_slices(
      path, kHeaderBytes, static_cast<std::size_t>(site_bytes), g, comm,
      [&](int t, const detail::HaloSliceRecords& rec) {
        std::uint32_t a = 0, b = 0;
        const std::int64_t n = static_cast<std::int64_t>(rec.sites());
#pragma omp parallel for schedule(static) reduction(^ : a, b)
        for (std::int64_t i = 0; i < n; ++i)
          if (rec.interior(static_cast<std::size_t>(i)))
            site_checksums(rec.record(static_cast<std::size_t>(i)), rec.global_site(static_cast<std::size_t>(i)),
                           site_bytes, hd.big, a, b);
        sums[0] ^= a;
        sums[1] ^= b;
        detail::decode_slice(t, rec, stage, [&](const unsigned char* site, int mu) {
          return detail::decode_link(site + mu * link_bytes, 3, hd.precision_bits, hd.big);
        });
      });
  metrics.record("setup_gauge_read", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0,
                 static_cast<double>(g.local_volume()) * (site_bytes + 4 * sizeof(SU3<double>)));
  reduce_xor(comm, sums, 2);
  if (sums[0] != hd.sum29 || sums[1] != hd.sum31)  // the same values on every rank
    throw InputError(checksum_mismatch(path, hd, sums));

  GaugeFileInfo info;
  info.format = "milc";
  info.extents = hd.dims;
  info.precision_bits = hd.precision_bits;
  info.checksum = "ok";
  info.staging_bytes = held + stage.host_bytes();
  detail::finish_read_device(path, u, metrics, comm, info);  // SU(3)-ness, plaquette, link trace
  return info;
}

GaugeFileInfo inspect_milc(const std::string& path) {
  const Header hd = read_header(path, nullptr);
  return detail::inspect_with(path, hd.dims,
                              [](const std::string& p, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
                                return read_milc(p, u, grid, comm);
                              });
}

}  // namespace emprism::io
