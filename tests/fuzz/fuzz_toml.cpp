// fuzz_toml.cpp: libFuzzer harness of the input reader (io/toml_reader through src/run/input.hpp's parse_config):
// any byte string must either parse to a Config or throw one InputError; any other exception, a crash or a
// sanitizer report is a finding. Built with EMPRISM_FUZZ=ON (clang), run by jobs/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/errors.hpp"
#include "src/run/input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    emprism::run::parse_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  } catch (const emprism::InputError&) {
  }
  return 0;
}
