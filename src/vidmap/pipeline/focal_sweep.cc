#include "vidmap/pipeline/focal_sweep.h"

#include <chrono>
#include <tuple>

#include "vidmap/core/camera_model.h"
#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::pipeline {

void FocalSweepOptions::check() const {
  for (double f : factors)
    if (!(f > 0.01 && f < 100))
      throw Error("focal_sweep.factors: each must lie in (0.01, 100), got " + std::to_string(f));
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
  const auto t0 = std::chrono::steady_clock::now();
  FocalSweep s;
  s.ran = true;
  s.trials.push_back(first);
  s.trials.back().startFocalPx = camera0.params()[0];
  size_t best = 0;
  const bool shared = modelNumFocals(camera0.model()) == 1;
  for (double factor : options.factors) {
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
    for (size_t i = 0; i < input.keyframes.size(); ++i)
      mapper->addKeyframe(input.keyframes[i], input.pairs[i]);
    mapper->finish();
    std::vector<FocalCheck> focal;
    for (const sfm::Reconstruction* m : mapper->models()) focal.push_back(checkFocal(*m, check));
    FocalSweepTrial t = scoreTrial(*mapper, focal);
    t.startFocalPx = p[0];
    s.trials.push_back(t);
    if (better(t, s.trials[best])) {
      best = s.trials.size() - 1;
      s.mapper = std::move(mapper);
      s.focal = std::move(focal);
    }
  }
  s.trials[best].chosen = true;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace vidmap::pipeline
