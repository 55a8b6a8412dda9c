// cuBLAS and cuSOLVER loaded on first use. Linked normally they are loaded with every start of
// every binary (about 700 MB of shared objects with cuBLASLt and cuSPARSE behind them): `vidmap
// --help` took 0.8-1.5 s and 290 MB on a machine without a GPU (docs/benchmarks.md, "Start-up
// cost"). Here each function the project calls is defined with its header's signature and
// forwards to the real one, found with dlopen/dlsym on the first call (the stub pattern of
// TensorFlow's and PyTorch's CUDA library loaders). A CPU-only run never loads them.
//
// The library is looked up by its soname first (LD_LIBRARY_PATH, the loader's cache), then at
// the path it was found at build time. A missing library is a vidmap::Error naming it.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "vidmap/core/error.h"

namespace vidmap::gpu {
namespace {

struct Library {
  const char* soname;
  const char* path;
  std::once_flag once;
  void* handle = nullptr;
  std::string error;

  void* symbol(const char* name) {
    std::call_once(once, [this] {
      for (const char* file : {soname, path}) {
        handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        if (handle) return;
        if (error.empty()) error = dlerror();
      }
    });
    if (!handle)
      throw Error(std::string("cannot load ") + soname + " (needed by the CUDA backend): " + error);
    void* f = dlsym(handle, name);
    if (!f) throw Error(std::string("no ") + name + " in " + soname + ": " + dlerror());
    return f;
  }
};

Library cublas{VIDMAP_CUBLAS_SONAME, VIDMAP_CUBLAS_PATH, {}, nullptr, {}};
Library cusolver{VIDMAP_CUSOLVER_SONAME, VIDMAP_CUSOLVER_PATH, {}, nullptr, {}};

// The real function `name` of `lib`, with the type of its declaration in the header.
template <class F>
F resolve(Library& lib, const char* name) {
  return reinterpret_cast<F>(lib.symbol(name));
}

}  // namespace
}  // namespace vidmap::gpu

#define VIDMAP_FORWARD(lib, name, ...)                                                     \
  static const auto real = vidmap::gpu::resolve<decltype(&name)>(vidmap::gpu::lib, #name); \
  return real(__VA_ARGS__)

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  VIDMAP_FORWARD(cublas, cublasCreate_v2, handle);
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  VIDMAP_FORWARD(cublas, cublasDestroy_v2, handle);
}
cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId) {
  VIDMAP_FORWARD(cublas, cublasSetStream_v2, handle, streamId);
}
cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  VIDMAP_FORWARD(cublas, cublasSetMathMode, handle, mode);
}
cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C,
                                           int ldc) {
  VIDMAP_FORWARD(cublas, cublasSgemm_v2, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                 beta, C, ldc);
}

cusolverStatus_t CUSOLVERAPI cusolverDnCreate(cusolverDnHandle_t* handle) {
  VIDMAP_FORWARD(cusolver, cusolverDnCreate, handle);
}
cusolverStatus_t CUSOLVERAPI cusolverDnDestroy(cusolverDnHandle_t handle) {
  VIDMAP_FORWARD(cusolver, cusolverDnDestroy, handle);
}
cusolverStatus_t CUSOLVERAPI cusolverDnSetStream(cusolverDnHandle_t handle,
                                                 cudaStream_t streamId) {
  VIDMAP_FORWARD(cusolver, cusolverDnSetStream, handle, streamId);
}
cusolverStatus_t CUSOLVERAPI cusolverDnDpotrf_bufferSize(cusolverDnHandle_t handle,
                                                         cublasFillMode_t uplo, int n, double* A,
                                                         int lda, int* Lwork) {
  VIDMAP_FORWARD(cusolver, cusolverDnDpotrf_bufferSize, handle, uplo, n, A, lda, Lwork);
}
cusolverStatus_t CUSOLVERAPI cusolverDnDpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                                              int n, double* A, int lda, double* Workspace,
                                              int Lwork, int* devInfo) {
  VIDMAP_FORWARD(cusolver, cusolverDnDpotrf, handle, uplo, n, A, lda, Workspace, Lwork, devInfo);
}
cusolverStatus_t CUSOLVERAPI cusolverDnDpotrs(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                                              int n, int nrhs, const double* A, int lda,
                                              double* B, int ldb, int* devInfo) {
  VIDMAP_FORWARD(cusolver, cusolverDnDpotrs, handle, uplo, n, nrhs, A, lda, B, ldb, devInfo);
}

}  // extern "C"
