// gauge_file.hpp: reading and writing gauge configurations in the community file formats (ILDG/SciDAC LIME,
// NERSC, openQCD, MILC), distributed: every rank reads or writes only its own block of links.
// Convention: docs/conventions.md s. 2, 7 (mu = 0..3 = x, y, z, t; U.e[row][col]; plaquette and link trace are
// averages of Re tr / 3, 1 for the unit field). The files' own site orders and byte orders are converted on the way.
// Who may call: read_gauge_file and write_gauge_file are COLLECTIVE over comm (all ranks, same arguments; grid is
// the process grid that u's geometry was built from, nullptr on one rank); every failure is an InputError
// "<path>: <what failed>" thrown identically on every rank. detect_gauge_format, inspect_gauge_file and
// gauge_info_json are local (one rank; inspect reads the whole file, for `emprism-mpi gauge-info FILE`).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism::io {

enum class GaugeFormat { Auto, Ildg, Nersc, OpenQcd, Milc };

struct GaugeFileInfo {
  std::string format;                                         // "ildg", "nersc", "openqcd", "milc"
  std::array<int, 4> extents{};                               // (Lx, Ly, Lz, Lt)
  int precision_bits = 0;                                     // 32 or 64
  std::string checksum;                                       // "ok" or "none" (a mismatch throws instead)
  double plaquette = 0, link_trace = 0;                       // computed from the links read
  std::optional<double> header_plaquette, header_link_trace;  // as stated in the file, if it states them
  std::size_t staging_bytes = 0;  // host bytes held for the links at once by a read to the device (records, links)
};

// "ildg", "nersc", "openqcd", "milc" or "auto", and back (nullopt for any other name; case-sensitive).
std::string gauge_format_name(GaugeFormat fmt);
std::optional<GaugeFormat> parse_gauge_format(const std::string& name);

// The format of a file from its magic number / header. Throws InputError "<path>: cannot open ..." or
// "<path>: not a gauge file of a known format (ILDG/LIME, NERSC, openQCD, MILC)". Local.
GaugeFormat detect_gauge_format(const std::string& path);

// Reads this rank's block of u (u.geometry(): local extents and origin in the global lattice) from the file
// (fmt = Auto: detected on rank 0). Checks the file's extents against u.geometry().global(), its checksums, its
// header plaquette / link trace (tolerance from the precision), that every link is in SU(3)
// (|U U^dag - 1|, |det U - 1| below 1e-5 for 32-bit data, 1e-10 for 64-bit), then fills the halo
// (u.fill_halo(grid)). Collective over comm; any failure: the same InputError "<path>: ..." on every rank.
GaugeFileInfo read_gauge_file(const std::string& path, GaugeFormat fmt, HostGauge& u, const ProcessGrid* grid,
                              Communicator& comm);

// The same read straight to the device: this rank's block with its one-site halo (the halo sites read from the
// file too, so nothing is exchanged) into u, one timeslice of the halo box at a time (pinned staging, then
// uploaded): the host holds one timeslice, never the block. The same checks (the SU(3) check, plaquette and link
// trace on the device: metrics rows "setup_gauge_read", "setup_gauge_check", "setup_gauge_observables") and the same
// errors; on the CPU backend the links and the plaquette have the host reader's bits. openQCD files: for each slice
// the records (odd points) that hold its links, forward or backward. No process grid: nothing is exchanged.
// Collective over comm.
GaugeFileInfo read_gauge_file(const std::string& path, GaugeFormat fmt, DeviceGauge& u, MetricsRegistry& metrics,
                              Communicator& comm);

// Writes u (every rank its block) as ILDG (LIME with scidac-checksum) or NERSC (4D_SU3_GAUGE_3x3 with CHECKSUM,
// PLAQUETTE, LINK_TRACE), big-endian, 32 or 64 bit. Collective; written to "<path>.tmp" and renamed over path
// when complete, replacing an existing file (rank 0 writes headers and checksums). u's halo need not be filled (the
// header plaquette is computed on a copy with the halo filled through grid). Other formats: InputError.
// Note: 64-bit output of links that are SU(3) only to single precision fails the 1e-10 check when read back.
void write_gauge_file(const std::string& path, GaugeFormat fmt, const HostGauge& u, const ProcessGrid* grid,
                      Communicator& comm, int precision_bits = 64);

// Reads and checks the whole file on the calling rank alone (MPI_COMM_SELF) and returns its description.
GaugeFileInfo inspect_gauge_file(const std::string& path, GaugeFormat fmt = GaugeFormat::Auto);

// One JSON line (no trailing newline): {"format": ..., "extents": [...], "precision": ..., "checksum": ...,
// "plaquette": ..., "link_trace": ..., "header_plaquette": ..., "header_link_trace": ...} (header_* only if stated).
std::string gauge_info_json(const GaugeFileInfo& info);

}  // namespace emprism::io
