// The CUDA backend for Bal cameras (both rotation types); see cuda_backend.cu.
#include "vidmap/ba/cuda_backend_impl.cuh"

namespace vidmap::ba::cuda_detail {
template std::unique_ptr<Backend> makeForModel<CameraModel::kBal>(const BackendInput&);
}  // namespace vidmap::ba::cuda_detail
