// The CUDA backend: the same per-observation, per-point and per-pair functions as the CPU
// backend (observation.h, schur.h), one thread per observation or point, one block per image
// for the camera-side reductions and one block per image pair ("segment") for the reduced
// camera system (seed 002, items 5 and 6). No atomics: every sum runs in a fixed order, so
// results are the same from run to run. The dense system is factored by cuSOLVER (potrf).
// The kernels and the backend class are in cuda_backend_impl.cuh, instantiated per camera
// model in cuda_backend_<model>.cu.
#include <memory>

#include "vidmap/ba/backend.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/device.h"

namespace vidmap::ba {

namespace cuda_detail {
template <CameraModel M>
std::unique_ptr<Backend> makeForModel(const BackendInput& in);
extern template std::unique_ptr<Backend> makeForModel<CameraModel::kSimplePinhole>(
    const BackendInput&);
extern template std::unique_ptr<Backend> makeForModel<CameraModel::kPinhole>(const BackendInput&);
extern template std::unique_ptr<Backend> makeForModel<CameraModel::kSimpleRadial>(
    const BackendInput&);
extern template std::unique_ptr<Backend> makeForModel<CameraModel::kRadial>(const BackendInput&);
extern template std::unique_ptr<Backend> makeForModel<CameraModel::kBal>(const BackendInput&);
}  // namespace cuda_detail

bool cudaBackendAvailable() { return gpu::deviceCount() > 0; }

std::unique_ptr<Backend> makeCudaBackend(const BackendInput& in) {
  if (!cudaBackendAvailable())
    throw Error("bundle adjustment: the CUDA backend was asked for, but " + gpu::noDeviceReason());
  using namespace cuda_detail;
  switch (in.structure->model) {
    case CameraModel::kSimplePinhole:
      return makeForModel<CameraModel::kSimplePinhole>(in);
    case CameraModel::kPinhole:
      return makeForModel<CameraModel::kPinhole>(in);
    case CameraModel::kSimpleRadial:
      return makeForModel<CameraModel::kSimpleRadial>(in);
    case CameraModel::kRadial:
      return makeForModel<CameraModel::kRadial>(in);
    case CameraModel::kBal:
      return makeForModel<CameraModel::kBal>(in);
    case CameraModel::kOpenCV:
    case CameraModel::kFullOpenCV:
      break;  // refused by Problem::check
  }
  throw Error("bundle adjustment: the CUDA backend has no kernels for this camera model");
}

}  // namespace vidmap::ba
