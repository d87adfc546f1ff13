// runtime.hpp: the one runtime shim of the program: device memory, copies, device selection and
// synchronisation. runtime_cpu.cpp implements it on the host; runtime_gpu.cpp maps it to hip* or cuda*
// (kernels/backend/gpu_api.hpp). CMake compiles exactly one of them (EMPRISM_BACKEND).
// Who may call: host code only.
#pragma once

#include <cstddef>
#include <string>

namespace emprism::backend {

const char* name();         // "CPU", "HIP" or "CUDA"
std::string device_name();  // e.g. "NVIDIA H100 80GB HBM3" or "host CPU (16 OpenMP threads)"
bool device_is_host();      // device pointers are host pointers (CPU backend)
int device_count();         // GPUs visible to this process (0 on the CPU backend)
// Chooses the device of this rank from its node-local rank (honouring *_VISIBLE_DEVICES, which the runtime
// applies before numbering); returns the device index used. CPU: returns 0.
int select_device(int local_rank);

void* device_alloc(std::size_t bytes);  // throws RuntimeFailure when out of memory
void device_free(void* p);
void device_zero(void* p, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void* host_alloc_pinned(std::size_t bytes);  // page-locked host memory for MPI staging (plain memory on CPU)
void host_free_pinned(void* p);
void synchronize();
// Marks the point in the device's work queue after the kernels launched so far; marker_done() tells whether the
// device got there (always true on the CPU backend, whose kernels are synchronous).
void record_marker();
bool marker_done();

}  // namespace emprism::backend
