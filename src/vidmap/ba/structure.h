// The fixed structure of a solve, built once on the host and shared by the backends: which
// coordinates vary (after the gauge and the holds), where each lands in the reduced camera
// system, the observations by point and by image, and the "segments" of the explicit Schur
// complement.
//
// Camera-side columns. Each image has C expanded columns: rotation (3, local), translation (3)
// and, when any intrinsics vary, its camera's intrinsics (K). colMap sends each expanded column
// to a column of the reduced camera system (or -1 when held constant). Columns are ordered image
// by image: the image's pose coordinates, then the coordinates of its camera when no other image
// uses that camera ("exclusive"); the cameras shared by several images come last. So the block
// of image i is the contiguous range [exclOffset[i], exclOffset[i] + exclSize[i]) and the
// blocks of images i < k never overlap the upper triangle wrongly.
//
// Segments. The explicit S is built from blocks B(i, k) = sum of Jc_a' (delta I - P_a Jp_b') Jc_b
// over the observation pairs (a in image i, b in image k) of a common point, for i <= k (for
// i == k every ordered pair of the image's observations of one point). The pairs of each
// segment are listed in a fixed order, so the sums are the same on every backend and thread
// count, and no two segments write the same block: the reduction needs no atomics.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "vidmap/ba/options.h"
#include "vidmap/ba/problem.h"

namespace vidmap::ba {

// Leaves elements uninitialised on resize: the pair lists (millions of ints) are filled in
// parallel, and a serial zero fill first would touch every page from one thread.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using PairList = std::vector<int, NoInitAllocator<int>>;

struct Structure {
  CameraModel model = CameraModel::kSimplePinhole;
  RotationType rotation = RotationType::kAngleAxis;
  int K = 0;  // intrinsics per camera
  int C = 0;  // expanded camera-side columns per image: 6, or 6 + K when any intrinsics vary
  int numImages = 0, numCameras = 0, numPoints = 0;
  std::vector<int> imageCamera;

  // Active observations: those with at least one varying column (the others add fixedCost).
  std::vector<int> obsSource;  // index into Problem::observations
  std::vector<int> obsImage, obsPoint;
  std::vector<double> obsXY;
  int numObs() const { return static_cast<int>(obsImage.size()); }

  // Effective constant masks (Problem's, plus the gauge and the holds).
  std::vector<std::uint32_t> poseConstant, cameraConstant;
  std::vector<std::uint8_t> pointConstant;

  // Camera side.
  int nF = 0;
  std::vector<int> colMap;  // numImages * C
  std::vector<int> exclOffset, exclSize;
  std::vector<int> imageShared;               // shared camera of the image, or -1
  std::vector<int> sharedOffset, sharedSize;  // per camera (size 0: exclusive or constant)
  std::vector<int> sharedCameras;             // cameras with sharedSize > 0
  int sharedBegin = 0;                        // first shared column (all exclusive ones before)
  std::vector<int> cameraCol;                 // numCameras * K: column of each intrinsic or -1
  std::vector<int> sharedImageStart, sharedImages;  // CSR over sharedCameras: their images

  // Points.
  int nE = 0;
  std::vector<int> pointCol;   // per point: first column among the point columns, or -1
  std::vector<int> varPoints;  // points with pointCol >= 0
  std::vector<int> pointObsStart, pointObs;  // CSR: active observations by point
  std::vector<int> imageObsStart, imageObs;  // CSR: active observations by image

  // Segments (all image pairs for the explicit system, only (i, i) otherwise).
  bool allSegments = false;
  std::vector<int> segA, segB, segStart;      // segment s = (segA, segB), pairs [segStart[s], +1)
  PairList pairA, pairB;                      // observation pairs
  std::vector<int> diagSegment;               // per image, its (i, i) segment or -1
  std::vector<int> imageSegStart, imageSegs;  // CSR: segments that touch each image

  // Ambient blocks that vary (for |x| and |x - x'| as Ceres measures them).
  std::vector<std::uint8_t> rotationVaries, translationVaries, cameraVaries;

  // Report.
  int numPointsHeld = 0, numImagesUnobserved = 0, numCamerasUnobserved = 0;
  std::string gaugeNote;
};

// Builds the structure. explicitSchur: list every segment (else only the diagonal ones).
Structure buildStructure(const Problem& problem, const Options& options, bool explicitSchur);
// Lists the segments again (every one, or only the diagonal ones): the solver builds the
// structure once, learns nF, then chooses the linear solver.
void listSegments(Structure& s, bool explicitSchur);

// Cost 0.5 sum rho(|r|^2) of the observations that are not active (all their blocks constant).
double fixedCost(const Problem& problem, const Structure& s, const Options& options);

}  // namespace vidmap::ba
