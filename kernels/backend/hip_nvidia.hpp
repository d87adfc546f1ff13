// hip_nvidia.hpp: HIP's runtime on its NVIDIA platform (EMPRISM_BACKEND=HIP, EMPRISM_HIP_PLATFORM=nvidia): nvcc
// compiles the HIP source against HIP's own headers (hip/nvidia_detail, Debian libamdhip64-dev), whose hip* calls
// are inline wrappers over the CUDA runtime. HIP 5.2's wrappers still name what CUDA 13 removed or changed (five
// cudaDeviceProp fields, texture references, multi-device cooperative launch, and the pre-12.3 signatures of
// cudaMemAdvise, cudaMemPrefetchAsync, cuCtxCreate and the graph edge calls), and since every wrapper is a
// non-template inline function, including the header fails even if none of them is called. Below CUDA 13 this file
// only includes <hip/hip_runtime.h>; from CUDA 13 on it first declares those names with their old signatures: the
// changed calls forward to CUDA 13's (no edge data, the device as a cudaMemLocation), the removed ones return
// cudaErrorNotSupported, and cudaDeviceProp is seen by HIP's two wrappers through a struct that adds the removed
// fields, filled from cudaDeviceGetAttribute. The wrappers this program calls (memory, events, streams, device
// properties, kernel attributes, occupancy) are HIP's own, unchanged. Nothing of HIP is copied here.
// Who may include: kernels/backend/gpu_api.hpp only.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>

#if CUDART_VERSION >= 13000

namespace emprism::hip_nvidia {

inline cudaMemLocation location(int device) {
  cudaMemLocation l{};
  l.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  l.id = device == cudaCpuDeviceId ? 0 : device;
  return l;
}

// cudaDeviceProp with the fields CUDA 13 removed (HIP 5.2's hipGetDeviceProperties and hipChooseDevice copy them).
struct DeviceProp : cudaDeviceProp {
  int clockRate = 0, memoryClockRate = 0, computeMode = 0, kernelExecTimeoutEnabled = 0;
  int cooperativeMultiDeviceLaunch = 0;  // multi-device cooperative launch is gone from CUDA 13
};

template <typename... A>
cudaError_t not_supported(A...) {
  return cudaErrorNotSupported;
}

}  // namespace emprism::hip_nvidia

// The old signatures, as overloads of CUDA 13's functions (different parameter lists, so no call of ours changes).
inline cudaError_t cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise advice, int device) {
  return cudaMemAdvise(p, n, advice, emprism::hip_nvidia::location(device));
}
inline cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, int device, cudaStream_t stream) {
  return cudaMemPrefetchAsync(p, n, emprism::hip_nvidia::location(device), 0, stream);
}
inline CUresult cuCtxCreate(CUcontext* ctx, unsigned int flags, CUdevice device) {
  return cuCtxCreate(ctx, nullptr, flags, device);
}
inline cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                            size_t n) {
  return cudaGraphAddDependencies(g, from, to, nullptr, n);
}
inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                               size_t n) {
  return cudaGraphRemoveDependencies(g, from, to, nullptr, n);
}
inline cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, size_t* n) {
  return cudaGraphGetEdges(g, from, to, nullptr, n);
}
inline cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* n) {
  return cudaGraphNodeGetDependencies(node, deps, nullptr, n);
}
inline cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* n) {
  return cudaGraphNodeGetDependentNodes(node, deps, nullptr, n);
}
inline cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id,
                                               cudaGraph_t* graph, const cudaGraphNode_t** deps, size_t* n) {
  return cudaStreamGetCaptureInfo(s, status, id, graph, deps, nullptr, n);
}
inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, size_t n,
                                                       unsigned int flags) {
  return cudaStreamUpdateCaptureDependencies(s, deps, nullptr, n, flags);
}
inline cudaError_t cudaGetDeviceProperties(emprism::hip_nvidia::DeviceProp* p, int device) {
  const cudaError_t e = cudaGetDeviceProperties(static_cast<cudaDeviceProp*>(p), device);
  if (e != cudaSuccess) return e;
  cudaDeviceGetAttribute(&p->clockRate, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&p->memoryClockRate, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&p->computeMode, cudaDevAttrComputeMode, device);
  cudaDeviceGetAttribute(&p->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout, device);
  return cudaSuccess;
}

// Removed from CUDA 13 (texture references, multi-device cooperative launch): declared, never supported.
template <class T, int dim = 1, enum cudaTextureReadMode = cudaReadModeElementType>
struct texture;
template <typename... A>
cudaError_t cudaBindTexture(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
template <typename... A>
cudaError_t cudaBindTexture2D(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
template <typename... A>
cudaError_t cudaBindTextureToArray(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
template <typename... A>
cudaError_t cudaUnbindTexture(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
template <typename... A>
cudaError_t cudaGetTextureAlignmentOffset(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
template <typename... A>
cudaError_t cudaLaunchCooperativeKernelMultiDevice(A... a) {
  return emprism::hip_nvidia::not_supported(a...);
}
constexpr cudaDeviceAttr cudaDevAttrCooperativeMultiDeviceLaunch = cudaDevAttrMax;  // an attribute CUDA rejects

#define cudaDeviceProp emprism::hip_nvidia::DeviceProp
#include <hip/hip_runtime.h>
#undef cudaDeviceProp

#else
#include <hip/hip_runtime.h>
#endif
