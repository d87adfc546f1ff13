// gauge_file.cpp: the public gauge-file API (dispatch to the formats, format detection, the JSON line of
// gauge-info) and the helpers shared by the format readers/writers (declared in io/gauge/formats.hpp):
// byte order, CRC32 (zlib) and the SciDAC / NERSC checksums, link encoding, errors agreed by all ranks, this
// rank's rows of sites and the pread/pwrite of a block of site records, the final checks of a field read.
// Convention: docs/conventions.md section 1; global lexicographic site order x fastest, t slowest.
// Who may call: see gauge_file.hpp / formats.hpp (functions taking a Communicator are collective).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "comm/collectives.hpp"
#include "io/gauge/formats.hpp"

namespace emprism::io {

using namespace detail;

// ---------------------------------------------------------------------------------------------------------------
// Public API

std::string gauge_format_name(GaugeFormat fmt) {
  switch (fmt) {
    case GaugeFormat::Auto:
      return "auto";
    case GaugeFormat::Ildg:
      return "ildg";
    case GaugeFormat::Nersc:
      return "nersc";
    case GaugeFormat::OpenQcd:
      return "openqcd";
    case GaugeFormat::Milc:
      return "milc";
  }
  return "unknown";
}

std::optional<GaugeFormat> parse_gauge_format(const std::string& name) {
  for (GaugeFormat f :
       {GaugeFormat::Auto, GaugeFormat::Ildg, GaugeFormat::Nersc, GaugeFormat::OpenQcd, GaugeFormat::Milc})
    if (gauge_format_name(f) == name) return f;
  return std::nullopt;
}

GaugeFormat detect_gauge_format(const std::string& path) {
  file_size(path);  // throws "<path>: cannot open ..." for a missing or unreadable file
  if (looks_like_lime(path)) return GaugeFormat::Ildg;
  if (looks_like_nersc(path)) return GaugeFormat::Nersc;
  if (looks_like_openqcd(path)) return GaugeFormat::OpenQcd;
  if (looks_like_milc(path)) return GaugeFormat::Milc;
  throw InputError(path + ": not a gauge file of a known format (ILDG/LIME, NERSC, openQCD, MILC)");
}

namespace {

// fmt, or for Auto the format detected on rank 0 only (one open of the file, not one per rank), broadcast.
GaugeFormat resolved_format(const std::string& path, GaugeFormat fmt, Communicator& comm) {
  if (fmt != GaugeFormat::Auto) return fmt;
  int code = 0;
  collective_step(comm, path, [&] {
    if (comm.rank() == 0) code = static_cast<int>(detect_gauge_format(path));
  });
  bcast_pod(comm, code);
  return static_cast<GaugeFormat>(code);
}

}  // namespace

GaugeFileInfo read_gauge_file(const std::string& path, GaugeFormat fmt, DeviceGauge& u, MetricsRegistry& metrics,
                              Communicator& comm) {
  switch (resolved_format(path, fmt, comm)) {
    case GaugeFormat::Ildg:
      return read_lime(path, u, metrics, comm);
    case GaugeFormat::Nersc:
      return read_nersc(path, u, metrics, comm);
    case GaugeFormat::Milc:
      return read_milc(path, u, metrics, comm);
    case GaugeFormat::OpenQcd:
      return read_openqcd(path, u, metrics, comm);
    case GaugeFormat::Auto:
      break;
  }
  throw InputError(path + ": no gauge format given");
}

GaugeFileInfo read_gauge_file(const std::string& path, GaugeFormat fmt, HostGauge& u, const ProcessGrid* grid,
                              Communicator& comm) {
  switch (resolved_format(path, fmt, comm)) {
    case GaugeFormat::Ildg:
      return read_lime(path, u, grid, comm);
    case GaugeFormat::Nersc:
      return read_nersc(path, u, grid, comm);
    case GaugeFormat::OpenQcd:
      return read_openqcd(path, u, grid, comm);
    case GaugeFormat::Milc:
      return read_milc(path, u, grid, comm);
    case GaugeFormat::Auto:
      break;
  }
  throw InputError(path + ": no gauge format given");
}

void write_gauge_file(const std::string& path, GaugeFormat fmt, const HostGauge& u, const ProcessGrid* grid,
                      Communicator& comm, int precision_bits) {
  if (precision_bits != 32 && precision_bits != 64)
    throw InputError(path + ": precision " + std::to_string(precision_bits) + " bits; must be 32 or 64");
  switch (fmt) {
    case GaugeFormat::Ildg:
      write_lime(path, u, grid, comm, precision_bits);
      return;
    case GaugeFormat::Nersc:
      write_nersc(path, u, grid, comm, precision_bits, false);
      return;
    default:
      break;
  }
  throw InputError(path + ": cannot write gauge files in format '" + gauge_format_name(fmt) + "' (ildg or nersc only)");
}

GaugeFileInfo inspect_gauge_file(const std::string& path, GaugeFormat fmt) {
  if (fmt == GaugeFormat::Auto) fmt = detect_gauge_format(path);
  switch (fmt) {
    case GaugeFormat::Ildg:
      return inspect_lime(path);
    case GaugeFormat::Nersc:
      return inspect_nersc(path);
    case GaugeFormat::OpenQcd:
      return inspect_openqcd(path);
    case GaugeFormat::Milc:
      return inspect_milc(path);
    case GaugeFormat::Auto:
      break;
  }
  throw InputError(path + ": no gauge format given");
}

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {  // the shortest of these that reads back exactly
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string gauge_info_json(const GaugeFileInfo& info) {
  std::ostringstream out;
  out << "{\"format\": " << json_string(info.format) << ", \"extents\": [" << info.extents[0] << ", " << info.extents[1]
      << ", " << info.extents[2] << ", " << info.extents[3] << "], \"precision\": " << info.precision_bits
      << ", \"checksum\": " << json_string(info.checksum) << ", \"plaquette\": " << json_number(info.plaquette)
      << ", \"link_trace\": " << json_number(info.link_trace);
  if (info.header_plaquette) out << ", \"header_plaquette\": " << json_number(*info.header_plaquette);
  if (info.header_link_trace) out << ", \"header_link_trace\": " << json_number(*info.header_link_trace);
  out << "}";
  return out.str();
}

namespace detail {

// ---------------------------------------------------------------------------------------------------------------
// Byte order

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char c;
  std::memcpy(&c, &one, 1);
  return c == 1;
}

void byte_swap(void* data, std::size_t count, std::size_t word_size) {
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < count; ++i, p += word_size)
    for (std::size_t a = 0, b = word_size - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
}

std::uint32_t load_u32(const unsigned char* p, bool big_endian) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(p[big_endian ? i : 3 - i]) << (24 - 8 * i);
  return v;
}

std::uint64_t load_u64(const unsigned char* p, bool big_endian) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(p[big_endian ? i : 7 - i]) << (56 - 8 * i);
  return v;
}

void store_u32(unsigned char* p, std::uint32_t v, bool big_endian) {
  for (int i = 0; i < 4; ++i) p[big_endian ? i : 3 - i] = static_cast<unsigned char>(v >> (24 - 8 * i));
}

void store_u64(unsigned char* p, std::uint64_t v, bool big_endian) {
  for (int i = 0; i < 8; ++i) p[big_endian ? i : 7 - i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}

double load_real(const unsigned char* p, int precision_bits, bool big_endian) {
  if (precision_bits == 32) {
    const std::uint32_t w = load_u32(p, big_endian);
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  const std::uint64_t w = load_u64(p, big_endian);
  double d;
  std::memcpy(&d, &w, 8);
  return d;
}

void store_real(unsigned char* p, double v, int precision_bits, bool big_endian) {
  if (precision_bits == 32) {
    const float f = static_cast<float>(v);
    std::uint32_t w;
    std::memcpy(&w, &f, 4);
    store_u32(p, w, big_endian);
    return;
  }
  std::uint64_t w;
  std::memcpy(&w, &v, 8);
  store_u64(p, w, big_endian);
}

// ---------------------------------------------------------------------------------------------------------------
// Checksums

std::uint32_t crc32_bytes(const void* data, std::size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

std::uint32_t rotl32(std::uint32_t v, unsigned r) { return r == 0 ? v : (v << r) | (v >> (32 - r)); }

void scidac_accumulate(ScidacChecksum& sum, std::int64_t site, const unsigned char* record, std::size_t bytes) {
  const std::uint32_t crc = crc32_bytes(record, bytes);
  sum.suma ^= rotl32(crc, static_cast<unsigned>(site % 29));
  sum.sumb ^= rotl32(crc, static_cast<unsigned>(site % 31));
}

ScidacChecksum scidac_allreduce(const ScidacChecksum& local, Communicator& comm) {
  std::uint32_t sums[2] = {local.suma, local.sumb};
  reduce_xor(comm, sums, 2);
  return {sums[0], sums[1]};
}

std::uint32_t nersc_checksum_words(const unsigned char* data, std::size_t bytes, bool big_endian) {
  std::uint32_t sum = 0;  // unsigned arithmetic wraps modulo 2^32
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) sum += load_u32(data + i, big_endian);
  return sum;
}

std::uint32_t nersc_checksum_allreduce(std::uint32_t local, Communicator& comm) {
  std::uint64_t sum = local;
  reduce_sum(comm, &sum, 1);
  return static_cast<std::uint32_t>(sum & 0xffffffffu);
}

// ---------------------------------------------------------------------------------------------------------------
// Links

void reconstruct_third_row(SU3<double>& u) {
  u.e[2][0] = conj(u.e[0][1] * u.e[1][2] - u.e[0][2] * u.e[1][1]);
  u.e[2][1] = conj(u.e[0][2] * u.e[1][0] - u.e[0][0] * u.e[1][2]);
  u.e[2][2] = conj(u.e[0][0] * u.e[1][1] - u.e[0][1] * u.e[1][0]);
}

SU3<double> decode_link(const unsigned char* p, int rows, int precision_bits, bool big_endian) {
  const int w = precision_bits / 8;
  SU3<double> u;
  for (int a = 0; a < rows; ++a)
    for (int b = 0; b < 3; ++b) {
      const unsigned char* q = p + static_cast<std::size_t>(2 * (3 * a + b) * w);
      u.e[a][b] = {load_real(q, precision_bits, big_endian), load_real(q + w, precision_bits, big_endian)};
    }
  if (rows == 2) reconstruct_third_row(u);
  return u;
}

void encode_link(unsigned char* p, const SU3<double>& u, int rows, int precision_bits, bool big_endian) {
  const int w = precision_bits / 8;
  for (int a = 0; a < rows; ++a)
    for (int b = 0; b < 3; ++b) {
      unsigned char* q = p + static_cast<std::size_t>(2 * (3 * a + b) * w);
      store_real(q, u.e[a][b].re, precision_bits, big_endian);
      store_real(q + w, u.e[a][b].im, precision_bits, big_endian);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Errors agreed by all ranks, broadcasts

void agree_on_error(Communicator& comm, const std::string& message) {
  if (const auto failure = first_failure(comm, message.empty() ? 0 : 1, message))
    throw AgreedInputError(failure->message);  // every rank alike
}

void bcast_bytes(Communicator& comm, void* data, std::size_t bytes, int root) {
  broadcast_bytes(comm, data, bytes, root);
}

// ---------------------------------------------------------------------------------------------------------------
// Blocks of site records

std::vector<BlockRow> block_rows(const Geometry& g) {
  const Extents& l = g.local();
  std::vector<BlockRow> rows;
  rows.reserve(static_cast<std::size_t>(l[1]) * l[2] * l[3]);
  int x[4] = {0, 0, 0, 0};
  for (x[3] = 0; x[3] < l[3]; ++x[3])
    for (x[2] = 0; x[2] < l[2]; ++x[2])
      for (x[1] = 0; x[1] < l[1]; ++x[1]) {
        BlockRow r;
        r.global_site = g.global_lex(x);
        r.local_lex = g.local_lex(x);
        for (int mu = 0; mu < 4; ++mu) r.local[mu] = x[mu];
        r.length = l[0];
        rows.push_back(r);
      }
  return rows;
}

std::string errno_text() { return std::strerror(errno); }

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

std::vector<Run> contiguous_runs(const Geometry& g, std::size_t site_bytes) {
  const std::int64_t cap = std::max<std::int64_t>(1, (std::int64_t(64) << 20) / static_cast<std::int64_t>(site_bytes));
  std::vector<Run> runs;
  for (const BlockRow& r : block_rows(g)) {
    if (!runs.empty()) {
      Run& b = runs.back();
      if (b.global_site + b.length == r.global_site && b.local_lex + b.length == r.local_lex &&
          b.length + r.length <= cap) {
        b.length += r.length;
        continue;
      }
    }
    runs.push_back({r.global_site, r.local_lex, r.length});
  }
  return runs;
}

std::int64_t file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open (" + errno_text() + ")");
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": cannot open (not a regular file)");
  if (::access(path.c_str(), R_OK) != 0) throw InputError(path + ": cannot open (" + errno_text() + ")");
  return static_cast<std::int64_t>(st.st_size);
}

std::vector<unsigned char> read_site_block(const std::string& path, std::int64_t data_offset, std::size_t site_bytes,
                                           const Geometry& g, Communicator& comm) {
  std::vector<unsigned char> block;
  collective_step(comm, path, [&] {
    block.resize(static_cast<std::size_t>(g.local_volume()) * site_bytes);
    Fd f(::open(path.c_str(), O_RDONLY));
    if (f.fd < 0) throw InputError(path + ": cannot open (" + errno_text() + ")");
    for (const Run& r : contiguous_runs(g, site_bytes)) {
      unsigned char* dst = block.data() + static_cast<std::size_t>(r.local_lex) * site_bytes;
      const std::size_t want = static_cast<std::size_t>(r.length) * site_bytes;
      const off_t at = static_cast<off_t>(data_offset + r.global_site * static_cast<std::int64_t>(site_bytes));
      std::size_t done = 0;
      while (done < want) {
        const ssize_t n = ::pread(f.fd, dst + done, want - done, at + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(path + ": read error (" + errno_text() + ")");
        if (n == 0)
          throw InputError(path + ": truncated: the data of site " + std::to_string(r.global_site) +
                           " and on lies beyond the end of the file");
        done += static_cast<std::size_t>(n);
      }
    }
  });
  return block;
}

namespace {

void pwrite_all(int fd, const unsigned char* data, std::size_t n, off_t at, const std::string& what) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t k = ::pwrite(fd, data + done, n - done, at + static_cast<off_t>(done));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw InputError(what + ": write error (" + errno_text() + ")");
    done += static_cast<std::size_t>(k);
  }
}

}  // namespace

void write_site_block_file(const std::string& path, const std::string& head, const std::string& tail,
                           const std::vector<unsigned char>& block, std::size_t site_bytes, const Geometry& g,
                           Communicator& comm) {
  const std::string tmp = path + ".tmp";
  const std::int64_t data_bytes = g.global_volume() * static_cast<std::int64_t>(site_bytes);
  // Rank 0 creates the file with its head, tail and full size; then every rank writes its rows.
  std::uint64_t head_size = head.size();
  bcast_pod(comm, head_size);
  auto remove_tmp = [&] {
    if (comm.rank() == 0) ::unlink(tmp.c_str());
  };
  try {
    collective_step(comm, path, [&] {
      if (comm.rank() != 0) return;
      Fd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
      if (f.fd < 0) throw InputError(path + ": cannot create " + tmp + " (" + errno_text() + ")");
      pwrite_all(f.fd, reinterpret_cast<const unsigned char*>(head.data()), head.size(), 0, path);
      const off_t end = static_cast<off_t>(head.size() + data_bytes);
      pwrite_all(f.fd, reinterpret_cast<const unsigned char*>(tail.data()), tail.size(), end, path);
      if (::ftruncate(f.fd, end + static_cast<off_t>(tail.size())) != 0)
        throw InputError(path + ": write error (" + errno_text() + ")");
      if (::close(f.fd) != 0) {
        f.fd = -1;
        throw InputError(path + ": write error (" + errno_text() + ")");
      }
      f.fd = -1;
    });
    collective_step(comm, path, [&] {
      Fd f(::open(tmp.c_str(), O_WRONLY));
      if (f.fd < 0) throw InputError(path + ": cannot open " + tmp + " for writing (" + errno_text() + ")");
      for (const Run& r : contiguous_runs(g, site_bytes)) {
        const unsigned char* src = block.data() + static_cast<std::size_t>(r.local_lex) * site_bytes;
        const off_t at = static_cast<off_t>(static_cast<std::int64_t>(head_size) +
                                            r.global_site * static_cast<std::int64_t>(site_bytes));
        pwrite_all(f.fd, src, static_cast<std::size_t>(r.length) * site_bytes, at, path);
      }
      if (::fsync(f.fd) != 0 && errno != EINVAL) throw InputError(path + ": write error (" + errno_text() + ")");
      if (::close(f.fd) != 0) {
        f.fd = -1;
        throw InputError(path + ": write error (" + errno_text() + ")");
      }
      f.fd = -1;
    });
    collective_step(comm, path, [&] {
      if (comm.rank() == 0 && std::rename(tmp.c_str(), path.c_str()) != 0)
        throw InputError(path + ": cannot rename " + tmp + " to it (" + errno_text() + ")");
    });
  } catch (const InputError&) {
    remove_tmp();
    throw;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Final checks of a field read

double printed_resolution(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  int decimals = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      point = true;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      if (point) ++decimals;
    } else {
      break;
    }
  }
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) exponent = std::atoi(text.c_str() + i + 1);
  return std::pow(10.0, exponent - decimals);
}

double plaquette_of(const HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
  HostGauge copy = u;
  copy.fill_halo(grid);
  return plaquette(copy, &comm);
}

std::string extents_string(const std::array<int, 4>& e) {
  return std::to_string(e[0]) + "x" + std::to_string(e[1]) + "x" + std::to_string(e[2]) + "x" + std::to_string(e[3]);
}

std::string extents_mismatch(const std::string& path, const std::array<int, 4>& file,
                             const std::array<int, 4>& lattice) {
  if (file == lattice) return "";
  return path + ": lattice extents " + extents_string(file) + " in the file differ from the lattice's " +
         extents_string(lattice) + " (lattice.extents)";
}

namespace {

std::string format_double(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string non_su3_message(const std::string& path, const Geometry& g, std::int64_t lex, int mu, double dev,
                            int precision_bits) {
  static const char* names[4] = {"x", "y", "z", "t"};
  int x[4];
  g.local_coords(lex, x);
  const Extents& o = g.origin();
  return path + ": link U_" + names[mu] + " at site (x, y, z, t) = (" + std::to_string(o[0] + x[0]) + ", " +
         std::to_string(o[1] + x[1]) + ", " + std::to_string(o[2] + x[2]) + ", " + std::to_string(o[3] + x[3]) +
         ") is not in SU(3): " +
         (std::isfinite(dev) ? "max(|U U^dag - 1|, |det U - 1|) = " + format_double("%.3g", dev) + " > " +
                                   format_double("%.0e", su3_tolerance(precision_bits))
                             : std::string("it holds a value that is not finite (NaN or Inf)")) +
         " (" + std::to_string(precision_bits) + "-bit data)";
}

void compare_with_header(const std::string& path, Communicator& comm, GaugeFileInfo& info,
                         const std::optional<HeaderValue>& header_plaquette,
                         const std::optional<HeaderValue>& header_link_trace) {
  const double base_tol = info.precision_bits == 32 ? 1e-5 : 1e-8;
  std::string message;
  auto compare = [&](const char* name, const std::optional<HeaderValue>& h, double computed) {
    if (!h || !message.empty()) return;
    const double t = std::max(base_tol, h->resolution);
    if (!(std::fabs(computed - h->value) <= t))
      message = path + ": " + name + " " + format_double("%.10g", h->value) + " stated in the file differs from " +
                format_double("%.10g", computed) + " computed from the links (tolerance " + format_double("%.1e", t) +
                ")";
  };
  if (header_plaquette) info.header_plaquette = header_plaquette->value;
  if (header_link_trace) info.header_link_trace = header_link_trace->value;
  compare("plaquette", header_plaquette, info.plaquette);
  compare("link trace", header_link_trace, info.link_trace);
  agree_on_error(comm, message);
}

void finish_read(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                 GaugeFileInfo& info, const std::optional<HeaderValue>& header_plaquette,
                 const std::optional<HeaderValue>& header_link_trace) {
  const Geometry& g = u.geometry();
  const double tol = su3_tolerance(info.precision_bits);
  // SU(3): the first bad link of the rank (in local lexicographic order, which is ascending global order within a
  // rank's block); the lowest failing rank's report wins.
  collective_step(comm, path, [&] {
    for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
      int x[4];
      g.local_coords(lex, x);
      for (int mu = 0; mu < 4; ++mu) {
        const double dev = unitarity_deviation(u.at(x, mu));
        if (!(dev <= tol)) throw InputError(non_su3_message(path, g, lex, mu, dev, info.precision_bits));
      }
    }
  });
  u.fill_halo(grid);
  info.plaquette = plaquette(u, &comm);
  info.link_trace = link_trace(u, &comm);
  compare_with_header(path, comm, info, header_plaquette, header_link_trace);
}

}  // namespace detail
}  // namespace emprism::io
