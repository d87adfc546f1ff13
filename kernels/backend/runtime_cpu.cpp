// runtime_cpu.cpp: the runtime shim on the host (CPU backend): aligned host memory, memcpy, OpenMP threads.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"

namespace emprism::backend {

const char* name() { return "CPU"; }
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
void record_marker() {}
bool marker_done() { return true; }

}  // namespace emprism::backend
