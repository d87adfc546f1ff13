// lime.cpp: ILDG / SciDAC gauge files in the LIME container: read_lime, inspect_lime, write_lime,
// looks_like_lime (declared in io/gauge/formats.hpp).
// LIME: a sequence of records, each a 144-byte big-endian header (magic 0x456789ab (4 bytes), version 1 (2),
// flags (2: bit 15 = message begin MB, bit 14 = message end ME), data length (8), type (128, NUL-padded)) followed
// by the data, padded with zeros to a multiple of 8 bytes.
// ILDG: record "ildg-format" (XML: <field>su3gauge</field>, <precision>32|64</precision>, <lx>..<lt>),
// "ildg-binary-data" (big-endian IEEE reals; sites in global lexicographic order, x fastest, t slowest; per site
// the 4 links mu = x, y, z, t, each 3x3 complex row-major), optionally "scidac-checksum" (XML <suma>, <sumb>, hex):
// per site crc = crc32(the site's 4 links as stored), suma ^= rotl(crc, site % 29), sumb ^= rotl(crc, site % 31)
// with site the global lexicographic index. SciDAC files without ILDG records are read too ("scidac-binary-data",
// precision from "scidac-private-record-xml" <precision>F|D, extents from "scidac-private-file-xml" <dims>).
// Written files follow QIO/Chroma's layout (as in PyQUDA's files): message 1 = scidac-private-file-xml,
// scidac-file-xml; message 2 = scidac-private-record-xml, scidac-record-xml, ildg-format, ildg-binary-data,
// scidac-checksum.
// Who may call: read_lime and write_lime are collective over comm (errors agreed by all ranks); rank 0 alone reads
// the record headers and writes the records other than the binary data; every rank reads/writes its own rows.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "io/gauge/formats.hpp"

namespace emprism::io {

using namespace detail;

namespace {

constexpr std::uint32_t kLimeMagic = 0x456789ab;
constexpr std::size_t kLimeHeaderBytes = 144;
constexpr std::size_t kLimeTypeBytes = 128;
constexpr std::uint16_t kLimeMB = 0x8000, kLimeME = 0x4000;
constexpr std::uint64_t kMaxXmlBytes = 1 << 20;  // metadata records larger than this are skipped

// What the reader needs from the record headers; trivially copyable (broadcast from rank 0).
struct LimeLayout {
  std::int64_t data_offset = 0, data_length = 0;
  int extents[4] = {0, 0, 0, 0};
  int precision = 0;
  int has_checksum = 0;
  std::uint32_t suma = 0, sumb = 0;
};

std::uint64_t pad8(std::uint64_t n) { return (n + 7) / 8 * 8; }

bool xml_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

// The text of the first element <tag>text</tag> (optionally with a namespace prefix or attributes), trimmed; the
// text holds no '<' and is followed by a closing tag. One pass over the record (no regular expression: records come
// from files and may be large), each character looked at a bounded number of times.
std::optional<std::string> xml_value(const std::string& xml, const std::string& tag) {
  const std::size_t n = xml.size();
  std::size_t next_gt = 0;  // the first '>' at or after a position, cached (positions only grow)
  for (std::size_t pos = xml.find('<'); pos != std::string::npos; pos = xml.find('<', pos + 1)) {
    std::size_t p = pos + 1, q = p;
    while (q < n && xml_name_char(xml[q])) ++q;
    if (q < n && xml[q] == ':' && q > p && !std::isdigit(static_cast<unsigned char>(xml[p]))) p = q + 1;
    if (xml.compare(p, tag.size(), tag) != 0) continue;
    p += tag.size();
    if (p >= n) return std::nullopt;
    if (std::isspace(static_cast<unsigned char>(xml[p]))) {  // attributes up to the next '>'
      if (next_gt < p) next_gt = xml.find('>', p);
      if (next_gt == std::string::npos) return std::nullopt;
      p = next_gt;
    } else if (xml[p] != '>') {
      continue;
    }
    const std::size_t end = xml.find('<', p + 1);
    if (end == std::string::npos) return std::nullopt;
    if (xml.compare(end, 2, "</") != 0) {
      pos = end - 1;  // the next candidate is this '<'
      continue;
    }
    std::size_t a = p + 1, b = end;
    while (a < b && std::isspace(static_cast<unsigned char>(xml[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(xml[b - 1]))) --b;
    return xml.substr(a, b - a);
  }
  return std::nullopt;
}

bool parse_int(const std::string& s, int& out) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || v < -2147483647L || v > 2147483647L) return false;
  out = static_cast<int>(v);
  return true;
}

bool parse_hex32(const std::string& s, std::uint32_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
  if (s.empty() || end == s.c_str() || *end != '\0' || v > 0xffffffffull) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

struct File {
  std::FILE* f = nullptr;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {}
  ~File() {
    if (f) std::fclose(f);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
};

bool read_at(std::FILE* f, std::int64_t offset, void* dst, std::size_t n) {
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) return false;
  return std::fread(dst, 1, n, f) == n;
}

// What the records of a LIME file say, collected while walking them.
struct LimeScan {
  LimeLayout layout;
  std::optional<int> fmt_precision, private_precision;
  std::optional<std::array<int, 4>> fmt_extents, private_extents;
  std::optional<std::string> field;
  bool have_binary = false, have_checksum = false;
  std::string binary_type;
};

// The extents of a scidac-private-file-xml <dims> ("4 4 4 8"), when exactly four numbers.
std::optional<std::array<int, 4>> private_dims(const std::string& xml) {
  const auto ds = xml_value(xml, "dims");
  if (!ds) return std::nullopt;
  std::array<int, 4> e{};
  int n = 0;
  const char* p = ds->c_str();
  char* end = nullptr;
  for (long v = std::strtol(p, &end, 10); end != p && n < 5; v = std::strtol(p, &end, 10)) {
    if (n < 4) e[n] = static_cast<int>(v);
    ++n;
    p = end;
  }
  if (n != 4) return std::nullopt;
  return e;
}

// One XML record (the first of each type counts).
void scan_xml_record(LimeScan& scan, const std::string& type, const std::string& xml, const std::string& path) {
  if (type == "ildg-format" && !scan.fmt_precision) {
    scan.field = xml_value(xml, "field");
    int p = 0;
    const auto ps = xml_value(xml, "precision");
    if (!ps || !parse_int(*ps, p)) throw InputError(path + ": ildg-format record without a readable <precision>");
    scan.fmt_precision = p;
    std::array<int, 4> e{};
    const char* tags[4] = {"lx", "ly", "lz", "lt"};
    for (int mu = 0; mu < 4; ++mu) {
      const auto v = xml_value(xml, tags[mu]);
      if (!v || !parse_int(*v, e[mu]) || e[mu] <= 0)
        throw InputError(path + ": ildg-format record without a readable <" + tags[mu] + ">");
    }
    scan.fmt_extents = e;
  } else if (type == "scidac-private-record-xml" && !scan.private_precision) {
    const auto ps = xml_value(xml, "precision");
    if (ps && (*ps == "F" || *ps == "D")) scan.private_precision = *ps == "F" ? 32 : 64;
  } else if (type == "scidac-private-file-xml" && !scan.private_extents) {
    scan.private_extents = private_dims(xml);
  } else if (type == "scidac-checksum" && scan.have_binary && !scan.have_checksum) {
    const auto a = xml_value(xml, "suma"), b = xml_value(xml, "sumb");
    if (!a || !b || !parse_hex32(*a, scan.layout.suma) || !parse_hex32(*b, scan.layout.sumb))
      throw InputError(path + ": scidac-checksum record without readable <suma> and <sumb>");
    scan.have_checksum = true;
  }
}

double ext_volume(const std::array<int, 4>& e) { return double(e[0]) * e[1] * e[2] * e[3]; }

// The layout from the records, checked: a binary record of su3gauge data whose size fits the stated extents and
// precision (the ildg-format record's, else the SciDAC private records').
LimeLayout finish_layout(const LimeScan& scan, const std::string& path) {
  LimeLayout L = scan.layout;
  if (!scan.have_binary) throw InputError(path + ": no ildg-binary-data (or scidac-binary-data) record");
  if (scan.field && *scan.field != "su3gauge")
    throw InputError(path + ": ildg-format field '" + *scan.field + "' is not su3gauge");
  const std::optional<int> precision = scan.fmt_precision ? scan.fmt_precision : scan.private_precision;
  const std::optional<std::array<int, 4>> extents = scan.fmt_extents ? scan.fmt_extents : scan.private_extents;
  if (!precision) throw InputError(path + ": no ildg-format record stating the precision");
  if (!extents) throw InputError(path + ": no ildg-format record stating the lattice extents");
  if (scan.fmt_extents && scan.private_extents && *scan.fmt_extents != *scan.private_extents)
    throw InputError(path + ": the ildg-format record states the extents " + extents_string(*scan.fmt_extents) +
                     " but scidac-private-file-xml states " + extents_string(*scan.private_extents));
  for (int mu = 0; mu < 4; ++mu)
    if ((*extents)[mu] < 1 || (*extents)[mu] > (1 << 20))
      throw InputError(path + ": extents " + extents_string(*extents) + " in the XML records are out of range");
  if (double(ext_volume(*extents)) > 1e15)
    throw InputError(path + ": extents " + extents_string(*extents) + " in the XML records are out of range");
  if (*precision != 32 && *precision != 64)
    throw InputError(path + ": precision " + std::to_string(*precision) + " in the ildg-format record (32 or 64)");
  L.precision = *precision;
  for (int mu = 0; mu < 4; ++mu) L.extents[mu] = (*extents)[mu];
  L.has_checksum = scan.have_checksum ? 1 : 0;
  const std::int64_t volume = std::int64_t(L.extents[0]) * L.extents[1] * L.extents[2] * L.extents[3];
  const std::int64_t need = volume * 4 * 18 * (L.precision / 8);
  if (L.data_length != need)
    throw InputError(path + ": " + scan.binary_type + " has " + std::to_string(L.data_length) + " bytes; " +
                     extents_string(*extents) + " sites of 4 links at " + std::to_string(L.precision) + " bit need " +
                     std::to_string(need));
  return L;
}

// Rank 0: walks the records and collects the layout. Throws InputError "<path>: ...".
LimeLayout parse_lime(const std::string& path) {
  const std::int64_t size = file_size(path);
  File file(path);
  if (!file.f) throw InputError(path + ": cannot open");
  LimeScan scan;
  std::int64_t off = 0;
  while (off < size) {
    unsigned char h[kLimeHeaderBytes];
    if (size - off < static_cast<std::int64_t>(kLimeHeaderBytes) || !read_at(file.f, off, h, kLimeHeaderBytes))
      throw InputError(path + ": truncated: the LIME record header at offset " + std::to_string(off) +
                       " is cut off by the end of the file (" + std::to_string(size) + " bytes)");
    if (load_u32(h, true) != kLimeMagic)
      throw InputError(path + (off == 0 ? ": not a LIME file (bad magic number)"
                                        : ": bad LIME record header at offset " + std::to_string(off) +
                                              " (magic number missing; file corrupted?)"));
    const std::uint64_t len = load_u64(h + 8, true);
    const std::string type(reinterpret_cast<const char*>(h + 16),
                           strnlen(reinterpret_cast<const char*>(h + 16), kLimeTypeBytes));
    const std::int64_t data_at = off + static_cast<std::int64_t>(kLimeHeaderBytes);
    if (len > static_cast<std::uint64_t>(size - data_at))
      throw InputError(path + ": truncated: LIME record '" + type + "' at offset " + std::to_string(off) + " has " +
                       std::to_string(len) + " bytes of data, the file ends " + std::to_string(size - data_at) +
                       " bytes after its header");
    const bool binary = type == "ildg-binary-data" || type == "scidac-binary-data";
    if (binary && !scan.have_binary) {
      scan.have_binary = true;
      scan.binary_type = type;
      scan.layout.data_offset = data_at;
      scan.layout.data_length = static_cast<std::int64_t>(len);
    } else if (!binary && len <= kMaxXmlBytes &&
               (type == "ildg-format" || type == "scidac-private-record-xml" || type == "scidac-private-file-xml" ||
                type == "scidac-checksum")) {
      std::string xml(len, '\0');
      if (!read_at(file.f, data_at, xml.data(), len)) throw InputError(path + ": read error in record '" + type + "'");
      xml.resize(strnlen(xml.c_str(), xml.size()));
      scan_xml_record(scan, type, xml, path);
    }
    off = data_at + static_cast<std::int64_t>(pad8(len));
  }
  return finish_layout(scan, path);
}

std::array<int, 4> to_array(const int e[4]) { return {e[0], e[1], e[2], e[3]}; }

std::string lime_header(const std::string& type, std::uint64_t length, bool mb, bool me) {
  std::string h(kLimeHeaderBytes, '\0');
  auto* p = reinterpret_cast<unsigned char*>(h.data());
  store_u32(p, kLimeMagic, true);
  p[4] = 0;
  p[5] = 1;  // version 1
  const std::uint16_t flags = (mb ? kLimeMB : 0) | (me ? kLimeME : 0);
  p[6] = static_cast<unsigned char>(flags >> 8);
  p[7] = static_cast<unsigned char>(flags & 0xff);
  store_u64(p + 8, length, true);
  std::memcpy(p + 16, type.data(), std::min(type.size(), kLimeTypeBytes - 1));
  return h;
}

std::string lime_record(const std::string& type, const std::string& data, bool mb, bool me) {
  std::string r = lime_header(type, data.size(), mb, me) + data;
  r.resize(r.size() + (pad8(data.size()) - data.size()), '\0');
  return r;
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

std::string format_g(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Rank 0 parses the header and every rank receives it; info's format, extents and precision; the extents checked
// against g's (an error agreed by all ranks). Collective over comm.
LimeLayout agreed_lime_layout(const std::string& path, const Geometry& g, Communicator& comm, GaugeFileInfo& info) {
  LimeLayout L;
  collective_step(comm, path, [&] {
    if (comm.rank() == 0) L = parse_lime(path);
  });
  bcast_pod(comm, L);
  info.format = "ildg";
  info.extents = to_array(L.extents);
  info.precision_bits = L.precision;
  agree_on_error(comm, extents_mismatch(path, info.extents, g.global()));
  return L;
}

// The ranks' summed checksum against the file's (when it states one): info.checksum "ok" or "none", or an error
// agreed by all ranks. Collective over comm.
void agree_on_checksum(const std::string& path, const LimeLayout& L, const ScidacChecksum& local, Communicator& comm,
                       GaugeFileInfo& info) {
  if (!L.has_checksum) {
    info.checksum = "none";
    return;
  }
  const ScidacChecksum sum = scidac_allreduce(local, comm);
  if (sum.suma != L.suma || sum.sumb != L.sumb)
    agree_on_error(comm, path + ": scidac-checksum mismatch: the file states suma " + hex32(L.suma) + " sumb " +
                             hex32(L.sumb) + ", the data give suma " + hex32(sum.suma) + " sumb " + hex32(sum.sumb) +
                             " (file corrupted)");
  info.checksum = "ok";
}

}  // namespace

bool looks_like_lime(const std::string& path) {
  File file(path);
  unsigned char m[4];
  return file.f && std::fread(m, 1, 4, file.f) == 4 && load_u32(m, true) == kLimeMagic;
}

GaugeFileInfo read_lime(const std::string& path, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
  const Geometry& g = u.geometry();
  GaugeFileInfo info;
  const LimeLayout L = agreed_lime_layout(path, g, comm, info);

  const std::size_t link_bytes = 18 * static_cast<std::size_t>(L.precision / 8), site_bytes = 4 * link_bytes;
  const std::vector<unsigned char> block = read_site_block(path, L.data_offset, site_bytes, g, comm);
  ScidacChecksum local;
  if (L.has_checksum)
    for (const BlockRow& r : block_rows(g))
      for (int i = 0; i < r.length; ++i)
        scidac_accumulate(local, r.global_site + i,
                          block.data() + static_cast<std::size_t>(r.local_lex + i) * site_bytes, site_bytes);
  agree_on_checksum(path, L, local, comm, info);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    const unsigned char* site = block.data() + static_cast<std::size_t>(lex) * site_bytes;
    for (int mu = 0; mu < 4; ++mu) u.at(x, mu) = decode_link(site + mu * link_bytes, 3, L.precision, true);
  }
  finish_read(path, u, grid, comm, info);
  return info;
}

GaugeFileInfo read_lime(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm) {
  const Geometry& g = u.geometry();
  GaugeFileInfo info;
  const LimeLayout L = agreed_lime_layout(path, g, comm, info);

  const std::size_t link_bytes = 18 * static_cast<std::size_t>(L.precision / 8), site_bytes = 4 * link_bytes;
  const auto t0 = std::chrono::steady_clock::now();
  ScidacChecksum local;
  SliceStage stage(u);
  const std::size_t held =
      read_halo_slices(path, L.data_offset, site_bytes, g, comm, [&](int t, const HaloSliceRecords& rec) {
        if (L.has_checksum) {
          std::uint32_t a = 0, b = 0;
          const std::int64_t n = static_cast<std::int64_t>(rec.sites());
#pragma omp parallel for schedule(static) reduction(^ : a, b)
          for (std::int64_t i = 0; i < n; ++i) {
            if (!rec.interior(static_cast<std::size_t>(i))) continue;
            ScidacChecksum one;
            scidac_accumulate(one, rec.global_site(static_cast<std::size_t>(i)),
                              rec.record(static_cast<std::size_t>(i)), site_bytes);
            a ^= one.suma;
            b ^= one.sumb;
          }
          local.suma ^= a;
          local.sumb ^= b;
        }
        decode_slice(t, rec, stage, [&](const unsigned char* site, int mu) {
          return decode_link(site + mu * link_bytes, 3, L.precision, true);
        });
      });
  info.staging_bytes = held + stage.host_bytes();
  metrics.record("setup_gauge_read", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0,
                 static_cast<double>(g.local_volume()) * (site_bytes + 4 * sizeof(SU3<double>)));
  agree_on_checksum(path, L, local, comm, info);
  finish_read_device(path, u, metrics, comm, info);
  return info;
}

GaugeFileInfo inspect_lime(const std::string& path) {
  const LimeLayout L = parse_lime(path);
  return inspect_with(path, to_array(L.extents),
                      [](const std::string& p, HostGauge& u, const ProcessGrid* grid, Communicator& comm) {
                        return read_lime(p, u, grid, comm);
                      });
}

void write_lime(const std::string& path, const HostGauge& u, const ProcessGrid* grid, Communicator& comm,
                int precision_bits) {
  const Geometry& g = u.geometry();
  const std::size_t link_bytes = 18 * static_cast<std::size_t>(precision_bits / 8), site_bytes = 4 * link_bytes;
  std::vector<unsigned char> block(static_cast<std::size_t>(g.local_volume()) * site_bytes);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    unsigned char* site = block.data() + static_cast<std::size_t>(lex) * site_bytes;
    for (int mu = 0; mu < 4; ++mu) encode_link(site + mu * link_bytes, u.at(x, mu), 3, precision_bits, true);
  }
  ScidacChecksum local;
  for (const BlockRow& r : block_rows(g))
    for (int i = 0; i < r.length; ++i)
      scidac_accumulate(local, r.global_site + i, block.data() + static_cast<std::size_t>(r.local_lex + i) * site_bytes,
                        site_bytes);
  const ScidacChecksum sum = scidac_allreduce(local, comm);
  const double plaq = plaquette_of(u, grid, comm), trace = link_trace(u, &comm);

  std::string head, tail;
  if (comm.rank() == 0) {
    const Extents& e = g.global();
    const std::string dims =
        std::to_string(e[0]) + " " + std::to_string(e[1]) + " " + std::to_string(e[2]) + " " + std::to_string(e[3]);
    const bool single = precision_bits == 32;
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y UTC", std::gmtime(&now));
    const std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    head += lime_record("scidac-private-file-xml",
                        xml + "<scidacFile><version>1.1</version><spacetime>4</spacetime><dims>" + dims +
                            " </dims><volfmt>0</volfmt></scidacFile>",
                        true, false);
    head += lime_record("scidac-file-xml",
                        xml + "<emprism><program>emprism-mpi</program><plaquette>" + format_g(plaq) +
                            "</plaquette><link_trace>" + format_g(trace) + "</link_trace></emprism>",
                        false, true);
    head += lime_record("scidac-private-record-xml",
                        xml + "<scidacRecord><version>1.1</version><date>" + date +
                            "</date><recordtype>0</recordtype><datatype>" +
                            (single ? "QDP_F3_ColorMatrix" : "QDP_D3_ColorMatrix") + "</datatype><precision>" +
                            (single ? "F" : "D") + "</precision><colors>3</colors><spins>1</spins><typesize>" +
                            std::to_string(link_bytes) + "</typesize><datacount>4</datacount></scidacRecord>",
                        true, false);
    head += lime_record("scidac-record-xml", xml + "<emprism><field>gauge</field></emprism>", false, false);
    head += lime_record("ildg-format",
                        xml +
                            "<ildgFormat xmlns=\"http://www.lqcd.org/ildg\" "
                            "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                            "xsi:schemaLocation=\"http://www.lqcd.org/ildg/filefmt.xsd\"><version>1.0</version>"
                            "<field>su3gauge</field><precision>" +
                            std::to_string(precision_bits) + "</precision><lx>" + std::to_string(e[0]) + "</lx><ly>" +
                            std::to_string(e[1]) + "</ly><lz>" + std::to_string(e[2]) + "</lz><lt>" +
                            std::to_string(e[3]) + "</lt></ildgFormat>",
                        false, false);
    // The binary data (a multiple of 8 bytes: no padding) follows the head directly.
    head += lime_header("ildg-binary-data", static_cast<std::uint64_t>(g.global_volume()) * site_bytes, false, false);
    tail = lime_record("scidac-checksum",
                       xml + "<scidacChecksum><version>1.0</version><suma>" + hex32(sum.suma) + "</suma><sumb>" +
                           hex32(sum.sumb) + "</sumb></scidacChecksum>",
                       false, true);
  }
  write_site_block_file(path, head, tail, block, site_bytes, g, comm);
}

}  // namespace emprism::io
