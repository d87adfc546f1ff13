// peak.hpp: measures the empirical memory bandwidth of this rank's device (host memory on the CPU backend)
// with copy, triad and read-only streams; the best of several repetitions of each, the maximum of the
// three is the peak used for percent_of_peak (docs/conventions.md section 11). Who may call: any rank (local).
#pragma once

#include <cstddef>

#include "src/metrics.hpp"

namespace emprism {

// `elements` doubles per array (three arrays); 0 = the default: 2^24 (128 MiB per array) on the host, 2^26
// (512 MiB per array, ten times the last-level cache of an H100 or MI250X GCD) on a GPU.
PeakBandwidth measure_peak_bandwidth(std::size_t elements = 0, int repetitions = 5);

}  // namespace emprism
