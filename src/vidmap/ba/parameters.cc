#include "vidmap/ba/backend.h"

namespace vidmap::ba {

Parameters extractParameters(const Problem& p) {
  const int K = numIntrinsics(p.model);
  Parameters x;
  x.rotation.resize(p.images.size() * 4);
  x.translation.resize(p.images.size() * 3);
  x.intrinsics.resize(p.cameras.size() * K);
  x.points.resize(p.points.size() * 3);
  for (size_t i = 0; i < p.images.size(); ++i) {
    for (int k = 0; k < 4; ++k) x.rotation[4 * i + k] = p.images[i].rotation[k];
    for (int k = 0; k < 3; ++k) x.translation[3 * i + k] = p.images[i].translation[k];
  }
  for (size_t c = 0; c < p.cameras.size(); ++c)
    for (int k = 0; k < K; ++k) x.intrinsics[K * c + k] = p.cameras[c].params[k];
  for (size_t j = 0; j < p.points.size(); ++j)
    for (int k = 0; k < 3; ++k) x.points[3 * j + k] = p.points[j].xyz[k];
  return x;
}

void storeParameters(const Parameters& x, const Structure& s, Problem& p) {
  const int K = s.K;
  for (int i = 0; i < s.numImages; ++i) {
    if (s.rotationVaries[i])
      for (int k = 0; k < 4; ++k) p.images[i].rotation[k] = x.rotation[4 * i + k];
    if (s.translationVaries[i])
      for (int k = 0; k < 3; ++k) p.images[i].translation[k] = x.translation[3 * i + k];
  }
  for (int c = 0; c < s.numCameras; ++c)
    if (s.cameraVaries[c])
      for (int k = 0; k < K; ++k) p.cameras[c].params[k] = x.intrinsics[K * c + k];
  for (int j : s.varPoints)
    for (int k = 0; k < 3; ++k) p.points[j].xyz[k] = x.points[3 * j + k];
}

}  // namespace vidmap::ba
