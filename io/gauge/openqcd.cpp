// openqcd.cpp: reader for openQCD gauge configurations (the "universal" format of export_cnfg() in
// openQCD's modules/archive/archive.c and main/README.io).
//   read_openqcd        distributed read of this rank's block of links, with all checks (collective over comm)
//   inspect_openqcd     the whole file on the calling process alone (MPI_COMM_SELF), for gauge-info
//   looks_like_openqcd  cheap test used by format detection (header extents consistent with the file size)
// File layout (little-endian, independent of the writing machine):
//   int32 N0 N1 N2 N3            openQCD's extents; openQCD's direction 0 is TIME, 1..3 are x, y, z
//   double plaq                  sum over all plaquettes of Re tr U_p divided by 6 N0 N1 N2 N3 (3 for U = 1,
//                                i.e. 3 x our plaquette of docs/conventions.md section 7)
//   then, for the ODD points only, in the order of ix = x3 + N3 (x2 + N2 (x1 + N1 x0)) (time slowest, z
//   fastest), 8 links: U(x, 0), U(x - 0, 0), U(x, 1), U(x - 1, 1), ..., U(x, 3), U(x - 3, 3), each a 3x3 complex
//   double matrix, row-major, {re, im}. U(y, mu) links y to y + mu, as our U_mu(y). The odd point of index k is
//   the odd one of the two sites ix = 2k, 2k + 1 (N3 is even), so every link appears exactly once.
// Convention: openQCD direction 0 -> our mu = 3 (t), 1 -> 0 (x), 2 -> 1 (y), 3 -> 2 (z); our global extents
// (Lx, Ly, Lz, Lt) = (N1, N2, N3, N0); parity (x0 + x1 + x2 + x3) mod 2 is the same in both.
// Distributed read: a rank needs U_mu(x) for each site x of its block; for odd x it is the forward link stored at
// x, for even x the backward link stored at the odd point x + mu, which for x on the forward face lies in the
// next rank's block. So each rank reads (pread of contiguous runs along x3) the odd points of its block AND the
// odd points of its four forward face slabs (x_mu = origin_mu + L_mu, the other coordinates in the block; none in
// a direction that is not split), and keeps from every record read exactly the links whose lower end lies in its
// block. No rank ever holds more than its block plus these faces.
// Read to the device (read_openqcd's DeviceGauge form): slice by slice of the halo box, the records that hold the
// slice's links (U_mu(y) is slot 2 oq of odd y's record, or slot 2 oq + 1 of the odd y + mu's), decoded into pinned
// staging and uploaded; the host holds one slice of records.
// Checks: extents against u's global extents, file size, every link in SU(3) (1e-10), header plaquette against
// 3 x the computed one (|diff| <= 1e-10 max(1, |plaq|)). Every failure: InputError "<path>: <what>", thrown
// identically on every rank (lowest failing rank's message).
// Who may call: read_openqcd is collective over comm (grid: the process grid u's geometry came from, nullptr for
// one process holding the whole lattice); inspect_openqcd and looks_like_openqcd are local.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/gauge/formats.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"

namespace emprism::io {

namespace {

constexpr std::int64_t kHeaderBytes = 4 * 4 + 8;
constexpr std::int64_t kLinkBytes = 18 * 8;
constexpr std::int64_t kRecordBytes = 8 * kLinkBytes;  // the 8 links of one odd point
constexpr std::int64_t kChunkRecords = 8192;           // records per pread (9 MiB)
constexpr double kPlaquetteTolerance = 1e-10;

// openQCD direction -> ours.
constexpr int our_mu(int oq) { return oq == 0 ? 3 : oq - 1; }

std::string fmt_double(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// The open file, closed on scope exit; reads fail with InputError "<path>: ...".
class InFile {
 public:
  explicit InFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY);
    if (fd_ < 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st;
    if (::fstat(fd_, &st) != 0) throw InputError(path + ": cannot stat (" + std::strerror(errno) + ")");
    size_ = static_cast<std::int64_t>(st.st_size);
  }
  ~InFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  InFile(const InFile&) = delete;
  InFile& operator=(const InFile&) = delete;
  std::int64_t size() const { return size_; }
  void read_at(std::int64_t offset, void* buf, std::int64_t n) const {
    char* p = static_cast<char*>(buf);
    while (n > 0) {
      const ssize_t r = ::pread(fd_, p, static_cast<std::size_t>(n), static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(path_ + ": read error (" + std::strerror(errno) + ")");
      if (r == 0)
        throw InputError(path_ + ": truncated file (unexpected end of file at byte " + std::to_string(offset) + ")");
      p += r;
      offset += r;
      n -= r;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

struct Header {
  std::array<int, 4> n{};  // openQCD's N0..N3 (N0 = time)
  double plaq = 0;         // openQCD normalisation (3 for U = 1)
};

Header read_header(const InFile& f, const std::string& path) {
  if (f.size() < kHeaderBytes)
    throw InputError(path + ": truncated file (" + std::to_string(f.size()) + " bytes, shorter than the " +
                     std::to_string(kHeaderBytes) + "-byte openQCD header)");
  unsigned char h[kHeaderBytes];
  f.read_at(0, h, kHeaderBytes);
  Header hd;
  for (int i = 0; i < 4; ++i) hd.n[i] = static_cast<std::int32_t>(detail::load_u32(h + 4 * i, false));
  hd.plaq = detail::load_real(h + 16, 64, false);
  return hd;
}

// (Lx, Ly, Lz, Lt) of openQCD's (N0, N1, N2, N3).
std::array<int, 4> our_extents(const std::array<int, 4>& n) { return {n[1], n[2], n[3], n[0]}; }

std::string extents_str(const std::array<int, 4>& e) {
  return "[" + std::to_string(e[0]) + ", " + std::to_string(e[1]) + ", " + std::to_string(e[2]) + ", " +
         std::to_string(e[3]) + "]";
}

std::int64_t expected_size(const std::array<int, 4>& n) {
  const std::int64_t vol = std::int64_t(n[0]) * n[1] * n[2] * n[3];
  return kHeaderBytes + vol / 2 * kRecordBytes;
}

// Validates the header against the file size and (if given) the expected global extents (ours).
void check_header(const Header& hd, std::int64_t file_size, const std::string& path, const std::array<int, 4>* global) {
  for (int i = 0; i < 4; ++i)
    if (hd.n[i] < 2 || hd.n[i] % 2 != 0 || hd.n[i] > (1 << 20))
      throw InputError(path + ": not an openQCD configuration (header extents N0..N3 = " + extents_str(hd.n) +
                       " are not even positive lattice sizes)");
  const std::array<int, 4> ext = our_extents(hd.n);
  if (global && ext != *global) throw InputError(detail::extents_mismatch(path, ext, *global));
  // Before any 64-bit product (extents up to 2^20 each): the file cannot hold more sites than its bytes.
  if (double(hd.n[0]) * hd.n[1] * hd.n[2] * hd.n[3] / 2 * kRecordBytes > double(file_size))
    throw InputError(path + ": truncated file (" + std::to_string(file_size) + " bytes, too few for extents " +
                     extents_str(ext) + ")");
  const std::int64_t want = expected_size(hd.n);
  if (file_size < want)
    throw InputError(path + ": truncated file (" + std::to_string(file_size) + " bytes, expected " +
                     std::to_string(want) + " for extents " + extents_str(ext) + ")");
  if (file_size > want)
    throw InputError(path + ": file size " + std::to_string(file_size) + " bytes exceeds the " + std::to_string(want) +
                     " bytes of an openQCD configuration with extents " + extents_str(ext));
  if (!std::isfinite(hd.plaq)) throw InputError(path + ": header plaquette is not a finite number");
}

// Ranges [first, last) of record indices, sorted and merged.
using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

void merge_ranges(Ranges& r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& q : r) {
    if (!out.empty() && q.first <= out.back().second)
      out.back().second = std::max(out.back().second, q.second);
    else
      out.push_back(q);
  }
  r.swap(out);
}

// The records this rank reads: the odd points of the box [lo, lo + len) (global coordinates, ours; wrapped
// periodically in every direction but x3 = z, which never wraps here since lo_z + len_z <= Lz).
void add_box(const std::array<int, 4>& n, const std::array<int, 4>& lo, const std::array<int, 4>& len, Ranges& ranges) {
  // ours (x, y, z, t) -> openQCD (x1, x2, x3, x0)
  for (int dt = 0; dt < len[3]; ++dt)
    for (int dx = 0; dx < len[0]; ++dx)
      for (int dy = 0; dy < len[1]; ++dy) {
        const std::int64_t t = (lo[3] + dt) % n[0], x = (lo[0] + dx) % n[1], y = (lo[1] + dy) % n[2];
        const std::int64_t base = ((t * n[1] + x) * n[2] + y) * n[3];
        const std::int64_t z0 = lo[2], z1 = lo[2] + len[2];  // both even, z1 <= N3, base even
        ranges.emplace_back((base + z0) / 2, (base + z1) / 2);
      }
}

// Reads this rank's links into u (local block only; halo untouched).
void read_block(const InFile& f, const Header& hd, HostGauge& u) {
  const Geometry& g = u.geometry();
  const std::array<int, 4>& o = g.origin();
  const std::array<int, 4>& l = g.local();
  const std::array<int, 4> L = our_extents(hd.n);

  Ranges ranges;
  add_box(hd.n, o, l, ranges);
  for (int mu = 0; mu < 4; ++mu) {
    if (l[mu] == L[mu]) continue;  // not split: the wrapped face is inside the block
    std::array<int, 4> lo = o, len = l;
    lo[mu] = (o[mu] + l[mu]) % L[mu];
    len[mu] = 1;
    if (mu == 2) {  // a single z: the record of the pair (zf, zf + 1), zf even
      for (int dt = 0; dt < l[3]; ++dt)
        for (int dx = 0; dx < l[0]; ++dx)
          for (int dy = 0; dy < l[1]; ++dy) {
            const std::int64_t t = o[3] + dt, x = o[0] + dx, y = o[1] + dy;
            const std::int64_t base = ((t * hd.n[1] + x) * hd.n[2] + y) * hd.n[3];
            ranges.emplace_back((base + lo[2]) / 2, (base + lo[2]) / 2 + 1);
          }
    } else {
      add_box(hd.n, lo, len, ranges);
    }
  }
  merge_ranges(ranges);

  auto in_block = [&](const int* y, int* local) {
    for (int nu = 0; nu < 4; ++nu) {
      const int d = ((y[nu] - o[nu]) % L[nu] + L[nu]) % L[nu];
      if (d >= l[nu]) return false;
      local[nu] = d;
    }
    return true;
  };
  auto decode = [](const unsigned char* p) { return detail::decode_link(p, 3, 64, false); };

  std::vector<unsigned char> buf;
  for (const auto& r : ranges) {
    for (std::int64_t k0 = r.first; k0 < r.second; k0 += kChunkRecords) {
      const std::int64_t nrec = std::min(kChunkRecords, r.second - k0);
      buf.resize(static_cast<std::size_t>(nrec * kRecordBytes));
      f.read_at(kHeaderBytes + k0 * kRecordBytes, buf.data(), nrec * kRecordBytes);
      for (std::int64_t i = 0; i < nrec; ++i) {
        // The odd point of record k: the odd one of openQCD lexicographic sites 2k, 2k + 1.
        std::int64_t lex = 2 * (k0 + i);
        int s[4];  // ours (x, y, z, t)
        s[2] = static_cast<int>(lex % hd.n[3]);
        lex /= hd.n[3];
        s[1] = static_cast<int>(lex % hd.n[2]);
        lex /= hd.n[2];
        s[0] = static_cast<int>(lex % hd.n[1]);
        s[3] = static_cast<int>(lex / hd.n[1]);
        if (((s[0] + s[1] + s[2] + s[3]) & 1) == 0) s[2] += 1;
        const unsigned char* rec = buf.data() + i * kRecordBytes;
        for (int oq = 0; oq < 4; ++oq) {
          const int mu = our_mu(oq);
          int local[4];
          if (in_block(s, local)) u.at(local, mu) = decode(rec + (2 * oq) * kLinkBytes);
          int b[4] = {s[0], s[1], s[2], s[3]};
          b[mu] = (b[mu] - 1 + L[mu]) % L[mu];
          if (in_block(b, local)) u.at(local, mu) = decode(rec + (2 * oq + 1) * kLinkBytes);
        }
      }
    }
  }
}

// The record (odd point k) and the link slot in it that hold our U_mu at global site y (ours: x, y, z, t): the
// forward link of y when y is odd, else the backward link of the odd point y + mu.
struct LinkSlot {
  std::int64_t record = 0;
  int slot = 0;
};

LinkSlot link_slot(const Header& hd, const std::array<int, 4>& L, const int y[4], int mu) {
  int s[4] = {y[0], y[1], y[2], y[3]};
  const bool odd = ((y[0] + y[1] + y[2] + y[3]) & 1) != 0;
  if (!odd) s[mu] = (s[mu] + 1) % L[mu];
  const std::int64_t ix = ((std::int64_t(s[3]) * hd.n[1] + s[0]) * hd.n[2] + s[1]) * hd.n[3] + s[2];
  const int oq = mu == 3 ? 0 : mu + 1;
  return {ix / 2, 2 * oq + (odd ? 0 : 1)};
}

// Slice t of u's halo box (local t = -1 .. l3; each site at its global coordinates, wrapped) into links: the records
// that hold its links read (runs of consecutive records, one pread each), each link decoded from its slot.
void read_halo_slice(const InFile& f, const Header& hd, const Geometry& g, int t, SU3<double>* links,
                     std::vector<unsigned char>& raw) {
  const std::array<int, 4>& o = g.origin();
  const std::array<int, 4>& l = g.local();
  const std::array<int, 4> L = our_extents(hd.n);
  std::vector<LinkSlot> slots;
  slots.reserve(static_cast<std::size_t>(l[0] + 2) * (l[1] + 2) * (l[2] + 2) * 4);
  int y[4];
  y[3] = ((o[3] + t) % L[3] + L[3]) % L[3];
  for (int z = -1; z <= l[2]; ++z)
    for (int yy = -1; yy <= l[1]; ++yy)
      for (int x = -1; x <= l[0]; ++x) {
        y[0] = ((o[0] + x) % L[0] + L[0]) % L[0];
        y[1] = ((o[1] + yy) % L[1] + L[1]) % L[1];
        y[2] = ((o[2] + z) % L[2] + L[2]) % L[2];
        for (int mu = 0; mu < 4; ++mu) slots.push_back(link_slot(hd, L, y, mu));
      }
  std::vector<std::int64_t> records(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) records[i] = slots[i].record;
  std::sort(records.begin(), records.end());
  records.erase(std::unique(records.begin(), records.end()), records.end());
  raw.resize(records.size() * static_cast<std::size_t>(kRecordBytes));
  for (std::size_t a = 0; a < records.size();) {
    std::size_t b = a + 1;
    while (b < records.size() && records[b] == records[b - 1] + 1) ++b;
    f.read_at(kHeaderBytes + records[a] * kRecordBytes, raw.data() + a * kRecordBytes,
              static_cast<std::int64_t>(b - a) * kRecordBytes);
    a = b;
  }
  const std::int64_t n = static_cast<std::int64_t>(slots.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const LinkSlot& s = slots[static_cast<std::size_t>(i)];
    const std::size_t at =
        static_cast<std::size_t>(std::lower_bound(records.begin(), records.end(), s.record) - records.begin());
    links[i] = detail::decode_link(raw.data() + at * kRecordBytes + s.slot * kLinkBytes, 3, 64, false);
  }
}

// The header plaquette (openQCD's normalisation) against 3 x the links' one; every rank throws alike.
void check_plaquette(const std::string& path, const Header& hd, GaugeFileInfo& info) {
  info.header_plaquette = hd.plaq / 3.0;
  const double ours = 3.0 * info.plaquette;
  if (!(std::fabs(hd.plaq - ours) <= kPlaquetteTolerance * std::max(1.0, std::fabs(ours))))
    throw InputError(path + ": plaquette mismatch: the header states " + fmt_double(hd.plaq) +
                     " (openQCD normalisation, sum of Re tr U_p / (6 V)), the links give " + fmt_double(ours) +
                     " (difference " + fmt_double(hd.plaq - ours) + ", tolerance 1e-10 relative)");
}

}  // namespace

bool looks_like_openqcd(const std::string& path) {
  try {
    InFile f(path);
    const Header hd = read_header(f, path);
    check_header(hd, f.size(), path, nullptr);
    return std::fabs(hd.plaq) <= 3.0 + 1e-9;
  } catch (const std::exception&) {
    return false;
  }
}

GaugeFileInfo read_openqcd(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
  const Geometry& g = u.geometry();
  Header hd;
  detail::collective_step(comm, path, [&] {
    if (grid == nullptr && g.local() != g.global())
      throw RuntimeFailure("read_openqcd without a process grid needs the whole lattice on the rank");
    InFile f(path);
    hd = read_header(f, path);
    check_header(hd, f.size(), path, &g.global());
    read_block(f, hd, u);
  });

  GaugeFileInfo info;
  info.format = "openqcd";
  info.extents = g.global();
  info.precision_bits = 64;
  info.checksum = "none";
  // SU(3)-ness, halo, plaquette and link trace; the header plaquette is checked here, to 1e-10.
  detail::finish_read(path, u, grid, comm, info);
  check_plaquette(path, hd, info);  // global sums, the same on every rank: every rank throws the same error
  return info;
}

GaugeFileInfo read_openqcd(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm) {
  const Geometry& g = u.geometry();
  Header hd;
  std::size_t held = 0;
  const auto t0 = std::chrono::steady_clock::now();
  detail::SliceStage stage(u);
  detail::collective_step(comm, path, [&] {
    InFile f(path);
    hd = read_header(f, path);
    check_header(hd, f.size(), path, &g.global());
    std::vector<unsigned char> raw;
    for (int t = -1; t <= g.local()[3]; ++t) {
      read_halo_slice(f, hd, g, t, stage.links(t), raw);
      held = std::max(held, raw.size());
      stage.upload(t);
    }
  });
  metrics.record("setup_gauge_read", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0,
                 static_cast<double>(g.local_volume()) * 4 * (kLinkBytes + sizeof(SU3<double>)));
  GaugeFileInfo info;
  info.format = "openqcd";
  info.extents = g.global();
  info.precision_bits = 64;
  info.checksum = "none";
  info.staging_bytes = held + stage.host_bytes();
  detail::finish_read_device(path, u, metrics, comm, info);  // SU(3)-ness, plaquette, link trace
  check_plaquette(path, hd, info);
  return info;
}

GaugeFileInfo inspect_openqcd(const std::string& path) {
  Header hd;
  {
    InFile f(path);
    hd = read_header(f, path);
    check_header(hd, f.size(), path, nullptr);
  }
  return detail::inspect_with(path, our_extents(hd.n),
                              [](const std::string& p, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
                                return read_openqcd(p, u, grid, comm);
                              });
}

}  // namespace emprism::io
