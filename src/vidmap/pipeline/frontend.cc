#include "vidmap/pipeline/frontend.h"

#include <algorithm>
#include <cmath>

#include "vidmap/core/check.h"
#include "vidmap/geometry/two_view.h"

namespace vidmap::pipeline {

void FrontendOptions::check() const {
  sift.check();
  match.check();
  gate.check();
  checkRange("frontend.activeKeyframes", activeKeyframes, 1, 1000);
  checkRange("frontend.historyKeyframes", historyKeyframes, 0, 100000);
  checkRange("frontend.minFeatures", minFeatures, 8, 1000000);
  checkRange("frontend.guideBandPx", guideBandPx, 0.1, 1000.0);
  checkRange("frontend.guideIterations", guideIterations, 1, 100000);
  checkRange("frontend.minPairMatches", minPairMatches, 5, 1000000);
  checkRange("frontend.exhaustivePhotos", exhaustivePhotos, 0, 100000);
}

void FrontendStats::writeTo(io::RunRecord& r) const {
  r.setCount("keyframes", keyframes);
  r.setCount("frames_dropped_by_gate", dropped);
  r.setCount("frames_featureless", featureless);
  r.setCount("features", features);
  r.setCount("plain_matches", plainMatches);
  r.setCount("guided_matches", guidedMatches);
  r.setCount("source_matches", sourceMatches);
  r.setCount("source_only_matches", sourceOnlyMatches);
  r.setCount("sift_calls", siftCalls);
  r.setCount("frames_gated_by_tracks", trackGated);
  r.setCount("guides", guides);
  r.setCount("guide_failures", guideFailures);
}

Frontend::Frontend(const FrontendOptions& options, io::RunRecord& record,
                   const gpu::Context* siftContext, const gpu::Context* matchContext)
    : options_(options),
      record_(record),
      sift_((options.check(), options.sift), siftContext),
      matcher_(options.match, matchContext),
      gate_(options.gate) {}

Frontend::~Frontend() = default;

namespace {

Rgb8 sampleColor(const RgbImage& rgb, double x, double y) {
  if (rgb.empty()) return {};
  const int xi = std::clamp(static_cast<int>(std::lround(x)), 0, rgb.width() - 1);
  const int yi = std::clamp(static_cast<int>(std::lround(y)), 0, rgb.height() - 1);
  return rgb(xi, yi);
}

std::array<double, 9> rowMajorK(const geometry::Pinhole& p) {
  return {p.fx, 0, p.cx, 0, p.fy, p.cy, 0, 0, 1};
}

}  // namespace

void ActiveKeyframe::undistortWith(const sfm::Camera& camera) {
  if (undistortedWith == camera.params()) return;
  const bool distorted = camera.hasDistortion();
  for (size_t i = 0; i < raw.size(); ++i) {
    const sfm::Vec2 u = distorted ? camera.undistortPixel(raw[i]) : raw[i];
    features.keypoints[i].x = static_cast<float>(u.x());
    features.keypoints[i].y = static_cast<float>(u.y());
  }
  undistortedWith = camera.params();
}

FrameOutcome Frontend::process(const io::Frame& frame, const sfm::Camera& camera,
                               KeyframeOutput* out, sfm::TrackedFrame* dropped) {
  ++stats_.frames;
  for (PairMatchSource* s : sources_) s->onFrame(frame);
  // The keyframe gate on the motion of a source's tracks (docs/architecture.md, "Pair sources"): a
  // frame it drops costs no SIFT and no matching. With too few tracks (or none) the gate below
  // decides on descriptor matches against the last keyframe.
  bool gated = options_.photos;  // photos: every one a keyframe
  if (!gated && !active_.empty()) {
    const Active& last = active_.back();
    std::vector<double> motion;
    sfm::TrackedFrame seen;
    for (PairMatchSource* s : sources_) {
      if (!s->gateMotion(last.id, &motion, &seen)) continue;
      gated = true;
      ++stats_.trackGated;
      if (!gate_.decide(std::move(motion), frame.timestamp - last.timestamp, frame.gray.width())
               .keyframe) {
        ++stats_.dropped;
        *dropped = std::move(seen);
        dropped->frameIndex = frame.index;
        dropped->timestamp = frame.timestamp;
        dropped->name = frame.name;
        dropped->keyframe = last.id;
        return FrameOutcome::kDropped;
      }
      break;
    }
  }
  ++stats_.siftCalls;
  features::SiftResult sr;
  {
    auto t = record_.stage("sift");
    sr = sift_.extract(frame.gray);
  }
  features::Features& raw = sr.features;
  stats_.features += static_cast<std::int64_t>(raw.size());
  if (static_cast<int>(raw.size()) < options_.minFeatures) {
    ++stats_.featureless;
    return FrameOutcome::kSkipped;
  }
  // The query with undistorted keypoints: the guide's epipolar geometry is a pinhole's. The
  // active keyframes' keypoints are undistorted with the same (current) camera when they are
  // used: the mapper refines focal length and distortion as the video goes on.
  Active query;
  query.features = raw;
  query.raw.reserve(raw.size());
  for (const features::Keypoint& k : raw.keypoints) query.raw.emplace_back(k.x, k.y);
  query.undistortWith(camera);
  const double scale = frame.gray.width() / 640.0;

  std::vector<sfm::PairMatches> pairs;
  if (!active_.empty()) {
    // The keyframes a new keyframe is matched against: the last activeKeyframes, and a few
    // older ones at doubling distances (as COLMAP's quadratic sequential overlap): their wider
    // baselines triangulate rotation-heavy video and bound the drift.
    // Photos within exhaustivePhotos: every earlier photo.
    std::vector<Active*> cands;
    const int n = static_cast<int>(active_.size());
    if (options_.photos && stats_.keyframes < options_.exhaustivePhotos) {
      for (Active& a : active_) cands.push_back(&a);
    } else {
      for (int d = 2 * options_.activeKeyframes; d <= n; d *= 2)
        cands.insert(cands.begin(), &active_[n - d]);
      for (int r = std::max(0, n - options_.activeKeyframes); r < n; ++r)
        cands.push_back(&active_[r]);
    }
    // The last keyframe first: a frame the gate drops costs one match (docs/architecture.md, Front
    // end).
    Active& last = active_.back();
    last.undistortWith(camera);
    std::vector<std::vector<features::Match>> plain(cands.size());
    {
      auto t = record_.stage("match");
      plain.back() = matcher_.matchMany(query.features, {&last.features}).front();
    }
    stats_.plainMatches += static_cast<std::int64_t>(plain.back().size());
    const auto& ml = plain.back();
    std::vector<double> motion;
    motion.reserve(ml.size());
    for (const features::Match& m : ml) {
      const auto& a = query.features.keypoints[m.a];
      const auto& b = last.features.keypoints[m.b];
      motion.push_back(std::hypot(a.x - b.x, a.y - b.y));
    }
    if (!gated &&
        !gate_.decide(std::move(motion), frame.timestamp - last.timestamp, frame.gray.width())
             .keyframe) {
      ++stats_.dropped;
      *dropped = {};
      dropped->frameIndex = frame.index;
      dropped->timestamp = frame.timestamp;
      dropped->name = frame.name;
      dropped->keyframe = last.id;
      for (const features::Match& m : ml) {
        dropped->keypoints.emplace_back(raw.keypoints[m.a].x, raw.keypoints[m.a].y);
        dropped->keyframeKeypoint.push_back(m.b);
      }
      return FrameOutcome::kDropped;
    }
    // A keyframe: the earlier active keyframes in one call.
    for (Active* c : cands) c->undistortWith(camera);
    if (cands.size() > 1) {
      std::vector<const features::Features*> refs;
      for (size_t r = 0; r + 1 < cands.size(); ++r) refs.push_back(&cands[r]->features);
      auto t = record_.stage("match");
      auto rest = matcher_.matchMany(query.features, refs);
      for (size_t r = 0; r < rest.size(); ++r) {
        stats_.plainMatches += static_cast<std::int64_t>(rest[r].size());
        plain[r] = std::move(rest[r]);
      }
    }
    // Guided matching with the band of each pair's essential matrix.
    auto t = record_.stage("guided_match");
    const geometry::Pinhole pin = camera.pinhole();
    std::vector<const features::Features*> guidedRefs;
    std::vector<features::EpipolarGuide> guides;
    std::vector<int> guidedIndex;
    std::vector<std::array<double, 9>> guideEssentials;
    for (size_t r = 0; r < cands.size(); ++r) {
      const auto& m = plain[r];
      if (static_cast<int>(m.size()) < options_.minPairMatches) continue;
      bool guided = false;
      if (options_.guided) {
        geometry::Vec2List x1, x2;
        for (const features::Match& mm : m) {
          const auto& a = query.features.keypoints[mm.a];
          const auto& b = cands[r]->features.keypoints[mm.b];
          x1.push_back(pin.normalize({a.x, a.y}));
          x2.push_back(pin.normalize({b.x, b.y}));
        }
        geometry::RansacOptions ro;
        ro.max_error = options_.guideBandPx * scale / pin.meanFocal();
        ro.max_iterations = options_.guideIterations;
        ro.min_iterations = std::min(20, options_.guideIterations);
        const auto e = geometry::estimateEssential(x1, x2, ro);
        ++stats_.guides;
        if (e.success && e.num_inliers >= options_.minPairMatches) {
          std::array<double, 9> E;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) E[3 * i + j] = e.model(i, j);
          guides.push_back(features::EpipolarGuide::fromEssential(E, rowMajorK(pin), rowMajorK(pin),
                                                                  options_.guideBandPx * scale));
          guidedRefs.push_back(&cands[r]->features);
          guidedIndex.push_back(static_cast<int>(r));
          // The pair goes to the mapper as (candidate, query): E transposed.
          guideEssentials.push_back({E[0], E[3], E[6], E[1], E[4], E[7], E[2], E[5], E[8]});
          guided = true;
        } else {
          ++stats_.guideFailures;
        }
      }
      if (!guided) {
        sfm::PairMatches pm;
        pm.image1 = cands[r]->id;
        pm.image2 = stats_.keyframes;
        for (const features::Match& mm : m) pm.matches.emplace_back(mm.b, mm.a);
        pairs.push_back(std::move(pm));
      }
    }
    if (!guidedRefs.empty()) {
      const auto gm = matcher_.matchMany(query.features, guidedRefs, guides);

      for (size_t g = 0; g < gm.size(); ++g) {
        stats_.guidedMatches += static_cast<std::int64_t>(gm[g].size());
        if (static_cast<int>(gm[g].size()) < options_.minPairMatches) continue;
        sfm::PairMatches pm;
        pm.image1 = cands[guidedIndex[g]]->id;
        pm.image2 = stats_.keyframes;
        for (const features::Match& mm : gm[g]) pm.matches.emplace_back(mm.b, mm.a);
        // Verification starts from the guide's E (design 002, item 3: no second search).
        pm.essential = guideEssentials[g];
        pairs.push_back(std::move(pm));
      }
    }
  }

  // A keyframe.
  const int id = stats_.keyframes++;
  for (PairMatchSource* s : sources_) {
    const auto extra = s->onKeyframe(id, raw);
    for (const auto& p : extra) stats_.sourceMatches += static_cast<std::int64_t>(p.matches.size());
    stats_.sourceOnlyMatches += mergePairMatches(pairs, extra);
  }
  out->pairs = std::move(pairs);
  sfm::Keyframe& kf = out->keyframe;
  kf = {};
  kf.id = id;
  kf.frameIndex = frame.index;
  kf.timestamp = frame.timestamp;
  kf.name = frame.name;
  kf.keypoints.reserve(raw.size());
  kf.colors.reserve(raw.size());
  for (const features::Keypoint& k : raw.keypoints) {
    kf.keypoints.emplace_back(k.x, k.y);
    kf.colors.push_back(sampleColor(frame.rgb, k.x, k.y));
  }
  query.id = id;
  query.timestamp = frame.timestamp;
  active_.push_back(std::move(query));
  int keep = std::max(options_.activeKeyframes, options_.historyKeyframes);
  if (options_.photos && stats_.keyframes < options_.exhaustivePhotos)
    keep = std::max(keep, options_.exhaustivePhotos);
  while (static_cast<int>(active_.size()) > keep) active_.pop_front();
  return FrameOutcome::kKeyframe;
}

}  // namespace vidmap::pipeline
