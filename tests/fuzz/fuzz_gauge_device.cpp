// fuzz_gauge_device.cpp: libFuzzer harness of the gauge file readers' device path (read_gauge_file's DeviceGauge
// form: the block with its halo read a timeslice at a time, io/gauge/device_read.cpp and each format's slice
// decoder), on one rank (MPI_COMM_SELF) on the CPU backend, where the "device" is host memory. The bytes are written
// to a private temporary file and read as a 2x2x2x2 lattice (the extents of every seed) with the format detected
// (GaugeFormat::Auto) and as each format named, so one harness covers ILDG, NERSC, openQCD and MILC; its seed corpus
// is the four host harnesses' seeds (jobs/fuzz.sh copies tests/fuzz/corpus/{ildg,nersc,openqcd,milc}). Every input
// must be read or refused with one InputError, and exactly as the host reader reads it (differential: the same error
// message, or the same links, halo included, plaquette and link trace: bits on the CPU backend); any other exception,
// a difference (abort with both results printed), a crash, a hang or a sanitizer report is a finding. Built with
// EMPRISM_FUZZ=ON (clang), run by jobs/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"
#include "tests/support/gauge_compare.hpp"

namespace {

std::string temp_path() { return "/tmp/emprism_fuzz_device_" + std::to_string(::getpid()) + ".cfg"; }

// A read's outcome: its InputError message, or the links (block and halo) and what the read returned.
struct Outcome {
  std::string error;
  std::optional<emprism::HostGauge> links;
  emprism::io::GaugeFileInfo info;
};

template <typename F>
Outcome outcome_of(F&& read) {
  Outcome o;
  try {
    read(o);
  } catch (const emprism::InputError& e) {
    o.error = e.what();
    o.links.reset();
  }
  return o;
}

[[noreturn]] void finding(const std::string& what, const Outcome& host, const Outcome& dev) {
  std::fprintf(stderr, "fuzz_gauge_device: %s\n  host read:   %s\n  device read: %s\n", what.c_str(),
               host.error.empty() ? "read" : host.error.c_str(), dev.error.empty() ? "read" : dev.error.c_str());
  std::abort();
}

// The file at path read as fmt by both readers; a finding (abort) when they differ.
void read_both(const std::string& path, emprism::io::GaugeFormat fmt) {
  static const emprism::Geometry g = emprism::Geometry::single_rank({2, 2, 2, 2});
  emprism::Communicator self(MPI_COMM_SELF);
  const Outcome dev =
      outcome_of([&](Outcome& o) { o.links.emplace(emprism::test::read_through_device(path, g, self, &o.info, fmt)); });
  const Outcome host = outcome_of([&](Outcome& o) {
    o.links.emplace(g);
    o.info = emprism::io::read_gauge_file(path, fmt, *o.links, nullptr, self);
  });
  if (dev.error != host.error) finding("the readers' errors differ", host, dev);
  if (!dev.error.empty()) return;
  if (emprism::test::max_link_diff(*dev.links, *host.links) != 0.0) finding("the links differ", host, dev);
  const bool same_info = dev.info.format == host.info.format && dev.info.checksum == host.info.checksum &&
                         dev.info.precision_bits == host.info.precision_bits &&
                         dev.info.plaquette == host.info.plaquette && dev.info.link_trace == host.info.link_trace;
  if (!same_info) finding("the plaquette, link trace, format, checksum or precision differ", host, dev);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static emprism::MpiSession mpi(argc, argv);  // the reads are collective over MPI_COMM_SELF
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using emprism::io::GaugeFormat;
  static const std::string path = temp_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  // Detected (as a run's default gauge.format = "auto"), then as each format named (as gauge.format = "<name>").
  for (const GaugeFormat fmt :
       {GaugeFormat::Auto, GaugeFormat::Ildg, GaugeFormat::Nersc, GaugeFormat::OpenQcd, GaugeFormat::Milc})
    read_both(path, fmt);
  std::remove(path.c_str());
  return 0;
}
