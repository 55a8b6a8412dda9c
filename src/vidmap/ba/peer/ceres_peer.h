// Ceres Solver as the peer of vidmap's bundle adjuster (tests and benchmarks only; built when
// Ceres is found). The same problem, loss, constant blocks and trust-region options are handed
// to Ceres with automatic differentiation and the points as the first elimination group.
#pragma once

#include <string>

#include "vidmap/ba/options.h"
#include "vidmap/ba/problem.h"

namespace vidmap::ba::peer {

enum class CeresSolver { kDenseSchur, kSparseSchur, kIterativeSchur };
const char* toString(CeresSolver s);

// Parameter blocks: kSplit is vidmap's parameterisation (pose: angle-axis+translation as one
// block, or quaternion and translation; intrinsics; point). kJoint puts pose and intrinsics in
// one block per image (the 9-parameter BAL camera of Ceres' bundle_adjuster example); it needs
// one intrinsics block per image and angle-axis rotations.
enum class CeresBlocks { kSplit, kJoint };

struct CeresResult {
  double initialCost = 0.0, finalCost = 0.0;
  int iterations = 0;  // LM iterations (Ceres' iterations minus iteration 0)
  int successfulSteps = 0;
  int linearSolverIterations = 0;
  bool converged = false;
  bool usable = false;
  double totalSeconds = 0.0, preprocessorSeconds = 0.0, minimizerSeconds = 0.0;
  double jacobianSeconds = 0.0, residualSeconds = 0.0, linearSolverSeconds = 0.0;
  std::string termination, message;
};

// Solves in place with the same Options (tolerances, loss, gauge, holds, threads).
CeresResult solveWithCeres(Problem& problem, const Options& options, CeresSolver solver,
                           CeresBlocks blocks = CeresBlocks::kSplit);

}  // namespace vidmap::ba::peer
