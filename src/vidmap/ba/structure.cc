#include "vidmap/ba/structure.h"

#include <algorithm>
#include <cmath>

#include "vidmap/ba/dispatch.h"
#include "vidmap/ba/observation.h"
#include "vidmap/ba/rotation.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::ba {

namespace {

// Camera centre c = -R' t of an image.
void cameraCentre(const Problem& p, int i, double* c) {
  const auto& im = p.images[i];
  double R[9], zero[3] = {0, 0, 0}, tmp[3];
  if (p.rotation == RotationType::kAngleAxis)
    angleAxisRotate(im.rotation.data(), zero, tmp, R, nullptr);
  else
    quaternionRotate(im.rotation.data(), zero, tmp, R, nullptr);
  for (int k = 0; k < 3; ++k)
    c[k] =
        -(R[k] * im.translation[0] + R[3 + k] * im.translation[1] + R[6 + k] * im.translation[2]);
}

void applyGauge(const Problem& p, const std::vector<int>& imageObsCount, Structure& s) {
  int first = -1, second = -1;
  for (int i = 0; i < s.numImages; ++i) {
    if (imageObsCount[i] == 0) continue;
    if (first < 0)
      first = i;
    else if ((s.poseConstant[i] & Problem::kTranslationMask) != Problem::kTranslationMask) {
      second = i;
      break;
    }
  }
  if (first < 0) return;
  s.poseConstant[first] = Problem::kPoseMask;
  s.gaugeNote = "held pose of image " + std::to_string(first);
  if (second < 0) return;
  // Scaling the scene about the first camera's centre moves t of the second image along
  // R2 (c2 - c1); hold the coordinate that moves most.
  double c1[3], c2[3], d[3], R[9], zero[3] = {0, 0, 0}, tmp[3];
  cameraCentre(p, first, c1);
  cameraCentre(p, second, c2);
  for (int k = 0; k < 3; ++k) d[k] = c2[k] - c1[k];
  const auto& im = p.images[second];
  if (p.rotation == RotationType::kAngleAxis)
    angleAxisRotate(im.rotation.data(), zero, tmp, R, nullptr);
  else
    quaternionRotate(im.rotation.data(), zero, tmp, R, nullptr);
  int best = -1;
  double bestAbs = -1.0;
  for (int k = 0; k < 3; ++k) {
    if (s.poseConstant[second] & (1u << (3 + k))) continue;
    const double v = std::fabs(R[3 * k] * d[0] + R[3 * k + 1] * d[1] + R[3 * k + 2] * d[2]);
    if (v > bestAbs) bestAbs = v, best = k;
  }
  if (best < 0) return;
  s.poseConstant[second] |= 1u << (3 + best);
  s.gaugeNote += ", translation " + std::to_string(best) + " of image " + std::to_string(second);
}

void buildCsr(int n, const std::vector<int>& key, std::vector<int>& start, std::vector<int>& list) {
  start.assign(n + 1, 0);
  for (int k : key) ++start[k + 1];
  for (int i = 0; i < n; ++i) start[i + 1] += start[i];
  list.resize(key.size());
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (int o = 0; o < static_cast<int>(key.size()); ++o) list[fill[key[o]]++] = o;
}

}  // namespace

void listSegments(Structure& s, bool explicitSchur) {
  s.segA.clear(), s.segB.clear(), s.segStart.clear(), s.pairA.clear(), s.pairB.clear();
  s.allSegments = explicitSchur;
  s.diagSegment.assign(s.numImages, -1);
  const int n = s.numImages;
  auto imageVaries = [&](int i) { return s.exclSize[i] > 0 || s.imageShared[i] >= 0; };
  // The pairs (a, b) of image ia, a in ia's records (by point), b in a's point's records (by
  // image), b's image ib >= ia; a held point pairs a with itself only. Segment (ia, ib) lists
  // its pairs in this order. A compressed row storage, counted then filled: the first pass
  // counts each image's pairs by partner image, the second writes each pair straight into its
  // final place (no per-image buffers, no concatenation; the listing was most of the
  // preprocessor at 93 images, 1.8 million pairs).
  auto visit = [&](int ia, auto&& f) {
    for (int t = s.imageObsStart[ia]; t < s.imageObsStart[ia + 1]; ++t) {
      const int a = s.imageObs[t];
      const int j = s.obsPoint[a];
      if (s.pointCol[j] < 0) {
        f(a, a, ia);
        continue;
      }
      // A point's records are in image order (the records are sorted by image): start at the
      // first in image ia (a itself or before), and stop after image ia for the diagonal.
      const int* begin = s.pointObs.data() + s.pointObsStart[j];
      const int* end = s.pointObs.data() + s.pointObsStart[j + 1];
      begin = std::partition_point(begin, end, [&](int b) { return s.obsImage[b] < ia; });
      for (const int* u = begin; u != end; ++u) {
        const int b = *u;
        const int ib = s.obsImage[b];
        if (!explicitSchur && ib != ia) break;
        if (!imageVaries(ib)) continue;
        f(a, b, ib);
      }
    }
  };
  std::vector<std::vector<int>> partner(n), count(n);
  parallelForDynamic(
      n,
      [&](std::int64_t i) {
        const int ia = static_cast<int>(i);
        if (!imageVaries(ia)) return;
        std::vector<int> cnt(n, 0);
        std::vector<int>& ps = partner[ia];
        visit(ia, [&](int, int, int ib) {
          if (cnt[ib]++ == 0) ps.push_back(ib);
        });
        std::sort(ps.begin(), ps.end());
        for (int ib : ps) count[ia].push_back(cnt[ib]);
      },
      1);
  std::vector<int> segBase(n + 1, 0);
  s.segStart.push_back(0);
  for (int ia = 0; ia < n; ++ia) {
    segBase[ia] = static_cast<int>(s.segA.size());
    for (size_t k = 0; k < partner[ia].size(); ++k) {
      const int ib = partner[ia][k];
      if (ib == ia) s.diagSegment[ia] = static_cast<int>(s.segA.size());
      s.segA.push_back(ia);
      s.segB.push_back(ib);
      s.segStart.push_back(s.segStart.back() + count[ia][k]);
    }
  }
  // Left uninitialised by the allocator: the fill writes every element, in parallel.
  s.pairA.resize(static_cast<size_t>(s.segStart.back()));
  s.pairB.resize(static_cast<size_t>(s.segStart.back()));
  parallelForDynamic(
      n,
      [&](std::int64_t i) {
        const int ia = static_cast<int>(i);
        if (partner[ia].empty()) return;
        std::vector<int> pos(n, 0);
        for (size_t k = 0; k < partner[ia].size(); ++k)
          pos[partner[ia][k]] = s.segStart[segBase[ia] + static_cast<int>(k)];
        int* pa = s.pairA.data();
        int* pb = s.pairB.data();
        visit(ia, [&](int a, int b, int ib) {
          const int e = pos[ib]++;
          pa[e] = a, pb[e] = b;
        });
      },
      1);
  std::vector<int> segKey;
  std::vector<int> segOf;
  for (int g = 0; g < static_cast<int>(s.segA.size()); ++g) {
    segKey.push_back(s.segA[g]), segOf.push_back(g);
    if (s.segB[g] != s.segA[g]) segKey.push_back(s.segB[g]), segOf.push_back(g);
  }
  std::vector<int> idx;
  buildCsr(s.numImages, segKey, s.imageSegStart, idx);
  s.imageSegs.resize(idx.size());
  for (size_t t = 0; t < idx.size(); ++t) s.imageSegs[t] = segOf[idx[t]];
}

Structure buildStructure(const Problem& p, const Options& options, bool explicitSchur) {
  Structure s;
  s.model = p.model;
  s.rotation = p.rotation;
  s.K = numIntrinsics(p.model);
  s.numImages = static_cast<int>(p.images.size());
  s.numCameras = static_cast<int>(p.cameras.size());
  s.numPoints = static_cast<int>(p.points.size());
  const std::uint32_t camFull = (1u << s.K) - 1;
  for (const auto& im : p.images) s.imageCamera.push_back(im.camera);

  s.poseConstant.resize(s.numImages);
  s.cameraConstant.resize(s.numCameras);
  s.pointConstant.resize(s.numPoints);
  for (int i = 0; i < s.numImages; ++i)
    s.poseConstant[i] = p.images[i].constantMask & Problem::kPoseMask;
  for (int c = 0; c < s.numCameras; ++c) s.cameraConstant[c] = p.cameras[c].constantMask & camFull;
  for (int j = 0; j < s.numPoints; ++j) s.pointConstant[j] = p.points[j].constant ? 1 : 0;

  std::vector<int> imageObsCount(s.numImages, 0), pointObsCount(s.numPoints, 0);
  for (const auto& o : p.observations) ++imageObsCount[o.image], ++pointObsCount[o.point];

  for (int j = 0; j < s.numPoints; ++j)
    if (options.holdSingleViewPoints && pointObsCount[j] == 1 && !s.pointConstant[j])
      s.pointConstant[j] = 1, ++s.numPointsHeld;
  std::vector<int> cameraUsers(s.numCameras, 0);
  for (int i = 0; i < s.numImages; ++i) {
    if (imageObsCount[i] == 0) {
      s.poseConstant[i] = Problem::kPoseMask;
      ++s.numImagesUnobserved;
    } else {
      ++cameraUsers[p.images[i].camera];
    }
  }
  for (int c = 0; c < s.numCameras; ++c)
    if (cameraUsers[c] == 0) s.cameraConstant[c] = camFull, ++s.numCamerasUnobserved;
  if (options.gauge == Gauge::kFirstImageAndScale) applyGauge(p, imageObsCount, s);

  auto poseVaries = [&](int i) { return s.poseConstant[i] != Problem::kPoseMask; };
  auto camVaries = [&](int c) { return s.cameraConstant[c] != camFull; };
  bool anyCam = false;
  for (int c = 0; c < s.numCameras; ++c) anyCam = anyCam || camVaries(c);
  s.C = kPoseDims + (anyCam ? s.K : 0);

  // Active observations, ordered by image, then point: each image's records are contiguous and
  // the pairs of a segment walk both images' records forwards (cache and coalescing).
  s.obsSource.reserve(p.observations.size());
  for (int o = 0; o < static_cast<int>(p.observations.size()); ++o) {
    const auto& ob = p.observations[o];
    const bool active =
        poseVaries(ob.image) || camVaries(p.images[ob.image].camera) || !s.pointConstant[ob.point];
    if (active) s.obsSource.push_back(o);
  }
  // Stable sort by (image, point): two stable counting sorts, by point, then by image (linear;
  // a comparison sort of a large problem's observations cost tens of milliseconds).
  {
    auto countingSort = [&](int keys, auto key) {
      std::vector<int> start(keys + 1, 0), out(s.obsSource.size());
      for (int o : s.obsSource) ++start[key(o) + 1];
      for (int k = 0; k < keys; ++k) start[k + 1] += start[k];
      for (int o : s.obsSource) out[start[key(o)]++] = o;
      s.obsSource.swap(out);
    };
    countingSort(s.numPoints, [&](int o) { return p.observations[o].point; });
    countingSort(s.numImages, [&](int o) { return p.observations[o].image; });
  }
  s.obsImage.reserve(s.obsSource.size());
  s.obsPoint.reserve(s.obsSource.size());
  s.obsXY.reserve(2 * s.obsSource.size());
  for (int o : s.obsSource) {
    const auto& ob = p.observations[o];
    s.obsImage.push_back(ob.image);
    s.obsPoint.push_back(ob.point);
    s.obsXY.push_back(ob.x);
    s.obsXY.push_back(ob.y);
  }
  if (s.obsImage.empty()) throw Error("bundle adjustment problem: every parameter is constant");

  // Camera-side columns.
  const int C = s.C;
  s.colMap.assign(static_cast<size_t>(s.numImages) * C, -1);
  s.exclOffset.assign(s.numImages, 0);
  s.exclSize.assign(s.numImages, 0);
  s.imageShared.assign(s.numImages, -1);
  s.sharedOffset.assign(s.numCameras, -1);
  s.sharedSize.assign(s.numCameras, 0);
  int col = 0;
  for (int i = 0; i < s.numImages; ++i) {
    s.exclOffset[i] = col;
    for (int k = 0; k < kPoseDims; ++k)
      if (!(s.poseConstant[i] & (1u << k))) s.colMap[static_cast<size_t>(i) * C + k] = col++;
    const int cam = p.images[i].camera;
    if (C > kPoseDims && camVaries(cam) && cameraUsers[cam] == 1 && imageObsCount[i] > 0)
      for (int k = 0; k < s.K; ++k)
        if (!(s.cameraConstant[cam] & (1u << k)))
          s.colMap[static_cast<size_t>(i) * C + kPoseDims + k] = col++;
    s.exclSize[i] = col - s.exclOffset[i];
  }
  for (int c = 0; c < s.numCameras; ++c) {
    if (!(camVaries(c) && cameraUsers[c] > 1)) continue;
    s.sharedOffset[c] = col;
    for (int k = 0; k < s.K; ++k)
      if (!(s.cameraConstant[c] & (1u << k))) ++col;
    s.sharedSize[c] = col - s.sharedOffset[c];
    s.sharedCameras.push_back(c);
  }
  s.nF = col;
  s.sharedBegin = s.sharedCameras.empty() ? s.nF : s.sharedOffset[s.sharedCameras.front()];
  s.sharedImageStart.assign(s.sharedCameras.size() + 1, 0);
  for (size_t q = 0; q < s.sharedCameras.size(); ++q) {
    const int c = s.sharedCameras[q];
    for (int i = 0; i < s.numImages; ++i) {
      if (p.images[i].camera != c || imageObsCount[i] == 0) continue;
      s.sharedImages.push_back(i);
      s.imageShared[i] = c;
      int r = s.sharedOffset[c];
      for (int k = 0; k < s.K; ++k)
        if (!(s.cameraConstant[c] & (1u << k)))
          s.colMap[static_cast<size_t>(i) * C + kPoseDims + k] = r++;
    }
    s.sharedImageStart[q + 1] = static_cast<int>(s.sharedImages.size());
  }

  s.cameraCol.assign(static_cast<size_t>(s.numCameras) * s.K, -1);
  for (int i = 0; i < s.numImages; ++i)
    for (int k = 0; C > kPoseDims && k < s.K; ++k) {
      const int m = s.colMap[static_cast<size_t>(i) * C + kPoseDims + k];
      if (m >= 0) s.cameraCol[static_cast<size_t>(p.images[i].camera) * s.K + k] = m;
    }

  // Points.
  s.pointCol.assign(s.numPoints, -1);
  int pc = 0;
  for (int j = 0; j < s.numPoints; ++j)
    if (!s.pointConstant[j] && pointObsCount[j] > 0) {
      s.pointCol[j] = pc;
      pc += 3;
      s.varPoints.push_back(j);
    }
  s.nE = pc;

  buildCsr(s.numPoints, s.obsPoint, s.pointObsStart, s.pointObs);
  buildCsr(s.numImages, s.obsImage, s.imageObsStart, s.imageObs);

  listSegments(s, explicitSchur);

  s.rotationVaries.resize(s.numImages);
  s.translationVaries.resize(s.numImages);
  s.cameraVaries.resize(s.numCameras);
  for (int i = 0; i < s.numImages; ++i) {
    s.rotationVaries[i] = (s.poseConstant[i] & Problem::kRotationMask) != Problem::kRotationMask;
    s.translationVaries[i] =
        (s.poseConstant[i] & Problem::kTranslationMask) != Problem::kTranslationMask;
  }
  for (int c = 0; c < s.numCameras; ++c) s.cameraVaries[c] = camVaries(c) ? 1 : 0;
  return s;
}

double fixedCost(const Problem& p, const Structure& s, const Options& options) {
  const LossParams L = makeLoss(options.loss, options.lossScale);
  std::vector<char> active(p.observations.size(), 0);
  for (int o : s.obsSource) active[o] = 1;
  double cost = 0.0;
  dispatchModel(p.model, p.rotation, [&](auto mTag, auto rTag) {
    constexpr CameraModel M = decltype(mTag)::value;
    constexpr RotationType R = decltype(rTag)::value;
    for (size_t o = 0; o < p.observations.size(); ++o) {
      if (active[o]) continue;
      const auto& ob = p.observations[o];
      const auto& im = p.images[ob.image];
      const double xy[2] = {ob.x, ob.y};
      cost += observationCost<M, R>(L, im.rotation.data(), im.translation.data(),
                                    p.cameras[im.camera].params.data(),
                                    p.points[ob.point].xyz.data(), xy);
    }
  });
  return cost;
}

}  // namespace vidmap::ba
