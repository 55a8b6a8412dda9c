// Bundle adjustment benchmark: time to convergence and per iteration of vidmap (CPU, and CUDA
// when built and present) and, when built with Ceres, Ceres DENSE_SCHUR, SPARSE_SCHUR and
// ITERATIVE_SCHUR on the same problems, the same cores and the same options, in one run.
// Prints one JSON object per solve (and writes them to --out).
//
//   ba_bench [--threads N] [--backends cpu,cuda] [--ceres dense,sparse,iterative|none]
//            [--vidmap-solvers auto,dense,iterative] [--max-iterations N] [--out FILE]
//            [--verbose]    (vidmap's preprocessor phases and iterations on stderr)
//            [--reps N]     (each vidmap solve N times after the warm-up; medians reported)
//            [--cpu-avx2 on|off] (the CPU backend's AVX2 segment sums, ba::Options::cpuAvx2)
//            [--cuda-one-block-cholesky N[,N...]] (ba::Options::cudaOneBlockCholeskyMaxColumns
//                                  of each CUDA solve: 0 cuSOLVER, up to 64 the one-block kernel)
//            [--cuda-graphs on|off|both]  (the CUDA backend's graph path, its phase path, or
//                                          both; per LM iteration: host ms, and with graphs
//                                          the GPU ms of the replays from CUDA events)
//            [problem ...]        (BAL files or synthetic:IMAGESxPOINTS[:MODEL]; default: the
//                                  BAL problems of shared/data/bal)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ba_common.h"
#include "vidmap/ba/backend.h"
#include "vidmap/ba/solver.h"
#include "vidmap/core/build_info.h"
#include "vidmap/core/parallel.h"
#include "vidmap/gpu/context.h"
#if defined(VIDMAP_HAVE_CERES)
#include "vidmap/ba/peer/ceres_peer.h"
#endif

using namespace vidmap;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) out.push_back(t);
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = maxThreads();
  int maxIterations = 50;
  std::vector<std::string> backends = {"cpu"}, ceresSolvers = {"dense", "sparse", "iterative"},
                           vidmapSolvers = {"auto"}, problems;
  std::string outPath;
  bool verbose = false;
  int reps = 1;
  std::string graphs = "on";
  std::string cpuAvx2 = "on";
  std::string oneBlockCholesky = "0";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("missing value after " + a);
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::stoi(next());
    else if (a == "--backends")
      backends = split(next());
    else if (a == "--ceres")
      ceresSolvers = split(next());
    else if (a == "--vidmap-solvers")
      vidmapSolvers = split(next());
    else if (a == "--max-iterations")
      maxIterations = std::stoi(next());
    else if (a == "--out")
      outPath = next();
    else if (a == "--reps")
      reps = std::max(1, std::stoi(next()));
    else if (a == "--cuda-graphs")
      graphs = next();
    else if (a == "--cuda-one-block-cholesky")
      oneBlockCholesky = next();
    else if (a == "--cpu-avx2")
      cpuAvx2 = next();
    else if (a == "--verbose")
      verbose = true;
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    } else
      problems.push_back(a);
  }
  if (problems.empty()) problems = bench::defaultProblems();
  if (problems.empty()) {
    std::fprintf(stderr,
                 "no problems: pass BAL files or synthetic:IxP, or provide shared/data/bal\n");
    return 2;
  }
  // Start the CUDA driver and the solver libraries before timing anything. CUDA solves run on
  // one context, whose profiler times the graph replays.
  std::optional<gpu::Context> ctx;
  for (const auto& backend : backends)
    if (backend == "cuda" && ba::cudaBackendAvailable()) {
      if (!ctx) ctx.emplace(0);
      ba::SyntheticOptions so;
      so.numImages = 4;
      so.numPoints = 50;
      for (auto ls : {ba::LinearSolverType::kDenseSchur, ba::LinearSolverType::kIterativeSchur}) {
        ba::Problem warm = ba::makeSyntheticScene(so).initial;
        ba::Options ow;
        ow.backend = ba::BackendType::kCuda;
        ow.linearSolver = ls;
        ow.context = &*ctx;
        ba::solve(warm, ow);
      }
    }
  std::vector<std::string> lines;
  auto emit = [&](const bench::JsonLine& j) {
    lines.push_back(j.str());
    std::printf("%s\n", j.str().c_str());
    std::fflush(stdout);
  };
  // Every row, a result or an error, starts with the problem and the solver that made it.
  auto row = [](const std::string& problem, const std::string& solver) {
    bench::JsonLine j;
    j.add("problem", problem).add("solver", solver);
    return j;
  };
  for (const auto& name : problems) {
    ba::Problem problem;
    try {
      problem = bench::loadProblem(name);
    } catch (const std::exception& e) {
      emit(row(bench::baseName(name), "none").add("error", e.what()));
      continue;
    }
    const std::string pname = bench::baseName(name);
    ba::Options o;
    o.numThreads = threads;
    o.maxNumIterations = maxIterations;
    o.verbose = verbose;
    o.cpuAvx2 = cpuAvx2 != "off";
    for (const auto& backend : backends) {
      if (backend == "cuda" && !ba::cudaBackendAvailable()) {
        std::fprintf(stderr, "skipping cuda: no CUDA backend or device\n");
        continue;
      }
      std::vector<int> graphModes = {1};
      if (backend == "cuda") {
        if (graphs == "off") graphModes = {0};
        if (graphs == "both") graphModes = {1, 0};
      }
      // (graph mode, Options::cudaOneBlockCholeskyMaxColumns) of each CUDA solve.
      std::vector<std::pair<int, int>> modes;
      for (const int g : graphModes)
        for (const auto& v : backend == "cuda" ? split(oneBlockCholesky) : split("0"))
          modes.emplace_back(g, std::stoi(v));
      for (const auto& vs : vidmapSolvers)
        for (const auto& [graphMode, oneBlock] : modes) {
          ba::Options ov = o;
          ov.cudaOneBlockCholeskyMaxColumns = oneBlock;
          ov.backend = backend == "cuda" ? ba::BackendType::kCuda : ba::BackendType::kCpu;
          ov.linearSolver = vs == "dense"       ? ba::LinearSolverType::kDenseSchur
                            : vs == "iterative" ? ba::LinearSolverType::kIterativeSchur
                                                : ba::LinearSolverType::kAuto;
          ov.cudaGraphs = graphMode == 1;
          if (backend == "cuda") ov.context = &*ctx;
          ba::Summary s;
          std::vector<double> total, perIteration, iterationMedian, gpuPerIteration;
          try {
            for (int r = 0; r < reps; ++r) {
              ba::Problem p = problem;
              if (ctx) ctx->profiler().reset();
              s = ba::solve(p, ov);
              const int its = std::max(1, s.numIterations());
              total.push_back(s.totalSeconds);
              perIteration.push_back(s.minimizerSeconds / its);
              std::vector<double> itTimes;
              for (size_t k = 1; k < s.iterations.size(); ++k)
                itTimes.push_back(s.iterations[k].iterationTimeSeconds);
              iterationMedian.push_back(median(itTimes));
              if (backend == "cuda") {
                double ms = 0.0;
                for (const auto& k : ctx->profiler().stats())
                  if (k.name == "ba_step_graph" || k.name == "ba_linearize_graph") ms += k.gpuMs;
                gpuPerIteration.push_back(ms / its);
              }
            }
          } catch (const std::exception& e) {
            emit(row(pname, "vidmap-" + backend).add("error", e.what()));
            continue;
          }
          bench::JsonLine j = row(pname, "vidmap-" + backend);
          j.add("linear_solver", ba::toString(s.linearSolver))
              .add("threads", s.numThreads)
              .add("images", s.numImages)
              .add("points", s.numPoints)
              .add("observations", s.numObservations)
              .add("initial_cost", s.initialCost)
              .add("final_cost", s.finalCost)
              .add("iterations", s.numIterations())
              .add("successful", s.numSuccessfulSteps)
              .add("linear_iterations", s.numLinearSolverIterations)
              .add("termination", ba::toString(s.termination))
              .add("reps", reps)
              .add("total_s", median(total))
              .add("per_iteration_s", median(perIteration))
              .add("iteration_ms_median", 1e3 * median(iterationMedian))
              .add("preprocessor_s", s.preprocessorSeconds)
              .add("jacobian_s", s.jacobianEvaluationSeconds)
              .add("residual_s", s.residualEvaluationSeconds)
              .add("schur_s", s.schurSeconds)
              .add("linear_solve_s", s.linearSolveSeconds)
              .add("back_substitution_s", s.backSubstitutionSeconds)
              .add("commit", build::kGitCommit);
          if (backend == "cuda") {
            j.add("launch_mode", s.launchMode).add("one_block_cholesky_max_columns", oneBlock);
            if (graphMode == 1) j.add("graph_gpu_ms_per_iteration", median(gpuPerIteration));
          }
          emit(j);
        }
    }
#if defined(VIDMAP_HAVE_CERES)
    const bool joint =
        problem.model == ba::CameraModel::kBal && problem.cameras.size() == problem.images.size();
    for (const auto& cs : ceresSolvers) {
      if (cs != "dense" && cs != "sparse" && cs != "iterative") continue;  // e.g. "none"
      const auto solver = cs == "dense"    ? ba::peer::CeresSolver::kDenseSchur
                          : cs == "sparse" ? ba::peer::CeresSolver::kSparseSchur
                                           : ba::peer::CeresSolver::kIterativeSchur;
      ba::Problem p = problem;
      const auto r = ba::peer::solveWithCeres(
          p, o, solver, joint ? ba::peer::CeresBlocks::kJoint : ba::peer::CeresBlocks::kSplit);
      bench::JsonLine j = row(pname, std::string("ceres-") + ba::peer::toString(solver));
      j.add("blocks", joint ? "joint" : "split")
          .add("threads", threads)
          .add("initial_cost", r.initialCost)
          .add("final_cost", r.finalCost)
          .add("iterations", r.iterations)
          .add("successful", r.successfulSteps)
          .add("linear_iterations", r.linearSolverIterations)
          .add("termination", r.termination)
          .add("total_s", r.totalSeconds)
          .add("per_iteration_s", r.minimizerSeconds / std::max(1, r.iterations))
          .add("preprocessor_s", r.preprocessorSeconds)
          .add("jacobian_s", r.jacobianSeconds)
          .add("residual_s", r.residualSeconds)
          .add("linear_solver_s", r.linearSolverSeconds)
          .add("commit", build::kGitCommit);
      emit(j);
    }
#endif
  }
  if (!outPath.empty()) {
    std::ofstream f(outPath);
    for (const auto& l : lines) f << l << "\n";
  }
  return 0;
}
