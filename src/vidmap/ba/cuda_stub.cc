// Compiled only when the build has no CUDA: asking for the CUDA backend is a clear error.
#include "vidmap/ba/backend.h"
#include "vidmap/core/error.h"

namespace vidmap::ba {

std::unique_ptr<Backend> makeCudaBackend(const BackendInput&) {
  throw Error("bundle adjustment: the CUDA backend was asked for, but this build has no CUDA");
}

bool cudaBackendAvailable() { return false; }

}  // namespace vidmap::ba
