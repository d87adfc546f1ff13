// device_read.cpp: reading a gauge file's links straight to the device (declared in io/gauge/formats.hpp): this
// rank's block with its one-site halo, one timeslice of the halo box at a time (the records read with pread, the
// decoded links staged in pinned memory and uploaded), and the checks of the field read, done on the device.
// Host memory: one slice of records and one slice of links, whatever the volume of the block.
// Convention: docs/conventions.md section 1; global lexicographic site order x fastest, t slowest; the halo box of
// Geometry::halo_box() (x fastest, t slowest; local coordinates -1 .. l).
// Who may call: io/gauge/*.cpp only; read_halo_slices and finish_read_device are collective (errors agreed).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/gauge/formats.hpp"
#include "kernels/backend/runtime.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism::io::detail {

namespace {

int wrap(int v, int n) { return ((v % n) + n) % n; }

// A run of global sites [start, start + length) of the file, held in the slice's raw records from `at` (sites) on.
struct Interval {
  std::int64_t start = 0, length = 0, at = 0;
};

// The file's truncation, found before any read with read_site_block's message (the first of this rank's runs that
// reaches beyond the end), so that a short file gives the same error whichever reader reads it.
void check_length(const std::string& path, int fd, std::int64_t data_offset, std::size_t site_bytes,
                  const Geometry& g) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0) throw InputError(path + ": read error (" + errno_text() + ")");
  for (const Run& r : contiguous_runs(g, site_bytes))
    if (data_offset + (r.global_site + r.length) * static_cast<std::int64_t>(site_bytes) > size)
      throw InputError(path + ": truncated: the data of site " + std::to_string(r.global_site) +
                       " and on lies beyond the end of the file");
}

void pread_all(const std::string& path, int fd, unsigned char* dst, std::size_t want, off_t at) {
  std::size_t done = 0;
  while (done < want) {
    const ssize_t n = ::pread(fd, dst + done, want - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path + ": read error (" + errno_text() + ")");
    if (n == 0) throw InputError(path + ": truncated: the file ended while it was read");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

// Fills a HaloSliceRecords for one timeslice: the global sites of the slice's (y, z) rows (each row three pieces
// along x: the halo site below, the block's sites, the halo site above, wrapped), merged into file intervals, read.
class HaloSliceReader {
 public:
  HaloSliceReader(const Geometry& g, std::size_t site_bytes) : g_(g), site_bytes_(site_bytes) {
    for (int k = 0; k < 3; ++k) e_[k] = g.local()[k] + 2;
  }
  void read(const std::string& path, int fd, std::int64_t data_offset, int t, HaloSliceRecords& rec) const {
    const std::size_t n = static_cast<std::size_t>(e_[0]) * e_[1] * e_[2];
    rec.global_.resize(n);
    rec.interior_.resize(n);
    rec.record_.resize(n);
    std::vector<Interval> iv = intervals(t, rec);
    std::int64_t total = 0;
    for (Interval& v : iv) {
      v.at = total;
      total += v.length;
    }
    rec.raw_.resize(static_cast<std::size_t>(total) * site_bytes_);
    for (const Interval& v : iv)
      pread_all(path, fd, rec.raw_.data() + static_cast<std::size_t>(v.at) * site_bytes_,
                static_cast<std::size_t>(v.length) * site_bytes_,
                static_cast<off_t>(data_offset + v.start * static_cast<std::int64_t>(site_bytes_)));
    const std::int64_t sites = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < sites; ++i) {
      const std::int64_t s = rec.global_[static_cast<std::size_t>(i)];
      const auto it =
          std::upper_bound(iv.begin(), iv.end(), s, [](std::int64_t a, const Interval& b) { return a < b.start; }) - 1;
      rec.record_[static_cast<std::size_t>(i)] =
          rec.raw_.data() + static_cast<std::size_t>(it->at + (s - it->start)) * site_bytes_;
    }
  }

 private:
  // The slice's global sites and interior flags into rec; the file intervals that hold them, sorted and merged.
  std::vector<Interval> intervals(int t, HaloSliceRecords& rec) const {
    const auto& o = g_.origin();
    const auto& l = g_.local();
    const auto& L = g_.global();
    const std::int64_t gt = wrap(o[3] + t, L[3]);
    const bool t_in = t >= 0 && t < l[3];
    std::vector<Interval> iv;
    std::size_t i = 0;
    for (int z = -1; z <= l[2]; ++z)
      for (int y = -1; y <= l[1]; ++y) {
        const std::int64_t row = ((gt * L[2] + wrap(o[2] + z, L[2])) * L[1] + wrap(o[1] + y, L[1])) * L[0];
        const bool row_in = t_in && z >= 0 && z < l[2] && y >= 0 && y < l[1];
        for (int x = -1; x <= l[0]; ++x, ++i) {
          rec.global_[i] = row + wrap(o[0] + x, L[0]);
          rec.interior_[i] = row_in && x >= 0 && x < l[0];
        }
        iv.push_back({row + wrap(o[0] - 1, L[0]), 1, 0});
        iv.push_back({row + o[0], l[0], 0});
        iv.push_back({row + wrap(o[0] + l[0], L[0]), 1, 0});
      }
    std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    std::vector<Interval> merged;
    for (const Interval& v : iv) {
      if (!merged.empty() && v.start <= merged.back().start + merged.back().length) {
        Interval& m = merged.back();
        m.length = std::max(m.length, v.start + v.length - m.start);
      } else {
        merged.push_back(v);
      }
    }
    return merged;
  }

  const Geometry& g_;
  std::size_t site_bytes_;
  int e_[3];
};

std::size_t read_halo_slices(const std::string& path, std::int64_t data_offset, std::size_t site_bytes,
                             const Geometry& g, Communicator& comm,
                             const std::function<void(int, const HaloSliceRecords&)>& fn) {
  std::size_t most = 0;
  collective_step(comm, path, [&] {
    Fd f(::open(path.c_str(), O_RDONLY));
    if (f.fd < 0) throw InputError(path + ": cannot open (" + errno_text() + ")");
    check_length(path, f.fd, data_offset, site_bytes, g);
    const HaloSliceReader reader(g, site_bytes);
    HaloSliceRecords rec;
    for (int t = -1; t <= g.local()[3]; ++t) {
      reader.read(path, f.fd, data_offset, t, rec);
      most = std::max(most, rec.host_bytes());
      fn(t, rec);
    }
  });
  return most;
}

SliceStage::SliceStage(DeviceGauge& u) : u_(u) {
  const auto& l = u.geometry().local();
  slice_links_ = 4 * static_cast<std::size_t>(l[0] + 2) * (l[1] + 2) * (l[2] + 2);
  bytes_ = slice_links_ * sizeof(SU3<double>);
  if (!backend::device_is_host()) stage_ = static_cast<SU3<double>*>(backend::host_alloc_pinned(bytes_));
}

SliceStage::~SliceStage() {
  if (stage_) backend::host_free_pinned(stage_);
}

SU3<double>* SliceStage::links(int t) {
  return stage_ ? stage_ : u_.data() + static_cast<std::size_t>(t + 1) * slice_links_;
}

void SliceStage::upload(int t) {
  if (stage_) backend::copy_to_device(u_.data() + static_cast<std::size_t>(t + 1) * slice_links_, stage_, bytes_);
}

void finish_read_device(const std::string& path, DeviceGauge& u, MetricsRegistry& metrics, Communicator& comm,
                        GaugeFileInfo& info, const std::optional<HeaderValue>& header_plaquette,
                        const std::optional<HeaderValue>& header_link_trace) {
  const Geometry& g = u.geometry();
  // SU(3): the first bad link of the rank in local lexicographic order, as the host's check; the lowest rank's wins.
  collective_step(comm, path, [&] {
    const NonSu3Link bad =
        first_non_su3_link(metrics, g, u.data(), su3_tolerance(info.precision_bits), "setup_gauge_check");
    if (bad.lex >= 0) throw InputError(non_su3_message(path, g, bad.lex, bad.mu, bad.deviation, info.precision_bits));
  });
  const GaugeObservables obs = device_gauge_observables(metrics, g, u.data(), &comm, "setup_gauge_observables");
  info.plaquette = obs.plaquette;
  info.link_trace = obs.link_trace;
  compare_with_header(path, comm, info, header_plaquette, header_link_trace);
}

}  // namespace emprism::io::detail
