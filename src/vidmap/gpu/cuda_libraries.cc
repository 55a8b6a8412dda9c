// cuBLAS and cuSOLVER loaded on first use. Linked normally they are loaded with every start of
// every binary (about 700 MB of shared objects with cuBLASLt and cuSPARSE behind them): `vidmap
// --help` took 0.8-1.5 s and 290 MB on a machine without a GPU (docs/benchmarks.md, "Start-up
// cost"). Here each function the project calls is defined with its header's signature and
// forwards to the real one (core/lazy_library.h), so a CPU-only run never loads them.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include "vidmap/core/lazy_library.h"

namespace {

vidmap::LazyLibrary cublas{VIDMAP_CUBLAS_SONAME, VIDMAP_CUBLAS_PATH, "the CUDA backend"};
vidmap::LazyLibrary cusolver{VIDMAP_CUSOLVER_SONAME, VIDMAP_CUSOLVER_PATH, "the CUDA backend"};

}  // namespace

#define VIDMAP_FORWARD VIDMAP_LAZY_FORWARD

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
cusolverStatus_t CUSOLVERAPI cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId) {
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
                                              int n, int nrhs, const double* A, int lda, double* B,
                                              int ldb, int* devInfo) {
  VIDMAP_FORWARD(cusolver, cusolverDnDpotrs, handle, uplo, n, nrhs, A, lda, B, ldb, devInfo);
}

}  // extern "C"
