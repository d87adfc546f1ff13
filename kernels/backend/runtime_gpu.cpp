// runtime_gpu.cpp: the runtime shim (runtime.hpp) and the non-template parts of the GPU launch backend
// (gpu.hpp) for HIP and CUDA, through the wrappers of gpu_api.hpp. Per-process state: the device chosen for
// this rank, the reduction scratch and the timing events, created once.
#include <cstdlib>
#include <string>

#include "kernels/backend/gpu.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"

namespace emprism::gpu {

void check(error_t e, const char* what) {
  if (e != kSuccess) throw RuntimeFailure(std::string(backend_name()) + " error in " + what + ": " + error_string(e));
}

}  // namespace emprism::gpu

namespace emprism::backend {

namespace {

struct Timer {
  gpu::event_t start = nullptr, stop = nullptr, marker = nullptr;
};

Timer& timer() {
  static Timer t = [] {
    Timer x;
    gpu::check(gpu::event_create(&x.start), "event create");
    gpu::check(gpu::event_create(&x.stop), "event create");
    gpu::check(gpu::event_create(&x.marker), "event create");
    return x;
  }();
  return t;
}

}  // namespace

const char* name() { return gpu::backend_name(); }

std::string device_name() {
  int d = 0;
  gpu::check(gpu::get_device(&d), "get device");
  gpu::device_prop_t p;
  gpu::check(gpu::get_device_properties(&p, d), "device properties");
  return std::string(p.name) + " (device " + std::to_string(d) + ", " +
         std::to_string(p.totalGlobalMem / (1024 * 1024)) + " MiB)";
}

bool device_is_host() { return false; }

int device_count() {
  int n = 0;
  if (gpu::get_device_count(&n) != gpu::kSuccess) return 0;
  return n;
}

int select_device(int local_rank) {
  int n = 0;
  gpu::check(gpu::get_device_count(&n), "device count");
  if (n == 0) throw RuntimeFailure("no GPU visible to this rank (check *_VISIBLE_DEVICES and the job's GPU request)");
  const int d = local_rank % n;
  gpu::check(gpu::set_device(d), "set device");
  return d;
}

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  const gpu::error_t e = gpu::malloc(&p, bytes);
  if (e != gpu::kSuccess)
    throw RuntimeFailure("out of device memory allocating " + std::to_string(bytes) + " bytes (" +
                         gpu::error_string(e) + ")");
  return p;
}
void device_free(void* p) {
  if (p) gpu::free(p);
}
void device_zero(void* p, std::size_t bytes) { gpu::check(gpu::memset(p, 0, bytes), "memset"); }
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  gpu::check(gpu::copy_to_host(dst, src, bytes), "copy to host");
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  gpu::check(gpu::copy_to_device(dst, src, bytes), "copy to device");
}
void* host_alloc_pinned(std::size_t bytes) {
  void* p = nullptr;
  gpu::check(gpu::host_alloc(&p, bytes), "pinned host allocation");
  return p;
}
void host_free_pinned(void* p) {
  if (p) gpu::host_free(p);
}
void synchronize() { gpu::check(gpu::device_synchronize(), "device synchronize"); }

void* reduction_scratch() {
  static void* p = device_alloc(sizeof(Sums<4>) * (kMaxReduceBlocks + 1));
  return p;
}

void record_marker() { gpu::check(gpu::event_record(timer().marker), "event record"); }
bool marker_done() { return gpu::event_done(timer().marker); }

void timer_start() { gpu::check(gpu::event_record(timer().start), "event record"); }

double timer_stop() {
  gpu::check(gpu::event_record(timer().stop), "event record");
  gpu::check(gpu::event_synchronize(timer().stop), "event synchronize");
  float ms = 0;
  gpu::check(gpu::event_elapsed_ms(&ms, timer().start, timer().stop), "event elapsed time");
  return 1e-3 * ms;
}

void check_launch(const char* what) { gpu::check(gpu::get_last_error(), what); }

KernelResources query_resources(const void* kernel, int block) {
  KernelResources r;
  gpu::func_attributes_t a;
  if (gpu::func_get_attributes(&a, kernel) != gpu::kSuccess) return r;
  r.registers = a.numRegs;
  r.spill_bytes = static_cast<int>(a.localSizeBytes);
  r.shared_bytes = static_cast<int>(a.sharedSizeBytes);
  r.block = block;
  int blocks = 0, d = 0;
  gpu::device_prop_t p;
  if (gpu::occupancy_blocks_per_sm(&blocks, kernel, block, 0) == gpu::kSuccess &&
      gpu::get_device(&d) == gpu::kSuccess && gpu::get_device_properties(&p, d) == gpu::kSuccess &&
      p.maxThreadsPerMultiProcessor > 0)
    r.occupancy = static_cast<double>(blocks) * block / p.maxThreadsPerMultiProcessor;
  return r;
}

}  // namespace emprism::backend
