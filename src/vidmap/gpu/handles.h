// Opaque CUDA handles for headers that must compile without CUDA. They are the very types
// cudaStream_t and cudaEvent_t point to, so a .cu file passes them to CUDA unchanged.
#pragma once

struct CUstream_st;
struct CUevent_st;

namespace vidmap::gpu {

using StreamHandle = CUstream_st*;  // == cudaStream_t
using EventHandle = CUevent_st*;    // == cudaEvent_t

}  // namespace vidmap::gpu
