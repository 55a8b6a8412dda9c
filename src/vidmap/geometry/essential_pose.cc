#include "vidmap/geometry/essential_pose.h"

#include <Eigen/LU>
#include <Eigen/SVD>

namespace vidmap::geometry {

void decomposeEssential(const Mat3& E, Mat3* R1, Mat3* R2, Vec3* t) {
  Eigen::JacobiSVD<Mat3> svd(E, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat3 U = svd.matrixU(), V = svd.matrixV();
  if (U.determinant() < 0) U = -U;
  if (V.determinant() < 0) V = -V;
  Mat3 W;
  W << 0, -1, 0, 1, 0, 0, 0, 0, 1;
  *R1 = U * W * V.transpose();
  *R2 = U * W.transpose() * V.transpose();
  *t = U.col(2).normalized();
}

Mat3 essentialFromPose(const Pose& rel) { return skew(rel.t) * rel.R; }

bool rayDepths(const Pose& rel, const Vec3& x1, const Vec3& x2, double* d1, double* d2) {
  // [R x1, -x2] [d1; d2] = -t in least squares.
  const Vec3 a = rel.R * x1, b = -x2;
  const double aa = a.dot(a), ab = a.dot(b), bb = b.dot(b);
  const double at = -a.dot(rel.t), bt = -b.dot(rel.t);
  const double det = aa * bb - ab * ab;
  if (!(det > 1e-14 * aa * bb)) return false;
  *d1 = (bb * at - ab * bt) / det;
  *d2 = (aa * bt - ab * at) / det;
  return true;
}

int poseFromEssential(const Mat3& E, const Vec3List& x1, const Vec3List& x2,
                      const std::vector<int>& indices, Pose* rel, std::vector<char>* in_front) {
  if (!E.allFinite()) return 0;
  Mat3 R1, R2;
  Vec3 t;
  decomposeEssential(E, &R1, &R2, &t);
  const Pose cand[4] = {{R1, t}, {R1, -t}, {R2, t}, {R2, -t}};
  const int n = indices.empty() ? static_cast<int>(x1.size()) : static_cast<int>(indices.size());
  const double max_depth = 1000.0;  // in baselines (|t| = 1)
  int best = -1, best_count = 0;
  for (int c = 0; c < 4; ++c) {
    int count = 0;
    for (int k = 0; k < n; ++k) {
      const int i = indices.empty() ? k : indices[k];
      double d1, d2;
      if (rayDepths(cand[c], x1[i], x2[i], &d1, &d2) && d1 > 0 && d2 > 0 &&
          d1 * x1[i].norm() < max_depth && d2 * x2[i].norm() < max_depth)
        ++count;
    }
    if (count > best_count) {
      best_count = count;
      best = c;
    }
  }
  if (best < 0) return 0;
  *rel = cand[best];
  if (in_front) {
    in_front->assign(x1.size(), 0);
    for (int k = 0; k < n; ++k) {
      const int i = indices.empty() ? k : indices[k];
      double d1, d2;
      (*in_front)[i] = rayDepths(*rel, x1[i], x2[i], &d1, &d2) && d1 > 0 && d2 > 0 &&
                       d1 * x1[i].norm() < max_depth && d2 * x2[i].norm() < max_depth;
    }
  }
  return best_count;
}

}  // namespace vidmap::geometry
