// gauge_compare.hpp: comparing gauge fields, for the tests (tests/*.cpp, tests/gpu, tests/mpi): the largest difference
// of two host fields over every stored link (the block and its halo) and entry; a gauge file read straight to the
// device (io/gauge's DeviceGauge read) and copied back to the host, to compare with the host reader's field.
// Who may call: tests only; rank-local.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "io/gauge/gauge_file.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism::test {

// max over every link of the box (halo included) and entry of |a - b|; NaN in either counts as infinitely different.
inline double max_link_diff(const HostGauge& a, const HostGauge& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.storage().size(); ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const double re = std::fabs(a.storage()[i].e[r][c].re - b.storage()[i].e[r][c].re);
        const double im = std::fabs(a.storage()[i].e[r][c].im - b.storage()[i].e[r][c].im);
        if (!(re <= d)) d = std::isnan(re) ? INFINITY : re;
        if (!(im <= d)) d = std::isnan(im) ? INFINITY : im;
      }
  return d;
}

// path read with read_gauge_file's DeviceGauge form into a field of geometry g, every link (halo included) copied
// back; info (optional) receives what the read returned. Collective over comm.
inline HostGauge read_through_device(const std::string& path, const Geometry& g, Communicator& comm,
                                     io::GaugeFileInfo* info = nullptr, io::GaugeFormat fmt = io::GaugeFormat::Auto) {
  MetricsRegistry metrics;
  DeviceGauge dev(g);
  const io::GaugeFileInfo got = io::read_gauge_file(path, fmt, dev, metrics, comm);
  if (info) *info = got;
  return download_gauge(metrics, dev);
}

}  // namespace emprism::test
