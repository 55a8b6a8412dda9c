#include "vidmap/pipeline/frontend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vidmap/core/check.h"
#include "vidmap/core/parallel.h"
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
  checkRange("frontend.guideFeatures", guideFeatures, 0, 1 << 20);
  checkRange("frontend.exhaustivePhotos", exhaustivePhotos, 0, 100000);
  checkRange("frontend.photoMinFeatures", photoMinFeatures, 0, 1000000);
  checkRange("frontend.photoThresholdSteps", photoThresholdSteps, 0, 8);
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
  r.setCount("sift_lowered_threshold_images", siftLowered);
  r.setCount("sift_lowered_threshold_calls", siftLoweredCalls);
  r.setCount("frames_gated_by_tracks", trackGated);
  // The tracks' decisions by reason (sfm::GateReason): keyframes by parallax, by lost tracks,
  // by the gap; frames dropped ("none").
  for (int k = 0; k < static_cast<int>(trackGateReasons.size()); ++k)
    if (k != static_cast<int>(sfm::GateReason::kUnknown))
      r.setCount(std::string("track_gate_") + sfm::gateReasonName(static_cast<sfm::GateReason>(k)),
                 trackGateReasons[k]);
  r.setCount("match_uploaded_descriptor_bytes", matchUploadedBytes);
  r.setCount("guides", guides);
  r.setCount("guide_failures", guideFailures);
  r.setCount("guide_full_rematches", guideFullRematches);
  r.setCount("guide_refreshes", guideRefreshes);
  r.setCount("guide_rechecks", guideRechecks);
}

Frontend::Frontend(const FrontendOptions& options, io::RunRecord& record,
                   const gpu::Context* siftContext, const gpu::Context* matchContext,
                   const gpu::Context* recheckContext)
    : options_(options),
      record_(record),
      sift_((options.check(), options.sift), siftContext),
      matcher_(options.match, matchContext),
      siftContext_(siftContext),
      recheckContext_(recheckContext),
      gate_(options.gate) {
  // The query and the keyframes it may be matched against (a subset of active_), at most 256
  // (about 1 GB at 8192 features; older ones are uploaded when matched).
  matcher_.setResidentCapacity(
      std::min(std::max(options_.activeKeyframes, options_.historyKeyframes), 256) + 1);
}

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

void undistortKeypoints(const std::vector<features::Keypoint>& raw, const sfm::Camera& camera,
                        std::vector<features::Keypoint>* out) {
  *out = raw;
  if (!camera.hasDistortion()) return;
  for (size_t i = 0; i < raw.size(); ++i) {
    const sfm::Vec2 u = camera.undistortPixel({raw[i].x, raw[i].y});
    (*out)[i].x = static_cast<float>(u.x());
    (*out)[i].y = static_cast<float>(u.y());
  }
}

void ActiveKeyframe::undistortWith(const sfm::Camera& camera) {
  if (undistortedWith == camera.params()) return;
  undistortKeypoints(*raw, camera, &features->keypoints);
  undistortedWith = camera.params();
}

FrameOutcome Frontend::process(const io::Frame& frame, const sfm::Camera& camera,
                               KeyframeOutput* out, sfm::TrackedFrame* dropped) {
  const FrameOutcome r = produce(frame, camera, out, dropped);
  if (r == FrameOutcome::kKeyframe) finishKeyframe(out, camera);
  return r;
}

FrameOutcome Frontend::produce(const io::Frame& frame, const sfm::Camera& camera,
                               KeyframeOutput* out, sfm::TrackedFrame* dropped) {
  ++stats_.frames;
  for (PairMatchSource* s : sources_) s->onFrame(frame);
  // The keyframe gate on the motion of a source's tracks (docs/architecture.md, "Pair sources"): a
  // frame it drops costs no SIFT and no matching. With too few tracks (or none) the gate below
  // decides on descriptor matches against the last keyframe.
  bool gated = options_.photos;  // photos: every one a keyframe
  if (!gated && !active_.empty()) {
    const Active& last = active_.back();
    sfm::GateTracks tracks;
    sfm::TrackedFrame seen;
    for (PairMatchSource* s : sources_) {
      if (!s->gateMotion(last.id, &tracks, &seen)) continue;
      gated = true;
      ++stats_.trackGated;
      const sfm::KeyframeDecision d = gate_.decideTracks(tracks, frame.timestamp - last.timestamp,
                                                         frame.gray.width(), frame.gray.height());
      ++stats_.trackGateReasons[static_cast<int>(d.reason)];
      if (!d.keyframe) {
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
  const features::Sift* made = &sift_;  // the extractor of sr (its descriptors on the device)
  {
    auto t = record_.stage("sift");
    // An 8-bit frame goes to SIFT with its luma: the CUDA backend uploads the RGB8 pixels
    // (3 bytes a pixel instead of 4) and makes the same luma on the device; same features.
    auto extract = [&frame](features::Sift& sift) {
      return frame.grayIsLumaOfRgb ? sift.extract(frame.rgb.view(), frame.gray.view())
                                   : sift.extract(frame.gray);
    };
    sr = extract(sift_);
    // A feature-poor photo: again at half the threshold, while below the count.
    const int minFeatures = static_cast<int>(std::lround(
        options_.photoMinFeatures *
        (frame.gray.width() * static_cast<double>(frame.gray.height())) / (640.0 * 480.0)));
    const bool lower =
        options_.photos && minFeatures > 0 && static_cast<int>(sr.features.size()) < minFeatures;
    stats_.siftLowered += lower;
    for (int step = 1; lower && step <= options_.photoThresholdSteps &&
                       static_cast<int>(sr.features.size()) < minFeatures;
         ++step) {
      if (static_cast<int>(lowSift_.size()) < step) {
        features::SiftOptions so = options_.sift;
        so.peakThreshold = options_.sift.peakThreshold / static_cast<float>(1 << step);
        lowSift_.push_back(std::make_unique<features::Sift>(so, siftContext_));
      }
      const int before = static_cast<int>(sr.features.size());
      sr = extract(*lowSift_[step - 1]);
      made = lowSift_[step - 1].get();
      ++stats_.siftLoweredCalls;
      if (options_.verbose)
        std::fprintf(
            stderr, "frontend: %s: %d features < %d, again at peak threshold / %d: %zu features\n",
            frame.name.c_str(), before, options_.photoMinFeatures, 1 << step, sr.features.size());
    }
  }
  stats_.features += static_cast<std::int64_t>(sr.features.size());
  if (static_cast<int>(sr.features.size()) < options_.minFeatures) {
    ++stats_.featureless;
    return FrameOutcome::kSkipped;
  }
  // The query keeps its raw keypoints; the matcher's copy of them is undistorted for the guide
  // (its epipolar geometry is a pinhole's).
  Active query;
  query.raw = std::make_shared<const std::vector<features::Keypoint>>(sr.features.keypoints);
  query.features = std::make_shared<features::Features>(std::move(sr.features));
  // CUDA: the matcher keeps the query's descriptors from SIFT's device copy, so neither this
  // frame's matches nor, as a keyframe, the next frames' upload them (Matcher::keepOnDevice).
  if (matcher_.backend() == features::Backend::kCuda)
    matcher_.keepOnDevice(query.features, made->deviceDescriptors());
  const std::vector<features::Keypoint>& raw = *query.raw;

  GuidedInput& in = out->guided;
  in = {};
  in.scale = frame.gray.width() / 640.0;
  std::vector<Active*> cands;
  if (!active_.empty()) {
    // The keyframes a new keyframe is matched against: the last activeKeyframes, and a few
    // older ones at doubling distances (as COLMAP's quadratic sequential overlap): their wider
    // baselines triangulate rotation-heavy video and bound the drift.
    // Photos within exhaustivePhotos: every earlier photo.
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
    // end). Plain matching reads descriptors only, so it needs no undistortion.
    Active& last = active_.back();
    std::vector<std::vector<features::Match>> plain(cands.size());
    {
      auto t = record_.stage("match");
      plain.back() = matcher_.matchMany(*query.features, {last.features.get()}).front();
    }
    stats_.matchUploadedBytes = matcher_.uploadedDescriptorBytes();
    stats_.plainMatches += static_cast<std::int64_t>(plain.back().size());
    const auto& ml = plain.back();
    std::vector<double> motion;
    motion.reserve(ml.size());
    for (const features::Match& m : ml) {
      const auto& a = raw[m.a];
      const auto& b = (*last.raw)[m.b];
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
        dropped->keypoints.emplace_back(raw[m.a].x, raw[m.a].y);
        dropped->keyframeKeypoint.push_back(m.b);
      }
      return FrameOutcome::kDropped;
    }
    // A keyframe: the earlier active keyframes in one call; for a guided video, on the strongest
    // features only (guideFeatures: these matches only make the guides).
    const bool limited = !options_.photos && options_.guided && options_.guideFeatures > 0;
    in.plainLimited.assign(cands.size(), 0);
    if (cands.size() > 1) {
      std::vector<const features::Features*> refs;
      for (size_t r = 0; r + 1 < cands.size(); ++r) {
        refs.push_back(cands[r]->features.get());
        in.plainLimited[r] = limited;
      }
      auto t = record_.stage("match");
      auto rest =
          matcher_.matchMany(*query.features, refs, {}, limited ? options_.guideFeatures : 0);
      for (size_t r = 0; r < rest.size(); ++r) {
        stats_.plainMatches += static_cast<std::int64_t>(rest[r].size());
        plain[r] = std::move(rest[r]);
      }
    }
    in.query = query.features;
    in.queryRaw = query.raw;
    in.plain = std::move(plain);
    for (Active* c : cands) in.cands.push_back({c->id, c->features, c->raw});
  }

  // A keyframe. The sources read the keypoints as detected (before the guide undistorts them).
  const int id = stats_.keyframes++;
  out->sourcePairs.clear();
  for (PairMatchSource* s : sources_)
    out->sourcePairs.push_back(s->onKeyframe(id, *query.features));
  // The guided matching with the camera given (the keypoints undistorted with it, in place).
  out->result = {};
  out->result.cameraParams = camera.params();
  if (!cands.empty()) {
    query.undistortWith(camera);
    std::vector<const features::Features*> candFeatures;
    for (Active* c : cands) {
      c->undistortWith(camera);
      candFeatures.push_back(c->features.get());
    }
    out->result = guidedPairs(in, *query.features, candFeatures, camera, matcher_, id);
    stats_.matchUploadedBytes = matcher_.uploadedDescriptorBytes();
  }
  out->pairs.clear();
  sfm::Keyframe& kf = out->keyframe;
  kf = {};
  kf.id = id;
  kf.frameIndex = frame.index;
  kf.timestamp = frame.timestamp;
  kf.name = frame.name;
  kf.keypoints.reserve(raw.size());
  kf.colors.reserve(raw.size());
  for (const features::Keypoint& k : raw) {
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

GuidedResult Frontend::guidedPairs(const GuidedInput& in, const features::Features& query,
                                   const std::vector<const features::Features*>& cands,
                                   const sfm::Camera& camera, features::Matcher& matcher,
                                   int keyframeId) {
  // Guided matching with the band of each pair's essential matrix.
  GuidedResult res;
  res.cameraParams = camera.params();
  auto t = record_.stage("guided_match");
  const geometry::Pinhole pin = camera.pinhole();
  std::vector<const features::Features*> guidedRefs;
  std::vector<features::EpipolarGuide> guides;
  std::vector<int> guidedIndex;
  std::vector<std::array<double, 9>> guideEssentials;
  // Each pair's guide E by its own RANSAC (a fixed seed per call), the pairs of the keyframe in
  // parallel: the same guides whatever the threads.
  std::vector<const std::vector<features::Match>*> plain(cands.size());
  for (size_t r = 0; r < cands.size(); ++r) plain[r] = &in.plain[r];
  const auto usable = [&](size_t r) {
    return options_.guided && static_cast<int>(plain[r]->size()) >= options_.minPairMatches;
  };
  std::vector<geometry::RansacResult<geometry::Mat3>> essentials(cands.size());
  const auto guidesOf = [&](const std::vector<int>& pairs) {
    // The guides' RANSACs: host work inside guided_match (its GPU time is the matching's).
    auto tg = record_.stage("guided_match.guides");
    parallelForDynamic(
        static_cast<std::int64_t>(pairs.size()),
        [&](std::int64_t k) {
          const int r = pairs[k];
          if (!usable(static_cast<size_t>(r))) return;
          geometry::Vec2List x1, x2;
          x1.reserve(plain[r]->size());
          x2.reserve(plain[r]->size());
          for (const features::Match& mm : *plain[r]) {
            const auto& a = query.keypoints[mm.a];
            const auto& b = cands[r]->keypoints[mm.b];
            x1.push_back(pin.normalize({a.x, a.y}));
            x2.push_back(pin.normalize({b.x, b.y}));
          }
          geometry::RansacOptions ro;
          ro.max_error = options_.guideBandPx * in.scale / pin.meanFocal();
          ro.max_iterations = options_.guideIterations;
          ro.min_iterations = std::min(20, options_.guideIterations);
          essentials[r] = geometry::estimateEssential(x1, x2, ro);
        },
        1);
  };
  const auto guideFound = [&](size_t r) {
    return usable(r) && essentials[r].success &&
           essentials[r].num_inliers >= options_.minPairMatches;
  };
  std::vector<int> all(cands.size());
  for (size_t r = 0; r < cands.size(); ++r) all[r] = static_cast<int>(r);
  guidesOf(all);
  // Pairs plain-matched on their strongest features whose guide failed, or holds fewer than
  // 4 minPairMatches inliers (a guide from few matches of a wide pair can be wrong where the
  // full matches find none: fr1-desk at 4 fps): matched again in full, and their guide
  // estimated again (what they would have had without guideFeatures).
  std::vector<int> again;
  for (size_t r = 0; r < cands.size(); ++r)
    if (r < in.plainLimited.size() && in.plainLimited[r] &&
        !(guideFound(r) && essentials[r].num_inliers >= 4 * options_.minPairMatches))
      again.push_back(static_cast<int>(r));
  std::vector<std::vector<features::Match>> full;
  if (!again.empty()) {
    std::vector<const features::Features*> refs;
    for (int r : again) refs.push_back(cands[r]);
    full = matcher.matchMany(query, refs);
    for (size_t k = 0; k < again.size(); ++k) {
      plain[again[k]] = &full[k];
      essentials[again[k]].success = false;  // guidesOf leaves a pair it cannot use
    }
    guidesOf(again);
  }
  res.fullRematches = static_cast<int>(again.size());
  for (size_t r = 0; r < cands.size(); ++r) {
    const auto& m = *plain[r];
    if (static_cast<int>(m.size()) < options_.minPairMatches) continue;
    bool guided = false;
    if (usable(r)) {
      res.dependsOnCamera = true;
      const auto& e = essentials[r];
      ++res.guides;
      if (guideFound(r)) {
        std::array<double, 9> E;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) E[3 * i + j] = e.model(i, j);
        guides.push_back(features::EpipolarGuide::fromEssential(E, rowMajorK(pin), rowMajorK(pin),
                                                                options_.guideBandPx * in.scale));
        guidedRefs.push_back(cands[r]);
        guidedIndex.push_back(static_cast<int>(r));
        // The pair goes to the mapper as (candidate, query): E transposed.
        guideEssentials.push_back({E[0], E[3], E[6], E[1], E[4], E[7], E[2], E[5], E[8]});
        guided = true;
      } else {
        ++res.guideFailures;
      }
    }
    if (!guided) {
      sfm::PairMatches pm;
      pm.image1 = in.cands[r].id;
      pm.image2 = keyframeId;
      for (const features::Match& mm : m) pm.matches.emplace_back(mm.b, mm.a);
      res.pairs.push_back(std::move(pm));
    }
  }
  if (!guidedRefs.empty()) {
    const auto gm = matcher.matchMany(query, guidedRefs, guides);
    for (size_t g = 0; g < gm.size(); ++g) {
      res.guidedMatches += static_cast<std::int64_t>(gm[g].size());
      if (static_cast<int>(gm[g].size()) < options_.minPairMatches) continue;
      sfm::PairMatches pm;
      pm.image1 = in.cands[guidedIndex[g]].id;
      pm.image2 = keyframeId;
      for (const features::Match& mm : gm[g]) pm.matches.emplace_back(mm.b, mm.a);
      // Verification starts from the guide's E (design 002, item 3: no second search).
      pm.essential = guideEssentials[g];
      res.pairs.push_back(std::move(pm));
    }
  }
  return res;
}

namespace {

// A copy of `f` with the keypoints `raw` undistorted with `camera`.
features::Features undistortedCopy(const features::Features& f,
                                   const std::vector<features::Keypoint>& raw,
                                   const sfm::Camera& camera) {
  features::Features c;
  c.width = f.width;
  c.height = f.height;
  c.descriptors = f.descriptors;
  undistortKeypoints(raw, camera, &c.keypoints);
  return c;
}

}  // namespace

GuidedResult Frontend::refreshGuide(const KeyframeOutput& out, const sfm::Camera& camera) {
  ++stats_.guideRefreshes;
  const GuidedInput& in = out.guided;
  // The keyframe and its candidates by id in the history (consecutive ids), else a copy.
  std::vector<features::Features> copies;
  copies.reserve(in.cands.size() + 1);
  const auto features = [&](int id, const std::shared_ptr<const features::Features>& f,
                            const std::shared_ptr<const std::vector<features::Keypoint>>& raw)
      -> const features::Features* {
    const int at = active_.empty() ? -1 : id - active_.front().id;
    if (at >= 0 && at < static_cast<int>(active_.size()) && active_[at].raw == raw) {
      active_[at].undistortWith(camera);
      return active_[at].features.get();
    }
    copies.push_back(undistortedCopy(*f, *raw, camera));
    return &copies.back();
  };
  const features::Features* query = features(out.keyframe.id, in.query, in.queryRaw);
  std::vector<const features::Features*> refs;
  for (const GuidedInput::Candidate& c : in.cands)
    refs.push_back(features(c.id, c.features, c.raw));
  GuidedResult r = guidedPairs(in, *query, refs, camera, matcher_, out.keyframe.id);
  stats_.matchUploadedBytes = matcher_.uploadedDescriptorBytes();
  return r;
}

GuidedResult Frontend::guidedOnCopies(const KeyframeOutput& out, const sfm::Camera& camera,
                                      features::Matcher& matcher) {
  const GuidedInput& in = out.guided;
  const features::Features query = undistortedCopy(*in.query, *in.queryRaw, camera);
  std::vector<features::Features> cands;
  cands.reserve(in.cands.size());
  for (const GuidedInput::Candidate& c : in.cands)
    cands.push_back(undistortedCopy(*c.features, *c.raw, camera));
  std::vector<const features::Features*> refs;
  for (const features::Features& c : cands) refs.push_back(&c);
  return guidedPairs(in, query, refs, camera, matcher, out.keyframe.id);
}

void Frontend::finishKeyframe(KeyframeOutput* out, const sfm::Camera& camera) {
  GuidedResult& res = out->result;
  if (res.dependsOnCamera && res.cameraParams != camera.params()) {
    // The camera changed since produce: the guided matching again, on copies undistorted with
    // this camera (produce's thread may be undistorting the shared keypoints meanwhile).
    ++stats_.guideRechecks;
    if (!recheckMatcher_)
      recheckMatcher_ = std::make_unique<features::Matcher>(options_.match, recheckContext_);
    res = guidedOnCopies(*out, camera, *recheckMatcher_);
  }
  collect(out);
}

GuidedResult Frontend::guideRecorded(const KeyframeOutput& out, const sfm::Camera& camera) {
  // The first keyframe has no candidates (and no guided input): nothing to match.
  return out.guided.cands.empty() ? GuidedResult{} : guidedOnCopies(out, camera, matcher_);
}

void Frontend::finishRecordedKeyframe(KeyframeOutput* out, const sfm::Camera& camera) {
  out->result = guideRecorded(*out, camera);
  collect(out);
}

void Frontend::resumeStats(const FrontendStats& recorded) {
  stats_ = recorded;
  stats_.guides = stats_.guideFailures = stats_.guideFullRematches = 0;
  stats_.guideRefreshes = stats_.guideRechecks = 0;
  stats_.guidedMatches = stats_.sourceMatches = stats_.sourceOnlyMatches = 0;
}

std::vector<sfm::PairMatches> Frontend::finishedPairs(const KeyframeOutput& out) {
  std::vector<sfm::PairMatches> pairs = out.result.pairs;
  for (const std::vector<sfm::PairMatches>& extra : out.sourcePairs) mergePairMatches(pairs, extra);
  return pairs;
}

void Frontend::collect(KeyframeOutput* out) {
  GuidedResult& res = out->result;
  stats_.guides += res.guides;
  stats_.guideFailures += res.guideFailures;
  stats_.guideFullRematches += res.fullRematches;
  stats_.guidedMatches += res.guidedMatches;
  out->pairs = std::move(res.pairs);
  for (const std::vector<sfm::PairMatches>& extra : out->sourcePairs) {
    for (const auto& p : extra) stats_.sourceMatches += static_cast<std::int64_t>(p.matches.size());
    stats_.sourceOnlyMatches += mergePairMatches(out->pairs, extra);
  }
  // The shared features are let go (the front end may drop the keyframes from its history).
  out->guided = {};
  out->result = {};
  out->sourcePairs.clear();
}

}  // namespace vidmap::pipeline
