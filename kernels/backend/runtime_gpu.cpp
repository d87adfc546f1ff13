// runtime_gpu.cpp: the runtime shim (runtime.hpp) and the non-template parts of the GPU launch backend
// (gpu.hpp) for HIP and CUDA, through the wrappers of gpu_api.hpp. Per-process state, created on first use
// (after select_device): the compute stream, the reduction scratch and the pinned result slots.
// Synchronous copies run on the compute stream and wait for it, so they see (and are seen by) its kernels;
// nothing here uses the legacy default stream.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

gpu::event_t native(Event e) { return static_cast<gpu::event_t>(e.h); }

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Pinned host slots that reduction results are copied into, each with the event recorded after its copy.
struct SumSlots {
  static constexpr int kSlots = 16;
  double* host = nullptr;  // kSlots * 4 doubles
  gpu::event_t ready[kSlots] = {};
  bool used[kSlots] = {};
  SumSlots() {
    void* p = nullptr;
    gpu::check(gpu::host_alloc(&p, sizeof(double) * 4 * kSlots), "pinned allocation of reduction results");
    host = static_cast<double*>(p);
    for (auto& e : ready) gpu::check(gpu::event_create_flags(&e, gpu::kEventDisableTiming), "event create");
  }
};

SumSlots& sum_slots() {
  static SumSlots s;
  return s;
}

}  // namespace

const char* name() { return gpu::backend_name(); }

std::string device_model() {
  int d = 0;
  gpu::check(gpu::get_device(&d), "get device");
  gpu::device_prop_t p;
  gpu::check(gpu::get_device_properties(&p, d), "device properties");
  return std::string(p.name) + " " + gpu::arch_name(p);
}

std::string device_name() {
  int d = 0;
  gpu::check(gpu::get_device(&d), "get device");
  gpu::device_prop_t p;
  gpu::check(gpu::get_device_properties(&p, d), "device properties");
  return std::string(p.name) + " (device " + std::to_string(d) + ", " +
         std::to_string(p.totalGlobalMem / (1024 * 1024)) + " MiB)";
}

std::size_t device_memory_bytes() {
  int d = 0;
  gpu::check(gpu::get_device(&d), "get device");
  gpu::device_prop_t p;
  gpu::check(gpu::get_device_properties(&p, d), "device properties");
  return p.totalGlobalMem;
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
  if (p) (void)gpu::free(p);  // hipFree / cudaFree wait for the device; a failure here is not reportable
}
void device_zero(void* p, std::size_t bytes) {
  gpu::check(gpu::memset_async(p, 0, bytes, native(compute_stream())), "memset");
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  const gpu::stream_t s = native(compute_stream());
  gpu::check(gpu::memcpy_async(dst, src, bytes, s), "copy to host");
  gpu::check(gpu::stream_synchronize(s), "copy to host");
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  const gpu::stream_t s = native(compute_stream());
  gpu::check(gpu::memcpy_async(dst, src, bytes, s), "copy to device");
  gpu::check(gpu::stream_synchronize(s), "copy to device");
}
void* host_alloc_pinned(std::size_t bytes) {
  void* p = nullptr;
  gpu::check(gpu::host_alloc(&p, bytes), "pinned host allocation");
  return p;
}
void host_free_pinned(void* p) {
  if (p) (void)gpu::host_free(p);
}
void synchronize() { gpu::check(gpu::device_synchronize(), "device synchronize"); }

Stream compute_stream() {
  static const Stream s = [] {
    int least = 0, greatest = 0;
    gpu::check(gpu::stream_priority_range(&least, &greatest), "stream priorities");
    gpu::stream_t st = nullptr;
    gpu::check(gpu::stream_create(&st, least), "compute stream create");
    return Stream{st};
  }();
  return s;
}

Stream create_stream() {
  int least = 0, greatest = 0;
  gpu::check(gpu::stream_priority_range(&least, &greatest), "stream priorities");
  gpu::stream_t st = nullptr;
  gpu::check(gpu::stream_create(&st, greatest), "stream create");
  return Stream{st};
}
void destroy_stream(Stream s) {
  if (s.h) (void)gpu::stream_destroy(static_cast<gpu::stream_t>(s.h));
}

Event create_event(EventKind kind) {
  unsigned flags = 0;
  if (kind == EventKind::Sync) flags = gpu::kEventDisableTiming;
  if (kind == EventKind::Interprocess) flags = gpu::kEventDisableTiming | gpu::kEventInterprocess;
  gpu::event_t e = nullptr;
  gpu::check(gpu::event_create_flags(&e, flags), "event create");
  return Event{e};
}
void destroy_event(Event e) {
  if (e.h) (void)gpu::event_destroy(native(e));
}
void record(Event e, Stream s) { gpu::check(gpu::event_record(native(e), native(s)), "event record"); }
void wait(Stream s, Event e) { gpu::check(gpu::stream_wait_event(native(s), native(e)), "stream wait event"); }
bool done(Event e) {
  const gpu::error_t r = gpu::event_query(native(e));
  if (r == gpu::kNotReady) return false;
  gpu::check(r, "event query");
  return true;
}
double wait_event(Event e) {
  if (done(e)) return 0.0;
  const double t0 = now_s();
  gpu::check(gpu::event_synchronize(native(e)), "event synchronize");
  return now_s() - t0;
}
double elapsed_seconds(Event from, Event to) {
  float ms = 0;
  gpu::check(gpu::event_elapsed_ms(&ms, native(from), native(to)), "event elapsed time");
  return 1e-3 * ms;
}
void copy_async(void* dst, const void* src, std::size_t bytes, Stream s) {
  gpu::check(gpu::memcpy_async(dst, src, bytes, native(s)), "asynchronous copy");
}

void* reduction_scratch() {
  static void* p = device_alloc(sizeof(Sums<4>) * (kMaxReduceBlocks + 1));
  return p;
}

int post_sums(const void* device_sums, std::size_t bytes, Stream s) {
  SumSlots& slots = sum_slots();
  int k = 0;
  while (k < SumSlots::kSlots && slots.used[k]) ++k;
  if (k == SumSlots::kSlots) throw RuntimeFailure("more than 16 reduction results pending (none was waited for)");
  slots.used[k] = true;
  gpu::check(gpu::memcpy_async(slots.host + 4 * k, device_sums, bytes, native(s)), "reduction result copy");
  gpu::check(gpu::event_record(slots.ready[k], native(s)), "event record");
  return k;
}

double wait_sums(PendingSums& p) {
  if (p.slot < 0) return 0.0;
  SumSlots& slots = sum_slots();
  const double waited = wait_event(Event{slots.ready[p.slot]});
  std::memcpy(p.values, slots.host + 4 * p.slot, sizeof(double) * static_cast<std::size_t>(p.n));
  slots.used[p.slot] = false;
  p.slot = -1;
  return waited;
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

bool ipc_available() { return true; }

IpcHandle ipc_export_memory(void* base) {
  static_assert(sizeof(gpu::ipc_mem_handle_t) <= sizeof(IpcHandle), "IPC memory handle larger than 64 bytes");
  gpu::ipc_mem_handle_t h;
  gpu::check(gpu::ipc_get_mem_handle(&h, base), "IPC memory handle");
  IpcHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  return out;
}

void* ipc_open_memory(const IpcHandle& h, std::string* error) {
  gpu::ipc_mem_handle_t native_handle;
  std::memcpy(&native_handle, h.bytes, sizeof(native_handle));
  void* p = nullptr;
  const gpu::error_t e = gpu::ipc_open_mem_handle(&p, native_handle);
  if (e == gpu::kSuccess) return p;
  (void)gpu::get_last_error();  // a failed open is not sticky: clear it so later checks do not report it
  if (error) *error = std::string("opening a neighbour's memory handle: ") + gpu::error_string(e);
  return nullptr;
}

void ipc_close_memory(void* p) {
  if (p) (void)gpu::ipc_close_mem_handle(p);
}

IpcHandle ipc_export_event(Event e) {
  static_assert(sizeof(gpu::ipc_event_handle_t) <= sizeof(IpcHandle), "IPC event handle larger than 64 bytes");
  gpu::ipc_event_handle_t h;
  gpu::check(gpu::ipc_get_event_handle(&h, native(e)), "IPC event handle");
  IpcHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  return out;
}

Event ipc_open_event(const IpcHandle& h, std::string* error) {
  gpu::ipc_event_handle_t native_handle;
  std::memcpy(&native_handle, h.bytes, sizeof(native_handle));
  gpu::event_t e = nullptr;
  const gpu::error_t r = gpu::ipc_open_event_handle(&e, native_handle);
  if (r == gpu::kSuccess) return Event{e};
  (void)gpu::get_last_error();  // likewise
  if (error) *error = std::string("opening a neighbour's event handle: ") + gpu::error_string(r);
  return Event{};
}

}  // namespace emprism::backend
