// The Ceres side of the H200 comparison, as a program built on the development machine and
// carried to the GPU host with its runtime libraries (shared/device/README.md): solves BAL
// problems with Ceres (DENSE_SCHUR, SPARSE_SCHUR, ITERATIVE_SCHUR, Ceres' joint 9-parameter
// cameras) with vidmap's default options, one JSON object per solve.
//
//   ba_ceres_peer [--threads N] [--ceres dense,sparse,iterative] [--max-iterations N] file ...
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "ba_common.h"
#include "vidmap/ba/peer/ceres_peer.h"

using namespace vidmap;

int main(int argc, char** argv) {
  int threads = 1, maxIterations = 50;
  std::vector<std::string> solvers = {"dense", "sparse", "iterative"}, problems;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::stoi(argv[++i]);
    else if (a == "--max-iterations" && i + 1 < argc)
      maxIterations = std::stoi(argv[++i]);
    else if (a == "--ceres" && i + 1 < argc) {
      solvers.clear();
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');) solvers.push_back(t);
    } else
      problems.push_back(a);
  }
  if (problems.empty()) problems = bench::defaultProblems();
  try {
    for (const auto& name : problems) {
      const ba::Problem problem = bench::loadProblem(name);
      const bool joint =
          problem.model == ba::CameraModel::kBal && problem.cameras.size() == problem.images.size();
      ba::Options o;
      o.numThreads = threads;
      o.maxNumIterations = maxIterations;
      for (const auto& cs : solvers) {
        const auto solver = cs == "dense"    ? ba::peer::CeresSolver::kDenseSchur
                            : cs == "sparse" ? ba::peer::CeresSolver::kSparseSchur
                                             : ba::peer::CeresSolver::kIterativeSchur;
        ba::Problem p = problem;
        const auto r = ba::peer::solveWithCeres(
            p, o, solver, joint ? ba::peer::CeresBlocks::kJoint : ba::peer::CeresBlocks::kSplit);
        bench::JsonLine j;
        j.add("problem", bench::baseName(name))
            .add("solver", std::string("ceres-") + ba::peer::toString(solver))
            .add("blocks", joint ? "joint" : "split")
            .add("threads", threads)
            .add("initial_cost", r.initialCost)
            .add("final_cost", r.finalCost)
            .add("iterations", r.iterations)
            .add("termination", r.termination)
            .add("total_s", r.totalSeconds)
            .add("per_iteration_s", r.minimizerSeconds / std::max(1, r.iterations))
            .add("linear_solver_s", r.linearSolverSeconds)
            .add("jacobian_s", r.jacobianSeconds);
        std::printf("%s\n", j.str().c_str());
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ba_ceres_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
