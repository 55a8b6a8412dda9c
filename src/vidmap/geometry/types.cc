#include "vidmap/geometry/types.h"

#include <Eigen/SVD>

namespace vidmap::geometry {

void Pinhole::check(const std::string& what) const {
  require(std::isfinite(fx) && std::isfinite(fy) && std::isfinite(cx) && std::isfinite(cy) &&
              fx > 0 && fy > 0,
          what + ": camera intrinsics must be finite with positive focal lengths (fx = " +
              std::to_string(fx) + ", fy = " + std::to_string(fy) + ")");
}

Mat3 nearestRotation(const Mat3& M) {
  Eigen::JacobiSVD<Mat3> svd(M, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat3 D = Mat3::Identity();
  D(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1 : 1;
  return svd.matrixU() * D * svd.matrixV().transpose();
}

Vec3List toNormalized(const Vec2List& px, const Pinhole& cam) {
  Vec3List out(px.size());
  for (size_t i = 0; i < px.size(); ++i) out[i] = cam.normalize(px[i]).homogeneous();
  return out;
}

template <class List>
static void requireFiniteImpl(const List& v, const std::string& what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].allFinite()) {
      throw Error(what + "[" + std::to_string(i) + "] is not finite (NaN or infinity)");
    }
  }
}
void requireFinite(const Vec2List& v, const std::string& what) { requireFiniteImpl(v, what); }
void requireFinite(const Vec3List& v, const std::string& what) { requireFiniteImpl(v, what); }

}  // namespace vidmap::geometry
