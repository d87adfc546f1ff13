// gpu_api.hpp: the HIP/CUDA runtime calls the program uses, as thin inline wrappers in namespace gpu, so the
// rest of the code is written once: gpu::malloc maps to hipMalloc or cudaMalloc, and so on. This is the only
// file that names hip* or cuda* (HIP on NVIDIA GPUs: the hip* calls, through HIP's headers and
// kernels/backend/hip_nvidia.hpp). Streams are created non-blocking (no implicit synchronisation with the legacy
// default stream, which the program does not use); copies take cudaMemcpyDefault (unified addressing), so one
// wrapper serves every direction. Interprocess (IPC) memory and events: what the peer transport of comm/ maps.
// Who may include: kernels/backend/gpu.hpp and runtime_gpu.cpp.
#pragma once

#include <cstddef>
#include <string>

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
constexpr error_t kNotReady = hipErrorNotReady;
#if defined(EMPRISM_HIP_NVIDIA)
inline const char* backend_name() { return "HIP (NVIDIA platform)"; }
inline std::string arch_name(const device_prop_t& p) {
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}
#else
inline const char* backend_name() { return "HIP"; }
inline std::string arch_name(const device_prop_t& p) { return p.gcnArchName; }
#endif
using stream_t = hipStream_t;
using ipc_mem_handle_t = hipIpcMemHandle_t;
using ipc_event_handle_t = hipIpcEventHandle_t;
constexpr unsigned kEventDisableTiming = hipEventDisableTiming;
constexpr unsigned kEventInterprocess = hipEventInterprocess;
inline error_t stream_priority_range(int* least, int* greatest) {
  return hipDeviceGetStreamPriorityRange(least, greatest);
}
inline error_t stream_create(stream_t* s, int priority) {
  return hipStreamCreateWithPriority(s, hipStreamNonBlocking, priority);
}
inline error_t stream_destroy(stream_t s) { return hipStreamDestroy(s); }
inline error_t stream_synchronize(stream_t s) { return hipStreamSynchronize(s); }
inline error_t stream_wait_event(stream_t s, event_t e) { return hipStreamWaitEvent(s, e, 0); }
inline error_t event_create_flags(event_t* e, unsigned flags) { return hipEventCreateWithFlags(e, flags); }
inline error_t event_destroy(event_t e) { return hipEventDestroy(e); }
inline error_t memcpy_async(void* d, const void* s, std::size_t n, stream_t st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyDefault, st);
}
inline error_t memset_async(void* p, int v, std::size_t n, stream_t st) { return hipMemsetAsync(p, v, n, st); }
inline error_t ipc_get_mem_handle(ipc_mem_handle_t* h, void* p) { return hipIpcGetMemHandle(h, p); }
inline error_t ipc_open_mem_handle(void** p, const ipc_mem_handle_t& h) {
  return hipIpcOpenMemHandle(p, h, hipIpcMemLazyEnablePeerAccess);
}
inline error_t ipc_close_mem_handle(void* p) { return hipIpcCloseMemHandle(p); }
inline error_t ipc_get_event_handle(ipc_event_handle_t* h, event_t e) { return hipIpcGetEventHandle(h, e); }
inline error_t ipc_open_event_handle(event_t* e, const ipc_event_handle_t& h) { return hipIpcOpenEventHandle(e, h); }
inline const char* error_string(error_t e) { return hipGetErrorString(e); }
inline error_t get_last_error() { return hipGetLastError(); }
inline error_t malloc(void** p, std::size_t n) { return hipMalloc(p, n); }
inline error_t free(void* p) { return hipFree(p); }
inline error_t host_alloc(void** p, std::size_t n) { return hipHostMalloc(p, n, hipHostMallocDefault); }
inline error_t host_free(void* p) { return hipHostFree(p); }
inline error_t device_synchronize() { return hipDeviceSynchronize(); }
inline error_t get_device_count(int* n) { return hipGetDeviceCount(n); }
inline error_t set_device(int d) { return hipSetDevice(d); }
inline error_t get_device(int* d) { return hipGetDevice(d); }
inline error_t get_device_properties(device_prop_t* p, int d) { return hipGetDeviceProperties(p, d); }
inline error_t event_record(event_t e, stream_t s) { return hipEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return hipEventSynchronize(e); }
inline error_t event_query(event_t e) { return hipEventQuery(e); }
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
constexpr error_t kNotReady = cudaErrorNotReady;
inline const char* backend_name() { return "CUDA"; }
inline std::string arch_name(const device_prop_t& p) {
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}
using stream_t = cudaStream_t;
using ipc_mem_handle_t = cudaIpcMemHandle_t;
using ipc_event_handle_t = cudaIpcEventHandle_t;
constexpr unsigned kEventDisableTiming = cudaEventDisableTiming;
constexpr unsigned kEventInterprocess = cudaEventInterprocess;
inline error_t stream_priority_range(int* least, int* greatest) {
  return cudaDeviceGetStreamPriorityRange(least, greatest);
}
inline error_t stream_create(stream_t* s, int priority) {
  return cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, priority);
}
inline error_t stream_destroy(stream_t s) { return cudaStreamDestroy(s); }
inline error_t stream_synchronize(stream_t s) { return cudaStreamSynchronize(s); }
inline error_t stream_wait_event(stream_t s, event_t e) { return cudaStreamWaitEvent(s, e, 0); }
inline error_t event_create_flags(event_t* e, unsigned flags) { return cudaEventCreateWithFlags(e, flags); }
inline error_t event_destroy(event_t e) { return cudaEventDestroy(e); }
inline error_t memcpy_async(void* d, const void* s, std::size_t n, stream_t st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyDefault, st);
}
inline error_t memset_async(void* p, int v, std::size_t n, stream_t st) { return cudaMemsetAsync(p, v, n, st); }
inline error_t ipc_get_mem_handle(ipc_mem_handle_t* h, void* p) { return cudaIpcGetMemHandle(h, p); }
inline error_t ipc_open_mem_handle(void** p, const ipc_mem_handle_t& h) {
  return cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess);
}
inline error_t ipc_close_mem_handle(void* p) { return cudaIpcCloseMemHandle(p); }
inline error_t ipc_get_event_handle(ipc_event_handle_t* h, event_t e) { return cudaIpcGetEventHandle(h, e); }
inline error_t ipc_open_event_handle(event_t* e, const ipc_event_handle_t& h) { return cudaIpcOpenEventHandle(e, h); }
inline const char* error_string(error_t e) { return cudaGetErrorString(e); }
inline error_t get_last_error() { return cudaGetLastError(); }
inline error_t malloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
inline error_t free(void* p) { return cudaFree(p); }
inline error_t host_alloc(void** p, std::size_t n) { return cudaMallocHost(p, n); }
inline error_t host_free(void* p) { return cudaFreeHost(p); }
inline error_t device_synchronize() { return cudaDeviceSynchronize(); }
inline error_t get_device_count(int* n) { return cudaGetDeviceCount(n); }
inline error_t set_device(int d) { return cudaSetDevice(d); }
inline error_t get_device(int* d) { return cudaGetDevice(d); }
inline error_t get_device_properties(device_prop_t* p, int d) { return cudaGetDeviceProperties(p, d); }
inline error_t event_record(event_t e, stream_t s) { return cudaEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return cudaEventSynchronize(e); }
inline error_t event_query(event_t e) { return cudaEventQuery(e); }
inline error_t event_elapsed_ms(float* ms, event_t a, event_t b) { return cudaEventElapsedTime(ms, a, b); }
inline error_t func_get_attributes(func_attributes_t* a, const void* f) { return cudaFuncGetAttributes(a, f); }
inline error_t occupancy_blocks_per_sm(int* n, const void* f, int block, std::size_t shared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shared);
}
#endif

// Throws emprism::RuntimeFailure("<what>: <runtime's error text>") unless e is success.
void check(error_t e, const char* what);

}  // namespace emprism::gpu
