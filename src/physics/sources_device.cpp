// sources_device.cpp: the device's sources (see sources_device.hpp).
#include "src/physics/sources_device.hpp"

#include "kernels/launch.hpp"
#include "kernels/source_fill.hpp"
#include "src/physics/smearing_device.hpp"

namespace emprism {

namespace {

void noise_source(MetricsRegistry& metrics, const Geometry& g, const SourceParams& p, SpinorField<double>& f) {
  NoiseSource k{};
  k.lat = g.arg();
  k.seed = p.seed;
  k.z2 = p.noise == NoiseKind::Z2 ? 1 : 0;
  for (int parity = 0; parity < 2; ++parity) {
    k.parity = parity;
    k.f = f.parity(parity).view();
    launch(metrics, {"noise_source", 0, double(g.half_volume()) * sizeof(Spinor<double>)}, g.half_volume(), k);
  }
}

void plane_wave_source(MetricsRegistry& metrics, const Geometry& g, const SourceParams& p,
                       const std::array<double, 4>& theta, SpinorField<double>& f) {
  const double pi = 3.14159265358979323846;  // sources.cpp's
  PlaneWaveSource k{};
  k.lat = g.arg();
  for (int mu = 0; mu < 4; ++mu) k.k[mu] = 2 * pi * p.momentum[mu] + theta[mu];
  for (int n = 0; n < 12; ++n) k.eta[n] = {p.spinor[n].real(), p.spinor[n].imag()};
  for (int parity = 0; parity < 2; ++parity) {
    k.parity = parity;
    k.f = f.parity(parity).view();
    launch(metrics, {"plane_wave_source", 0, double(g.half_volume()) * sizeof(Spinor<double>)}, g.half_volume(), k);
  }
}

}  // namespace

void make_source_device(MetricsRegistry& metrics, const Geometry& g, const SourceParams& source,
                        const std::array<double, 4>& theta, SpinorField<double>& f) {
  switch (source.kind) {
    case SourceKind::Point:
      make_point_source_device(metrics, g, source.site, source.spin, source.colour, f);
      break;
    case SourceKind::Random:
      noise_source(metrics, g, source, f);
      break;
    case SourceKind::PlaneWave:
      plane_wave_source(metrics, g, source, theta, f);
      break;
  }
}

}  // namespace emprism
