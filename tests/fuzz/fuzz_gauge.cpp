// fuzz_gauge.cpp: libFuzzer harness of one gauge file reader (EMPRISM_FUZZ_FORMAT: ildg, nersc, openqcd, milc, or
// auto for format detection): the bytes are written to a private temporary file and read with inspect_gauge_file
// (the whole file on this rank, MPI_COMM_SELF). Every input must be read or refused with one InputError; any other
// exception, a crash, a hang or a sanitizer report is a finding. Built with EMPRISM_FUZZ=ON (clang), run by
// jobs/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "comm/communicator.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/errors.hpp"

namespace {

std::string temp_path() { return "/tmp/emprism_fuzz_" + std::to_string(::getpid()) + ".cfg"; }

emprism::io::GaugeFormat format() {
  const auto f = emprism::io::parse_gauge_format(EMPRISM_FUZZ_FORMAT);
  return f ? *f : emprism::io::GaugeFormat::Auto;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static emprism::MpiSession mpi(argc, argv);  // inspect_gauge_file reads on MPI_COMM_SELF
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = temp_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    emprism::io::inspect_gauge_file(path, format());
  } catch (const emprism::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
