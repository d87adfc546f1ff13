// nersc.cpp: NERSC gauge files (the "NERSC archive" format): read_nersc, inspect_nersc, write_nersc,
// looks_like_nersc (declared in io/gauge/formats.hpp).
// Format: an ASCII header "BEGIN_HEADER\n", lines "KEY = VALUE", "END_HEADER\n", then the binary data. Keys used:
// DIMENSION_1..4 (Lx, Ly, Lz, Lt), DATATYPE 4D_SU3_GAUGE (rows 0 and 1 of each link stored, row 2 =
// conj(row0 x row1)) or 4D_SU3_GAUGE_3x3, FLOATING_POINT IEEE32BIG (= IEEE32), IEEE64BIG (= IEEE64),
// IEEE32LITTLE, IEEE64LITTLE, CHECKSUM (hex; the wrapped 32-bit sum of the data's 32-bit words in the data's byte
// order), PLAQUETTE (average of Re tr P / 3 over sites and planes) and LINK_TRACE (average of Re tr U / 3).
// Data: sites in global lexicographic order (x fastest, t slowest), per site mu = x, y, z, t, per link the stored
// rows row-major, complex as (re, im).
// Written files: 4D_SU3_GAUGE_3x3 (or two rows), big-endian, with CHECKSUM, PLAQUETTE and LINK_TRACE.
// Who may call: read_nersc and write_nersc are collective over comm (errors agreed by all ranks); rank 0 alone reads
// and writes the header; every rank reads/writes its own rows.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

#include "io/gauge/formats.hpp"

namespace emprism::io {

using namespace detail;

namespace {

constexpr std::size_t kMaxHeaderBytes = 1 << 16;

// What the reader needs from the header; trivially copyable (broadcast from rank 0).
struct NerscLayout {
  std::int64_t data_offset = 0;
  int extents[4] = {0, 0, 0, 0};
  int precision = 0, rows = 0, big_endian = 1;
  int has_checksum = 0, has_plaquette = 0, has_link_trace = 0;
  std::uint32_t checksum = 0;
  double plaquette = 0, plaquette_res = 0, link_trace = 0, link_trace_res = 0;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string read_prefix(const std::string& path, std::size_t n) {
  std::string buf(n, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  buf.resize(std::fread(buf.data(), 1, n, f));
  std::fclose(f);
  return buf;
}

using HeaderKeys = std::map<std::string, std::string>;

std::optional<std::string> get(const HeaderKeys& keys, const std::string& k) {
  const auto it = keys.find(k);
  if (it == keys.end()) return std::nullopt;
  return it->second;
}

// The "KEY = value" lines between BEGIN_HEADER and END_HEADER (at `end`); the first of a key counts.
HeaderKeys header_keys(const std::string& text, std::size_t end) {
  HeaderKeys keys;
  std::size_t pos = text.find('\n') + 1;
  while (pos < end + 1) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    keys.emplace(trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
  }
  return keys;
}

// DIMENSION_1..4, DATATYPE (two rows or 3x3) and FLOATING_POINT (precision and byte order).
void read_data_format(const HeaderKeys& keys, const std::string& path, NerscLayout& L) {
  for (int mu = 0; mu < 4; ++mu) {
    const std::string k = "DIMENSION_" + std::to_string(mu + 1);
    const auto v = get(keys, k);
    char* e = nullptr;
    const long n = v ? std::strtol(v->c_str(), &e, 10) : 0;
    if (!v || e == v->c_str() || *e != '\0' || n <= 0 || n > (1 << 20))
      throw InputError(path + ": " + k + (v ? " = '" + *v + "' is not a positive integer" : " missing in the header"));
    L.extents[mu] = static_cast<int>(n);
  }
  const auto datatype = get(keys, "DATATYPE");
  if (!datatype) throw InputError(path + ": DATATYPE missing in the header");
  if (upper(*datatype) == "4D_SU3_GAUGE")
    L.rows = 2;
  else if (upper(*datatype) == "4D_SU3_GAUGE_3X3")
    L.rows = 3;
  else
    throw InputError(path + ": DATATYPE = " + *datatype + " is not supported (4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3)");
  const auto fp = get(keys, "FLOATING_POINT");
  if (!fp) throw InputError(path + ": FLOATING_POINT missing in the header");
  const std::string f = upper(*fp);
  if (f == "IEEE32BIG" || f == "IEEE32") {
    L.precision = 32;
  } else if (f == "IEEE64BIG" || f == "IEEE64") {
    L.precision = 64;
  } else if (f == "IEEE32LITTLE") {
    L.precision = 32;
    L.big_endian = 0;
  } else if (f == "IEEE64LITTLE") {
    L.precision = 64;
    L.big_endian = 0;
  } else {
    throw InputError(path + ": FLOATING_POINT = " + *fp +
                     " is not supported (IEEE32BIG, IEEE64BIG, IEEE32LITTLE, IEEE64LITTLE)");
  }
}

// CHECKSUM, PLAQUETTE and LINK_TRACE where the header states them.
void read_header_checks(const HeaderKeys& keys, const std::string& path, NerscLayout& L) {
  if (const auto c = get(keys, "CHECKSUM")) {
    char* e = nullptr;
    const unsigned long long v = std::strtoull(c->c_str(), &e, 16);
    if (c->empty() || *e != '\0' || v > 0xffffffffull)
      throw InputError(path + ": CHECKSUM = '" + *c + "' is not a 32-bit hexadecimal number");
    L.has_checksum = 1;
    L.checksum = static_cast<std::uint32_t>(v);
  }
  auto real = [&](const char* k, int& has, double& value, double& res) {
    const auto v = get(keys, k);
    if (!v) return;
    char* e = nullptr;
    value = std::strtod(v->c_str(), &e);
    if (v->empty() || *e != '\0') throw InputError(path + ": " + k + " = '" + *v + "' is not a number");
    has = 1;
    res = printed_resolution(*v);
  };
  real("PLAQUETTE", L.has_plaquette, L.plaquette, L.plaquette_res);
  real("LINK_TRACE", L.has_link_trace, L.link_trace, L.link_trace_res);
}

// Rank 0: parses the header and checks the file size. Throws InputError "<path>: ...".
NerscLayout parse_nersc(const std::string& path) {
  const std::int64_t size = file_size(path);
  const std::string text = read_prefix(path, kMaxHeaderBytes);
  if (text.rfind("BEGIN_HEADER", 0) != 0) throw InputError(path + ": not a NERSC file (no BEGIN_HEADER)");
  std::size_t end = text.find("\nEND_HEADER");
  if (end == std::string::npos)
    throw InputError(path + ": no END_HEADER in the first " + std::to_string(kMaxHeaderBytes) +
                     " bytes (truncated or not a NERSC file)");
  const std::size_t eol = text.find('\n', end + 1);
  if (eol == std::string::npos) throw InputError(path + ": truncated after END_HEADER");
  NerscLayout L;
  L.data_offset = static_cast<std::int64_t>(eol + 1);
  const HeaderKeys keys = header_keys(text, end);
  read_data_format(keys, path, L);
  read_header_checks(keys, path, L);

  // Checked before any product in 64 bits and before anything is allocated: the file must hold every site.
  const double sites = double(L.extents[0]) * L.extents[1] * L.extents[2] * L.extents[3];
  if (sites * 4 * reals_per_link(L.rows) * (L.precision / 8) > double(size))
    throw InputError(path + ": truncated: DIMENSION_* give " +
                     extents_string({L.extents[0], L.extents[1], L.extents[2], L.extents[3]}) +
                     " sites, more than the file's " + std::to_string(size) + " bytes hold");
  const std::int64_t volume = std::int64_t(L.extents[0]) * L.extents[1] * L.extents[2] * L.extents[3];
  const std::int64_t data = volume * 4 * reals_per_link(L.rows) * (L.precision / 8);
  const std::string what = extents_string({L.extents[0], L.extents[1], L.extents[2], L.extents[3]}) + " sites of " +
                           (L.rows == 2 ? "two-row" : "3x3") + " links at " + std::to_string(L.precision) + " bit";
  if (size < L.data_offset + data)
    throw InputError(path + ": truncated: the header and " + what + " need " + std::to_string(L.data_offset + data) +
                     " bytes, the file has " + std::to_string(size));
  if (size > L.data_offset + data)
    throw InputError(path + ": the file has " + std::to_string(size - L.data_offset - data) +
                     " bytes more than the header and " + what + " (" + std::to_string(L.data_offset + data) +
                     "); DATATYPE, FLOATING_POINT or DIMENSION_* wrong?");
  return L;
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// Rank 0 parses the header and every rank receives it; info's format, extents and precision; the extents checked
// against g's (an error agreed by all ranks). Collective over comm.
NerscLayout agreed_nersc_layout(const std::string& path, const Geometry& g, Communicator& comm, GaugeFileInfo& info) {
  NerscLayout L;
  collective_step(comm, path, [&] {
    if (comm.rank() == 0) L = parse_nersc(path);
  });
  bcast_pod(comm, L);
  info.format = "nersc";
  info.extents = {L.extents[0], L.extents[1], L.extents[2], L.extents[3]};
  info.precision_bits = L.precision;
  agree_on_error(comm, extents_mismatch(path, info.extents, g.global()));
  return L;
}

// The ranks' summed checksum against the header's (when it states one): info.checksum "ok" or "none", or an error
// agreed by all ranks. Collective over comm.
void agree_on_checksum(const std::string& path, const NerscLayout& L, std::uint32_t local, Communicator& comm,
                       GaugeFileInfo& info) {
  if (!L.has_checksum) {
    info.checksum = "none";
    return;
  }
  const std::uint32_t sum = nersc_checksum_allreduce(local, comm);
  if (sum != L.checksum)
    agree_on_error(comm, path + ": CHECKSUM mismatch: the header states " + hex32(L.checksum) + ", the data give " +
                             hex32(sum) + " (file corrupted)");
  info.checksum = "ok";
}

}  // namespace

bool looks_like_nersc(const std::string& path) { return read_prefix(path, 12) == "BEGIN_HEADER"; }

GaugeFileInfo read_nersc(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
  const Geometry& g = u.geometry();
  GaugeFileInfo info;
  const NerscLayout L = agreed_nersc_layout(path, g, comm, info);

  const std::size_t link_bytes = static_cast<std::size_t>(reals_per_link(L.rows) * (L.precision / 8));
  const std::size_t site_bytes = 4 * link_bytes;
  const std::vector<unsigned char> block = read_site_block(path, L.data_offset, site_bytes, g, comm);
  const std::uint32_t local = L.has_checksum ? nersc_checksum_words(block.data(), block.size(), L.big_endian != 0) : 0;
  agree_on_checksum(path, L, local, comm, info);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    const unsigned char* site = block.data() + static_cast<std::size_t>(lex) * site_bytes;
    for (int mu = 0; mu < 4; ++mu)
      u.at(x, mu) = decode_link(site + mu * link_bytes, L.rows, L.precision, L.big_endian != 0);
  }
  std::optional<HeaderValue> hp, ht;
  if (L.has_plaquette) hp = HeaderValue{L.plaquette, L.plaquette_res};
  if (L.has_link_trace) ht = HeaderValue{L.link_trace, L.link_trace_res};
  finish_read(path, u, grid, comm, info, hp, ht);
  return info;
}

GaugeFileInfo read_nersc(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm) {
  const Geometry& g = u.geometry();
  GaugeFileInfo info;
  const NerscLayout L = agreed_nersc_layout(path, g, comm, info);

  const std::size_t link_bytes = static_cast<std::size_t>(reals_per_link(L.rows) * (L.precision / 8));
  const std::size_t site_bytes = 4 * link_bytes;
  const bool big = L.big_endian != 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::uint32_t local = 0;
  SliceStage stage(u);
  const std::size_t held =
      read_halo_slices(path, L.data_offset, site_bytes, g, comm, [&](int t, const HaloSliceRecords& rec) {
        if (L.has_checksum) {
          std::uint32_t sum = 0;  // wrapped sums: any order gives the same
          const std::int64_t n = static_cast<std::int64_t>(rec.sites());
#pragma omp parallel for schedule(static) reduction(+ : sum)
          for (std::int64_t i = 0; i < n; ++i)
            if (rec.interior(static_cast<std::size_t>(i)))
              sum += nersc_checksum_words(rec.record(static_cast<std::size_t>(i)), site_bytes, big);
          local += sum;
        }
        decode_slice(t, rec, stage, [&](const unsigned char* site, int mu) {
          return decode_link(site + mu * link_bytes, L.rows, L.precision, big);
        });
      });
  info.staging_bytes = held + stage.host_bytes();
  metrics.record("setup_gauge_read", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0,
                 static_cast<double>(g.local_volume()) * (site_bytes + 4 * sizeof(SU3<double>)));
  agree_on_checksum(path, L, local, comm, info);
  std::optional<HeaderValue> hp, ht;
  if (L.has_plaquette) hp = HeaderValue{L.plaquette, L.plaquette_res};
  if (L.has_link_trace) ht = HeaderValue{L.link_trace, L.link_trace_res};
  finish_read_device(path, u, metrics, comm, info, hp, ht);
  return info;
}

GaugeFileInfo inspect_nersc(const std::string& path) {
  const NerscLayout L = parse_nersc(path);
  return inspect_with(path, {L.extents[0], L.extents[1], L.extents[2], L.extents[3]},
                      [](const std::string& p, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
                        return read_nersc(p, u, grid, comm);
                      });
}

void write_nersc(const std::string& path, const HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                 int precision_bits, bool two_rows) {
  const Geometry& g = u.geometry();
  const int rows = two_rows ? 2 : 3;
  const std::size_t link_bytes = static_cast<std::size_t>(reals_per_link(rows) * (precision_bits / 8));
  const std::size_t site_bytes = 4 * link_bytes;
  std::vector<unsigned char> block(static_cast<std::size_t>(g.local_volume()) * site_bytes);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    unsigned char* site = block.data() + static_cast<std::size_t>(lex) * site_bytes;
    for (int mu = 0; mu < 4; ++mu) encode_link(site + mu * link_bytes, u.at(x, mu), rows, precision_bits, true);
  }
  const std::uint32_t sum = nersc_checksum_allreduce(nersc_checksum_words(block.data(), block.size(), true), comm);
  const double plaq = plaquette_of(u, grid, comm), trace = link_trace(u, &comm);

  std::string head;
  if (comm.rank() == 0) {
    const Extents& e = g.global();
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y UTC", std::gmtime(&now));
    char num[64];
    auto line = [&](const std::string& k, const std::string& v) { head += k + " = " + v + "\n"; };
    head = "BEGIN_HEADER\n";
    line("HDR_VERSION", "1.0");
    line("DATATYPE", two_rows ? "4D_SU3_GAUGE" : "4D_SU3_GAUGE_3x3");
    line("STORAGE_FORMAT", "1.0");
    for (int mu = 0; mu < 4; ++mu) line("DIMENSION_" + std::to_string(mu + 1), std::to_string(e[mu]));
    for (int mu = 0; mu < 4; ++mu) line("BOUNDARY_" + std::to_string(mu + 1), "PERIODIC");
    std::snprintf(num, sizeof num, "%.15g", trace);
    line("LINK_TRACE", num);
    std::snprintf(num, sizeof num, "%.15g", plaq);
    line("PLAQUETTE", num);
    line("CHECKSUM", hex32(sum));
    line("ENSEMBLE_ID", "emprism");
    line("ENSEMBLE_LABEL", "emprism");
    line("SEQUENCE_NUMBER", "0");
    line("CREATOR", "emprism-mpi");
    line("CREATION_DATE", date);
    line("FLOATING_POINT", precision_bits == 32 ? "IEEE32BIG" : "IEEE64BIG");
    head += "END_HEADER\n";
  }
  write_site_block_file(path, head, "", block, site_bytes, g, comm);
}

}  // namespace emprism::io
