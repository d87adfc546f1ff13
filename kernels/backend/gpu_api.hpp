// gpu_api.hpp: the HIP/CUDA runtime calls the program uses, as thin inline wrappers in namespace gpu, so the
// rest of the code is written once: gpu::malloc maps to hipMalloc or cudaMalloc, and so on. This is the only
// file that names hip* or cuda* (HIP on NVIDIA GPUs: the hip* calls, through HIP's headers,
// kernels/backend/hip_nvidia.hpp). Who may include: kernels/backend/gpu.hpp and runtime_gpu.cpp.
#pragma once

#include <cstddef>

#if defined(EMPRISM_BACKEND_HIP) && defined(EMPRISM_HIP_NVIDIA)
#include "kernels/backend/hip_nvidia.hpp"  // HIP's NVIDIA platform (nvcc), usable with CUDA 13
#elif defined(EMPRISM_BACKEND_HIP)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

namespace emprism::gpu {

#if defined(EMPRISM_BACKEND_HIP)
using error_t = hipError_t;
using event_t = hipEvent_t;
using func_attributes_t = hipFuncAttributes;
using device_prop_t = hipDeviceProp_t;
constexpr error_t kSuccess = hipSuccess;
#if defined(EMPRISM_HIP_NVIDIA)
inline const char* backend_name() { return "HIP (NVIDIA platform)"; }
#else
inline const char* backend_name() { return "HIP"; }
#endif
inline const char* error_string(error_t e) { return hipGetErrorString(e); }
inline error_t get_last_error() { return hipGetLastError(); }
inline error_t malloc(void** p, std::size_t n) { return hipMalloc(p, n); }
inline error_t free(void* p) { return hipFree(p); }
inline error_t memset(void* p, int v, std::size_t n) { return hipMemset(p, v, n); }
inline error_t copy_to_host(void* d, const void* s, std::size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline error_t copy_to_device(void* d, const void* s, std::size_t n) {
  return hipMemcpy(d, s, n, hipMemcpyHostToDevice);
}
inline error_t host_alloc(void** p, std::size_t n) { return hipHostMalloc(p, n, hipHostMallocDefault); }
inline error_t host_free(void* p) { return hipHostFree(p); }
inline error_t device_synchronize() { return hipDeviceSynchronize(); }
inline error_t get_device_count(int* n) { return hipGetDeviceCount(n); }
inline error_t set_device(int d) { return hipSetDevice(d); }
inline error_t get_device(int* d) { return hipGetDevice(d); }
inline error_t get_device_properties(device_prop_t* p, int d) { return hipGetDeviceProperties(p, d); }
inline error_t event_create(event_t* e) { return hipEventCreate(e); }
inline error_t event_record(event_t e) { return hipEventRecord(e, nullptr); }
inline error_t event_synchronize(event_t e) { return hipEventSynchronize(e); }
inline bool event_done(event_t e) { return hipEventQuery(e) == hipSuccess; }
inline error_t event_elapsed_ms(float* ms, event_t a, event_t b) { return hipEventElapsedTime(ms, a, b); }
inline error_t func_get_attributes(func_attributes_t* a, const void* f) { return hipFuncGetAttributes(a, f); }
inline error_t occupancy_blocks_per_sm(int* n, const void* f, int block, std::size_t shared) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shared);
}
#else
using error_t = cudaError_t;
using event_t = cudaEvent_t;
using func_attributes_t = cudaFuncAttributes;
using device_prop_t = cudaDeviceProp;
constexpr error_t kSuccess = cudaSuccess;
inline const char* backend_name() { return "CUDA"; }
inline const char* error_string(error_t e) { return cudaGetErrorString(e); }
inline error_t get_last_error() { return cudaGetLastError(); }
inline error_t malloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
inline error_t free(void* p) { return cudaFree(p); }
inline error_t memset(void* p, int v, std::size_t n) { return cudaMemset(p, v, n); }
inline error_t copy_to_host(void* d, const void* s, std::size_t n) {
  return cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost);
}
inline error_t copy_to_device(void* d, const void* s, std::size_t n) {
  return cudaMemcpy(d, s, n, cudaMemcpyHostToDevice);
}
inline error_t host_alloc(void** p, std::size_t n) { return cudaMallocHost(p, n); }
inline error_t host_free(void* p) { return cudaFreeHost(p); }
inline error_t device_synchronize() { return cudaDeviceSynchronize(); }
inline error_t get_device_count(int* n) { return cudaGetDeviceCount(n); }
inline error_t set_device(int d) { return cudaSetDevice(d); }
inline error_t get_device(int* d) { return cudaGetDevice(d); }
inline error_t get_device_properties(device_prop_t* p, int d) { return cudaGetDeviceProperties(p, d); }
inline error_t event_create(event_t* e) { return cudaEventCreate(e); }
inline error_t event_record(event_t e) { return cudaEventRecord(e, nullptr); }
inline error_t event_synchronize(event_t e) { return cudaEventSynchronize(e); }
inline bool event_done(event_t e) { return cudaEventQuery(e) == cudaSuccess; }
inline error_t event_elapsed_ms(float* ms, event_t a, event_t b) { return cudaEventElapsedTime(ms, a, b); }
inline error_t func_get_attributes(func_attributes_t* a, const void* f) { return cudaFuncGetAttributes(a, f); }
inline error_t occupancy_blocks_per_sm(int* n, const void* f, int block, std::size_t shared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shared);
}
#endif

// Throws emprism::RuntimeFailure("<what>: <runtime's error text>") unless e is success.
void check(error_t e, const char* what);

}  // namespace emprism::gpu
