// runtime.hpp: the one runtime shim of the program: device memory, copies, device selection, streams, events,
// reduction results on their way to the host, and interprocess (IPC) handles. runtime_cpu.cpp implements it on
// the host; runtime_gpu.cpp maps it to hip* or cuda* (kernels/backend/gpu_api.hpp). CMake compiles exactly one
// of them (EMPRISM_BACKEND).
// Streams: every kernel of the library runs on compute_stream() (non-blocking: it never synchronises
// implicitly with other streams); the halo exchange packs and copies on streams of its own (create_stream) and
// orders them against the compute stream with events only, never with a device-wide synchronisation.
// The synchronous copies below (copy_to_host, copy_to_device) are ordered after the compute stream's work and
// return when done. On the CPU backend kernels run synchronously on the calling thread: streams are empty
// handles, waits return at once, and an event records the host time when it is recorded (so the same timing
// code measures host time there).
// Who may call: host code only.
#pragma once

#include <cstddef>
#include <string>

namespace emprism::backend {

const char* name();  // "CPU", "HIP" or "CUDA"
// Bytes of memory of the selected device; 0 on the CPU backend (its device memory is the host's).
std::size_t device_memory_bytes();
std::string device_name();   // e.g. "NVIDIA H100 80GB HBM3" or "host CPU (16 OpenMP threads)"
std::string device_model();  // what tuning depends on: "NVIDIA H100 80GB HBM3 sm_90", "AMD Instinct MI250X gfx90a:.."
bool device_is_host();       // device pointers are host pointers (CPU backend)
int device_count();          // GPUs visible to this process (0 on the CPU backend)
// Chooses the device of this rank from its node-local rank (honouring *_VISIBLE_DEVICES, which the runtime
// applies before numbering); returns the device index used. CPU: returns 0. Call it before anything else of
// this file (the compute stream and the reduction slots are created on the device current at their first use).
int select_device(int local_rank);

void* device_alloc(std::size_t bytes);         // throws RuntimeFailure when out of memory
void device_free(void* p);                     // waits for the device first (the memory may be in use)
void device_zero(void* p, std::size_t bytes);  // ordered on the compute stream
void copy_to_host(void* dst, const void* src, std::size_t bytes);
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void* host_alloc_pinned(std::size_t bytes);  // page-locked host memory for MPI staging (plain memory on CPU)
void host_free_pinned(void* p);
void synchronize();  // waits for all work on every stream of the device

// Streams and events (opaque handles; h is the runtime's stream or event, null for the CPU's streams).
struct Stream {
  void* h = nullptr;
};
struct Event {
  void* h = nullptr;
};
enum class EventKind {
  Sync,          // ordering only (cheapest for stream waits and queries)
  Timing,        // also timestamps: elapsed_seconds between two of them
  Interprocess,  // ordering, and exportable to another process (ipc_export_event)
};
Stream compute_stream();
Stream create_stream();  // non-blocking, at the highest priority (halo packing and copies)
void destroy_stream(Stream s);
Event create_event(EventKind kind);
void destroy_event(Event e);
void record(Event e, Stream s);                // marks the point after the work enqueued on s so far
void wait(Stream s, Event e);                  // work enqueued on s from now on starts after e's last record
bool done(Event e);                            // the device got past e's last record
double wait_event(Event e);                    // blocks the host until done(e); returns the seconds it blocked
double elapsed_seconds(Event from, Event to);  // both Timing events, both done
void copy_async(void* dst, const void* src, std::size_t bytes, Stream s);  // any direction

// A reduction result (up to four doubles) on its way from the device: the launchers fill it
// (backend::reduce_async), wait_sums hands the values over once the device wrote them.
struct PendingSums {
  int slot = -1;  // GPU: the pinned result slot still to be read; -1: values are final
  int n = 0;
  double values[4] = {0, 0, 0, 0};
  // GPU: the finished sums in device memory, for kernels enqueued after the reduction on its stream (valid until the
  // next reduction is launched); null on the CPU, where values holds them when the launcher returns.
  const double* device = nullptr;
};
// Blocks until the device has written the sums (nothing to wait for on the CPU); returns the seconds blocked.
double wait_sums(PendingSums& p);

// Interprocess handles (GPU backends; the CPU backend has none: ipc_available() is false and the others throw).
// Opening returns null and sets *error on failure (the caller falls back to another transport).
struct IpcHandle {
  unsigned char bytes[64];
};
bool ipc_available();
IpcHandle ipc_export_memory(void* base);  // base: the start of a device_alloc allocation
void* ipc_open_memory(const IpcHandle& h, std::string* error);
void ipc_close_memory(void* p);
IpcHandle ipc_export_event(Event e);  // e: an Interprocess event
Event ipc_open_event(const IpcHandle& h, std::string* error);

}  // namespace emprism::backend
