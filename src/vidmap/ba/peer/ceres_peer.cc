#include "vidmap/ba/peer/ceres_peer.h"

#include <ceres/ceres.h>
#include <ceres/rotation.h>

#include <memory>

#include "vidmap/ba/structure.h"
#include "vidmap/core/error.h"

namespace vidmap::ba::peer {

namespace {

// Pixel of a camera-frame point, written independently of camera_models.h.
template <CameraModel M, class T>
void projectT(const T* k, const T* p, T* px) {
  if constexpr (M == CameraModel::kBal) {
    const T u = -p[0] / p[2], v = -p[1] / p[2];
    const T r2 = u * u + v * v;
    const T d = 1.0 + r2 * (k[1] + k[2] * r2);
    px[0] = k[0] * d * u;
    px[1] = k[0] * d * v;
  } else {
    const T u = p[0] / p[2], v = p[1] / p[2];
    const T r2 = u * u + v * v;
    if constexpr (M == CameraModel::kSimplePinhole) {
      px[0] = k[0] * u + k[1], px[1] = k[0] * v + k[2];
    } else if constexpr (M == CameraModel::kPinhole) {
      px[0] = k[0] * u + k[2], px[1] = k[1] * v + k[3];
    } else if constexpr (M == CameraModel::kSimpleRadial) {
      const T d = 1.0 + k[3] * r2;
      px[0] = k[0] * d * u + k[1], px[1] = k[0] * d * v + k[2];
    } else {
      const T d = 1.0 + r2 * (k[3] + k[4] * r2);
      px[0] = k[0] * d * u + k[1], px[1] = k[0] * d * v + k[2];
    }
  }
}

// Blocks (rotation+translation as one angle-axis pose, or quaternion and translation apart).
template <CameraModel M, RotationType R>
struct SplitError {
  double x, y;
  template <class T>
  bool operator()(const T* rot, const T* trans, const T* intr, const T* X, T* r) const {
    T p[3];
    if constexpr (R == RotationType::kAngleAxis)
      ceres::AngleAxisRotatePoint(rot, X, p);
    else
      ceres::QuaternionRotatePoint(rot, X, p);
    p[0] += trans[0], p[1] += trans[1], p[2] += trans[2];
    T px[2];
    projectT<M>(intr, p, px);
    r[0] = px[0] - x, r[1] = px[1] - y;
    return true;
  }
};

template <CameraModel M>
struct PoseError {  // angle-axis pose (6) block
  double x, y;
  template <class T>
  bool operator()(const T* pose, const T* intr, const T* X, T* r) const {
    return SplitError<M, RotationType::kAngleAxis>{x, y}(pose, pose + 3, intr, X, r);
  }
};

template <CameraModel M>
struct JointError {  // pose (6) + intrinsics (K) in one block
  double x, y;
  template <class T>
  bool operator()(const T* cam, const T* X, T* r) const {
    return SplitError<M, RotationType::kAngleAxis>{x, y}(cam, cam + 3, cam + 6, X, r);
  }
};

ceres::LossFunction* makeLoss(const Options& o) {
  switch (o.loss) {
    case LossType::kTrivial:
      return nullptr;
    case LossType::kHuber:
      return new ceres::HuberLoss(o.lossScale);
    case LossType::kCauchy:
      return new ceres::CauchyLoss(o.lossScale);
    case LossType::kSoftL1:
      return new ceres::SoftLOneLoss(o.lossScale);
  }
  return nullptr;
}

// Holds the masked coordinates of a block: constant, a subset manifold, or nothing.
void hold(ceres::Problem& pb, double* block, int size, std::uint32_t mask) {
  const std::uint32_t full = (1u << size) - 1;
  if ((mask & full) == full) {
    pb.SetParameterBlockConstant(block);
  } else if (mask & full) {
    std::vector<int> fixed;
    for (int k = 0; k < size; ++k)
      if (mask >> k & 1) fixed.push_back(k);
    pb.SetManifold(block, new ceres::SubsetManifold(size, fixed));
  }
}

template <CameraModel M>
CeresResult run(Problem& p, const Options& o, CeresSolver solver, CeresBlocks blocks) {
  constexpr int K = numIntrinsics(M);
  const Structure s = buildStructure(p, o, false);  // the effective constant masks
  const int ni = s.numImages;
  const bool quat = p.rotation == RotationType::kQuaternion;
  const bool joint = blocks == CeresBlocks::kJoint;
  if (joint && quat) throw Error("Ceres peer: joint blocks need angle-axis rotations");
  // Storage: pose 6 (angle-axis) or rot 4 + t 3; intrinsics; points; joint: 6 + K per image.
  std::vector<double> pose(ni * 7), intr(s.numCameras * K), pts(s.numPoints * 3), cam(ni * (6 + K));
  for (int i = 0; i < ni; ++i) {
    const auto& im = p.images[i];
    for (int k = 0; k < 4; ++k) pose[7 * i + k] = im.rotation[k];
    const int tOff = quat ? 4 : 3;
    for (int k = 0; k < 3; ++k) pose[7 * i + tOff + k] = im.translation[k];
    if (joint) {
      for (int k = 0; k < 3; ++k) cam[(6 + K) * i + k] = im.rotation[k];
      for (int k = 0; k < 3; ++k) cam[(6 + K) * i + 3 + k] = im.translation[k];
      for (int k = 0; k < K; ++k) cam[(6 + K) * i + 6 + k] = p.cameras[im.camera].params[k];
    }
  }
  for (int c = 0; c < s.numCameras; ++c)
    for (int k = 0; k < K; ++k) intr[K * c + k] = p.cameras[c].params[k];
  for (int j = 0; j < s.numPoints; ++j)
    for (int k = 0; k < 3; ++k) pts[3 * j + k] = p.points[j].xyz[k];
  if (joint) {
    std::vector<int> users(s.numCameras, 0);
    for (int i = 0; i < ni; ++i) ++users[p.images[i].camera];
    for (int u : users)
      if (u > 1) throw Error("Ceres peer: joint blocks need one intrinsics block per image");
  }

  ceres::Problem::Options po;
  po.loss_function_ownership = ceres::TAKE_OWNERSHIP;
  ceres::Problem pb(po);
  for (const auto& ob : p.observations) {
    const int i = ob.image, c = p.images[i].camera;
    double* X = &pts[3 * ob.point];
    if (joint) {
      auto* f = new ceres::AutoDiffCostFunction<JointError<M>, 2, 6 + K, 3>(
          new JointError<M>{ob.x, ob.y});
      pb.AddResidualBlock(f, makeLoss(o), &cam[(6 + K) * i], X);
    } else if (!quat) {
      auto* f =
          new ceres::AutoDiffCostFunction<PoseError<M>, 2, 6, K, 3>(new PoseError<M>{ob.x, ob.y});
      pb.AddResidualBlock(f, makeLoss(o), &pose[7 * i], &intr[K * c], X);
    } else {
      auto* f =
          new ceres::AutoDiffCostFunction<SplitError<M, RotationType::kQuaternion>, 2, 4, 3, K, 3>(
              new SplitError<M, RotationType::kQuaternion>{ob.x, ob.y});
      pb.AddResidualBlock(f, makeLoss(o), &pose[7 * i], &pose[7 * i + 4], &intr[K * c], X);
    }
  }
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (int j = 0; j < s.numPoints; ++j)
    if (pb.HasParameterBlock(&pts[3 * j])) {
      ordering->AddElementToGroup(&pts[3 * j], 0);
      if (s.pointConstant[j]) pb.SetParameterBlockConstant(&pts[3 * j]);
    }
  for (int i = 0; i < ni; ++i) {
    const std::uint32_t pm = s.poseConstant[i];
    const int c = p.images[i].camera;
    if (joint) {
      if (!pb.HasParameterBlock(&cam[(6 + K) * i])) continue;
      ordering->AddElementToGroup(&cam[(6 + K) * i], 1);
      hold(pb, &cam[(6 + K) * i], 6 + K, pm | (s.cameraConstant[c] << 6));
    } else if (!quat) {
      if (!pb.HasParameterBlock(&pose[7 * i])) continue;
      ordering->AddElementToGroup(&pose[7 * i], 1);
      hold(pb, &pose[7 * i], 6, pm);
    } else {
      if (!pb.HasParameterBlock(&pose[7 * i])) continue;
      ordering->AddElementToGroup(&pose[7 * i], 1);
      ordering->AddElementToGroup(&pose[7 * i + 4], 1);
      if ((pm & 7) == 7)
        pb.SetParameterBlockConstant(&pose[7 * i]);
      else if (pm & 7)
        throw Error("Ceres peer: a partly constant quaternion is not supported");
      else
        pb.SetManifold(&pose[7 * i], new ceres::QuaternionManifold);
      hold(pb, &pose[7 * i + 4], 3, pm >> 3);
    }
  }
  if (!joint)
    for (int c = 0; c < s.numCameras; ++c)
      if (pb.HasParameterBlock(&intr[K * c])) {
        ordering->AddElementToGroup(&intr[K * c], 1);
        hold(pb, &intr[K * c], K, s.cameraConstant[c]);
      }

  ceres::Solver::Options so;
  so.minimizer_type = ceres::TRUST_REGION;
  so.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  so.linear_solver_type = solver == CeresSolver::kDenseSchur    ? ceres::DENSE_SCHUR
                          : solver == CeresSolver::kSparseSchur ? ceres::SPARSE_SCHUR
                                                                : ceres::ITERATIVE_SCHUR;
  so.preconditioner_type =
      o.preconditioner == PreconditionerType::kSchurJacobi ? ceres::SCHUR_JACOBI : ceres::JACOBI;
  so.linear_solver_ordering = ordering;
  so.num_threads = o.numThreads > 0 ? o.numThreads : 1;
  so.max_num_iterations = o.maxNumIterations;
  so.max_solver_time_in_seconds = o.maxSolverTimeSeconds;
  so.function_tolerance = o.functionTolerance;
  so.gradient_tolerance = o.gradientTolerance;
  so.parameter_tolerance = o.parameterTolerance;
  so.initial_trust_region_radius = o.initialTrustRegionRadius;
  so.max_trust_region_radius = o.maxTrustRegionRadius;
  so.min_trust_region_radius = o.minTrustRegionRadius;
  so.min_relative_decrease = o.minRelativeDecrease;
  so.min_lm_diagonal = o.minLmDiagonal;
  so.max_lm_diagonal = o.maxLmDiagonal;
  so.max_num_consecutive_invalid_steps = o.maxNumConsecutiveInvalidSteps;
  so.jacobi_scaling = o.jacobiScaling;
  so.eta = o.eta;
  so.min_linear_solver_iterations = o.minLinearSolverIterations;
  so.max_linear_solver_iterations = o.maxLinearSolverIterations;
  so.logging_type = ceres::SILENT;
  so.minimizer_progress_to_stdout = o.verbose;
  std::string err;
  if (!so.IsValid(&err)) throw Error("Ceres peer: " + err);
  ceres::Solver::Summary sum;
  ceres::Solve(so, &pb, &sum);

  for (int i = 0; i < ni; ++i) {
    auto& im = p.images[i];
    if (joint) {
      for (int k = 0; k < 3; ++k) im.rotation[k] = cam[(6 + K) * i + k];
      for (int k = 0; k < 3; ++k) im.translation[k] = cam[(6 + K) * i + 3 + k];
      for (int k = 0; k < K; ++k) p.cameras[im.camera].params[k] = cam[(6 + K) * i + 6 + k];
    } else {
      for (int k = 0; k < 4; ++k) im.rotation[k] = pose[7 * i + k];
      for (int k = 0; k < 3; ++k) im.translation[k] = pose[7 * i + (quat ? 4 : 3) + k];
    }
  }
  if (!joint)
    for (int c = 0; c < s.numCameras; ++c)
      for (int k = 0; k < K; ++k) p.cameras[c].params[k] = intr[K * c + k];
  for (int j = 0; j < s.numPoints; ++j)
    for (int k = 0; k < 3; ++k) p.points[j].xyz[k] = pts[3 * j + k];

  CeresResult r;
  r.initialCost = sum.initial_cost;
  r.finalCost = sum.final_cost;
  r.iterations = static_cast<int>(sum.iterations.size()) - 1;
  for (size_t k = 1; k < sum.iterations.size(); ++k) {
    r.successfulSteps += sum.iterations[k].step_is_successful ? 1 : 0;
    r.linearSolverIterations += sum.iterations[k].linear_solver_iterations;
  }
  r.converged = sum.termination_type == ceres::CONVERGENCE;
  r.usable = sum.IsSolutionUsable();
  r.totalSeconds = sum.total_time_in_seconds;
  r.preprocessorSeconds = sum.preprocessor_time_in_seconds;
  r.minimizerSeconds = sum.minimizer_time_in_seconds;
  r.jacobianSeconds = sum.jacobian_evaluation_time_in_seconds;
  r.residualSeconds = sum.residual_evaluation_time_in_seconds;
  r.linearSolverSeconds = sum.linear_solver_time_in_seconds;
  r.termination = ceres::TerminationTypeToString(sum.termination_type);
  r.message = sum.message;
  return r;
}

}  // namespace

const char* toString(CeresSolver s) {
  switch (s) {
    case CeresSolver::kDenseSchur:
      return "DENSE_SCHUR";
    case CeresSolver::kSparseSchur:
      return "SPARSE_SCHUR";
    case CeresSolver::kIterativeSchur:
      return "ITERATIVE_SCHUR";
  }
  return "?";
}

CeresResult solveWithCeres(Problem& p, const Options& o, CeresSolver solver, CeresBlocks blocks) {
  p.check();
  o.check();
  CeresResult r;
  switch (p.model) {
    case CameraModel::kSimplePinhole:
      r = run<CameraModel::kSimplePinhole>(p, o, solver, blocks);
      break;
    case CameraModel::kPinhole:
      r = run<CameraModel::kPinhole>(p, o, solver, blocks);
      break;
    case CameraModel::kSimpleRadial:
      r = run<CameraModel::kSimpleRadial>(p, o, solver, blocks);
      break;
    case CameraModel::kRadial:
      r = run<CameraModel::kRadial>(p, o, solver, blocks);
      break;
    case CameraModel::kBal:
      r = run<CameraModel::kBal>(p, o, solver, blocks);
      break;
    case CameraModel::kOpenCV:
    case CameraModel::kFullOpenCV:
      break;  // refused by p.check()
  }
  return r;
}

}  // namespace vidmap::ba::peer
