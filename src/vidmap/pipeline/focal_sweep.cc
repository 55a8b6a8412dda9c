#include "vidmap/pipeline/focal_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <tuple>
#include <utility>

#include "vidmap/core/camera_model.h"
#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::pipeline {

void FocalSweepOptions::check() const {
  for (double f : factors)
    if (!(f > 0.01 && f < 100))
      throw Error("focal_sweep.factors: each must lie in (0.01, 100), got " + std::to_string(f));
  for (double f : videoFactors)
    if (!(f > 0.01 && f < 100))
      throw Error("focal_sweep.video_factors: each must lie in (0.01, 100), got " +
                  std::to_string(f));
  checkRange("focal_sweep.video_max_keyframe_fraction", videoMaxKeyframeFraction, 0.0, 1.0);
  checkRange("focal_sweep.video_near_most", videoNearMost, 0.01, 1.0);
}

void recordMapperInput(sfm::Mapper& mapper, MapperInput* input, std::size_t maxBytes, bool* full) {
  *full = false;
  const auto over = [input, maxBytes, full] {
    if (input->bytes <= maxBytes) return false;
    *input = MapperInput{};
    *full = true;
    return true;
  };
  mapper.setKeyframeSink(
      [input, full, over](const sfm::Keyframe& kf, const std::vector<sfm::PairMatches>& p) {
        if (*full) return;
        input->keyframes.push_back(kf);
        input->pairs.push_back(p);
        input->bytes += kf.keypoints.size() *
                        (sizeof(kf.keypoints[0]) + sizeof(kf.normalized[0]) + sizeof(kf.colors[0]));
        for (const sfm::PairMatches& m : p) input->bytes += m.matches.size() * 2 * sizeof(int);
        over();
      });
  mapper.setTrackedSink([input, full, over](const sfm::TrackedFrame& f) {
    if (*full) return;
    input->tracked.emplace_back(input->keyframes.size(), f);
    input->bytes += f.keypoints.size() * (sizeof(f.keypoints[0]) + sizeof(int));
    over();
  });
}

FocalSweepTrial scoreTrial(const sfm::Mapper& mapper, const std::vector<FocalCheck>& focal) {
  FocalSweepTrial t;
  t.startFocalPx = 0;
  double errSum = 0;
  for (const sfm::Reconstruction* m : mapper.models()) {
    ++t.models;
    t.registered += m->numImages();
    const std::int64_t obs = m->numObservations();
    t.observations += obs;
    errSum += m->meanReprojectionError() * static_cast<double>(obs);
  }
  for (const FocalCheck& c : focal) t.suspect += c.suspect ? 1 : 0;
  t.meanErrorPx = t.observations ? errSum / static_cast<double>(t.observations) : 0;
  return t;
}

namespace {

// Better: more observations, then fewer suspect models, then the lower error.
bool better(const FocalSweepTrial& a, const FocalSweepTrial& b) {
  return std::make_tuple(a.observations, -a.suspect, -a.meanErrorPx) >
         std::make_tuple(b.observations, -b.suspect, -b.meanErrorPx);
}

}  // namespace

FocalSweep sweepFocal(const MapperInput& input, const sfm::Camera& camera0,
                      const sfm::MapperOptions& mapperOptions, const FocalSweepTrial& first,
                      const FocalCheckOptions& check, const FocalSweepOptions& options) {
  options.check();
  return sweepFocal(input, camera0, mapperOptions, first, check, options.factors, 0);
}

FocalSweep sweepFocal(const MapperInput& input, const sfm::Camera& camera0,
                      const sfm::MapperOptions& mapperOptions, const FocalSweepTrial& first,
                      const FocalCheckOptions& check, const std::vector<double>& factors,
                      double nearMost) {
  const auto t0 = std::chrono::steady_clock::now();
  FocalSweep s;
  s.ran = true;
  s.trials.push_back(first);
  s.trials.back().startFocalPx = camera0.params()[0];
  size_t best = 0;
  std::vector<std::unique_ptr<sfm::Mapper>> runs;  // nearMost > 0: every run after the first
  std::vector<std::vector<FocalCheck>> checks;
  const bool shared = modelNumFocals(camera0.model()) == 1;
  for (double factor : factors) {
    sfm::Camera camera = camera0;
    auto& p = camera.mutableParams();
    p[0] *= factor;
    if (!shared) p[1] *= factor;
    // Each run starts from its focal length: a self-calibration would replace it, and the
    // first run's was accepted or refused the same way every time (the dino ring at a lower
    // SIFT threshold: 408 px at sharpness 3.0 against the truth's 3310, every run the same).
    sfm::MapperOptions mo = mapperOptions;
    mo.selfCalibrateFocal = false;
    auto mapper = std::make_unique<sfm::Mapper>(camera, mo);
    size_t next = 0;  // the next tracked frame, in the order the first run received them
    for (size_t i = 0; i <= input.keyframes.size(); ++i) {
      for (; next < input.tracked.size() && input.tracked[next].first == i; ++next)
        mapper->addTrackedFrame(input.tracked[next].second);
      if (i < input.keyframes.size()) mapper->addKeyframe(input.keyframes[i], input.pairs[i]);
    }
    mapper->finish();
    std::vector<FocalCheck> focal;
    for (const sfm::Reconstruction* m : mapper->models()) focal.push_back(checkFocal(*m, check));
    FocalSweepTrial t = scoreTrial(*mapper, focal);
    t.startFocalPx = p[0];
    s.trials.push_back(t);
    if (nearMost > 0) {  // chosen below, from all runs
      runs.push_back(std::move(mapper));
      checks.push_back(std::move(focal));
    } else if (better(t, s.trials[best])) {
      best = s.trials.size() - 1;
      s.mapper = std::move(mapper);
      s.focal = std::move(focal);
    }
  }
  if (nearMost > 0) {
    std::int64_t most = 0;
    for (const FocalSweepTrial& t : s.trials) most = std::max(most, t.observations);
    for (size_t i = 1; i < s.trials.size(); ++i) {
      const FocalSweepTrial& t = s.trials[i];
      if (static_cast<double>(t.observations) >= nearMost * static_cast<double>(most) &&
          (static_cast<double>(s.trials[best].observations) <
               nearMost * static_cast<double>(most) ||
           t.meanErrorPx < s.trials[best].meanErrorPx))
        best = i;
    }
    if (best > 0) {
      s.mapper = std::move(runs[best - 1]);
      s.focal = std::move(checks[best - 1]);
    }
  }
  s.trials[best].chosen = true;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace vidmap::pipeline
