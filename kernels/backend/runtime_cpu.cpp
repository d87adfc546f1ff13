// runtime_cpu.cpp: the runtime shim on the host (CPU backend): aligned host memory, memcpy, OpenMP threads.
// Kernels run synchronously on the calling thread, so streams are empty handles and every wait returns at once;
// an event holds the host time (steady clock) of its last record, so elapsed_seconds measures host time.
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"

namespace emprism::backend {

const char* name() { return "CPU"; }
std::size_t device_memory_bytes() { return 0; }

std::string device_model() { return "host CPU"; }
std::string device_name() { return "host CPU (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)"; }
bool device_is_host() { return true; }
int device_count() { return 0; }
int select_device(int) { return 0; }

void* device_alloc(std::size_t bytes) {
  void* p = ::operator new(bytes, std::align_val_t(64), std::nothrow);
  if (p == nullptr) throw RuntimeFailure("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}
void device_free(void* p) {
  if (p) ::operator delete(p, std::align_val_t(64));
}
void device_zero(void* p, std::size_t bytes) { std::memset(p, 0, bytes); }
void copy_to_host(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void copy_to_device(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void* host_alloc_pinned(std::size_t bytes) { return device_alloc(bytes); }
void host_free_pinned(void* p) { device_free(p); }
void synchronize() {}

Stream compute_stream() { return Stream{}; }
Stream create_stream() { return Stream{}; }
void destroy_stream(Stream) {}

// An event is the host time of its last record, in seconds of the steady clock.
Event create_event(EventKind) { return Event{new double(0.0)}; }
void destroy_event(Event e) { delete static_cast<double*>(e.h); }
void record(Event e, Stream) {
  *static_cast<double*>(e.h) =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void wait(Stream, Event) {}
bool done(Event) { return true; }
double wait_event(Event) { return 0.0; }
double elapsed_seconds(Event from, Event to) { return *static_cast<double*>(to.h) - *static_cast<double*>(from.h); }
void copy_async(void* dst, const void* src, std::size_t bytes, Stream) { std::memcpy(dst, src, bytes); }

double wait_sums(PendingSums&) { return 0.0; }

bool ipc_available() { return false; }
IpcHandle ipc_export_memory(void*) { throw RuntimeFailure("no interprocess memory handles on the CPU backend"); }
void* ipc_open_memory(const IpcHandle&, std::string* error) {
  if (error) *error = "no interprocess memory handles on the CPU backend";
  return nullptr;
}
void ipc_close_memory(void*) {}
IpcHandle ipc_export_event(Event) { throw RuntimeFailure("no interprocess events on the CPU backend"); }
Event ipc_open_event(const IpcHandle&, std::string* error) {
  if (error) *error = "no interprocess events on the CPU backend";
  return Event{};
}

}  // namespace emprism::backend
