// The matches of every pair a reconstruction verifies, scored against the ground truth's
// epipolar geometry: descriptor matches and KLT track matches (PairMatches::firstTrackMatch)
// apart, verified (in the correspondence graph) or not. It runs what `vidmap reconstruct
// --device cpu` runs (front end, KLT source, mapper with the outliers fed back, one thread of
// the pipeline), keeps each keyframe and its pairs as the mapper receives them, and at the end
// scores each match (a, b) by its Sampson distance to the true relative pose of keyframes a and
// b (poses interpolated at the frames' stamps, docs/benchmarks.md "KLT track matches on
// fr1-desk"), in pixels of the true camera (keypoints undistorted with the true distortion).
// A pair whose camera barely moved (baseline under 5 mm) is scored by the transfer error of the
// rotation's homography instead.
//
//   pair_truth_eval INPUT --groundtruth GT --camera SPEC [--fps F | --all-frames]
//                   [--klt off|gate|on] [--set NAME=VALUE ...] [--pairs] [--trace] [--verbose]
//
// prints one JSON line per pair with --pairs, then a summary line: per class (descriptor or
// track matches; of pairs that only tracks link; verified or not) the count, the median true
// distance and the fraction beyond 2 and 8 px, and the models' focal lengths. The camera spec
// is the truth (TUM fr1: "FULL_OPENCV 517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,
// 1.1633,0,0,0"); the reconstruction itself starts from the default unknown camera unless
// --set camera=... says otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/frontend.h"
#include "vidmap/pipeline/frontend_worker.h"
#include "vidmap/pipeline/klt_source.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/mapper.h"
#include "vidmap/sfm/trajectory_eval.h"

using namespace vidmap;

namespace {

// Distances of one class of matches.
struct Tally {
  std::vector<double> d;
  void add(double x) { d.push_back(x); }
  std::string json() const {
    std::vector<double> s = d;
    std::sort(s.begin(), s.end());
    const auto frac = [&](double t) {
      return s.empty() ? 0.0
                       : static_cast<double>(s.end() - std::upper_bound(s.begin(), s.end(), t)) /
                             s.size();
    };
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "{\"n\": %zu, \"median_px\": %.3f, \"over_2px\": %.4f, \"over_8px\": %.4f}",
                  s.size(), s.empty() ? 0.0 : s[s.size() / 2], frac(2), frac(8));
    return buf;
  }
};

struct Truth {
  bool ok = false;
  Eigen::Matrix3d R;  // camera-to-world
  Eigen::Vector3d c;
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: pair_truth_eval INPUT --groundtruth GT --camera SPEC [--fps F | "
                 "--all-frames] [--klt off|gate|on] [--set NAME=VALUE] [--pairs] [--verbose]\n");
    return 2;
  }
  pipeline::ReconstructOptions ro;
  ro.klt = true;
  std::string gtPath, trueSpec;
  bool perPair = false, trace = false;
  std::vector<std::pair<std::string, std::string>> sets;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--groundtruth" && more)
      gtPath = argv[++i];
    else if (a == "--camera" && more)
      trueSpec = argv[++i];
    else if (a == "--fps" && more)
      ro.fps = std::stod(argv[++i]);
    else if (a == "--all-frames")
      ro.allFrames = true;
    else if (a == "--klt" && more)
      sets.emplace_back("klt", argv[++i]);
    else if (a == "--set" && more) {
      const std::string s = argv[++i];
      const auto eq = s.find('=');
      if (eq == std::string::npos) throw Error("--set " + s + ": NAME=VALUE");
      sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    } else if (a == "--pairs")
      perPair = true;
    else if (a == "--trace")
      trace = true;
    else if (a == "--verbose")
      ro.mapper.verbose = true;
    else
      throw Error("unknown argument " + a);
  }
  if (gtPath.empty() || trueSpec.empty()) throw Error("--groundtruth and --camera are needed");
  for (const auto& [name, value] : sets) {
    bool found = false;
    pipeline::forEachReconstructField(ro, [&](const pipeline::FieldInfo& f, auto&& v) {
      if (f.path() != name) return;
      found = true;
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, pipeline::TextField>)
        v.set(value);
      else if constexpr (std::is_same_v<T, bool>)
        v = value == "on" || value == "true" || value == "1";
      else if constexpr (std::is_integral_v<T>)
        v = static_cast<T>(std::stoll(value));
      else if constexpr (std::is_floating_point_v<T>)
        v = static_cast<T>(std::stod(value));
      else
        throw Error("--set " + name + ": not a number, switch or text option");
    });
    if (!found) throw Error("--set " + name + ": no such option");
  }
  ro.check();

  // As pipeline::reconstruct on the CPU at the default width (640 px for TUM).
  io::FrameSourceOptions so;
  so.fps = ro.fps;
  so.allFrames = ro.allFrames;
  so.width = 640;
  auto source = io::openFrameSource(argv[1], so);
  const io::FrameSourceInfo info = source->info();
  ro.frontend.sift.backend = features::Backend::kCpu;
  ro.frontend.match.backend = features::Backend::kCpu;
  ro.mapper.backend = ba::BackendType::kCpu;
  ro.frontend.sift.firstOctave = info.sequential && info.fps >= 10 ? 0 : -1;
  ro.frontend.verbose = ro.mapper.verbose;
  const sfm::Camera camera0 = sfm::Camera::fromSpec(ro.camera, info.nativeWidth, info.nativeHeight,
                                                    info.width, info.height);
  const sfm::Camera truthCam =
      sfm::Camera::fromSpec(sfm::CameraSpec::parse(trueSpec), info.nativeWidth, info.nativeHeight,
                            info.width, info.height);
  io::RunRecord record;
  pipeline::Frontend frontend(ro.frontend, record);
  sfm::Mapper mapper(camera0, ro.mapper);
  std::unique_ptr<pipeline::KltSource> klt;
  if (ro.klt) {
    klt = std::make_unique<pipeline::KltSource>(ro.kltSource);
    frontend.addSource(klt.get());
    mapper.setOutlierSink([src = klt.get()](const sfm::PairMatches& o) { src->onOutliers(o); });
  }
  std::vector<sfm::Keyframe> kfs;
  std::vector<sfm::PairMatches> pairs;
  mapper.setKeyframeSink([&](const sfm::Keyframe& kf, const std::vector<sfm::PairMatches>& p) {
    kfs.push_back(kf);
    pairs.insert(pairs.end(), p.begin(), p.end());
  });
  pipeline::FrontendLoopOptions lo;
  lo.depth = 0;
  lo.outliersFeedBack = klt != nullptr;
  // --trace: the current model's size and camera after each keyframe (where a model leaves the
  // truth's focal length).
  int traced = 0;
  pipeline::runFrontendLoop(
      *source, frontend, mapper, record, lo, [](int) {},
      [&](int, int k) {
        if (!trace || k == traced || !mapper.current()) return;
        traced = k;
        const sfm::Reconstruction& m = *mapper.current();
        std::string params;
        for (double x : m.camera().params()) params += " " + std::to_string(x);
        std::fprintf(stderr, "trace: keyframes %d, images %d, points %d, camera%s\n", k,
                     m.numImages(), m.numPoints(), params.c_str());
      });
  mapper.finish();

  // The true pose of each keyframe.
  const std::vector<sfm::StampedPose> gt = sfm::readTumTrajectory(gtPath);
  std::vector<sfm::StampedPose> stamps;
  for (const sfm::Keyframe& kf : kfs) {
    sfm::StampedPose s;
    s.t = kf.timestamp;
    stamps.push_back(s);
  }
  std::vector<Truth> truth(kfs.size());
  {
    const std::vector<sfm::PosePair> pp = sfm::associate(stamps, gt, 0.02);
    std::map<double, const sfm::StampedPose*> byT;
    for (const auto& p : pp) byT[p.est.t] = &p.gt;
    for (size_t k = 0; k < kfs.size(); ++k) {
      const auto it = byT.find(kfs[k].timestamp);
      if (it == byT.end()) continue;
      truth[k] = {true, it->second->q_wc.normalized().toRotationMatrix(), it->second->c};
    }
  }
  const geometry::Pinhole pin = truthCam.pinhole();
  const Eigen::Matrix3d K = pin.K(), Ki = K.inverse();

  Tally desc, track, trackOnly, descVerified, trackVerified, trackRejected, trackOnlyVerified;
  Tally conflict, conflictApart, conflictVerified;
  int pairsScored = 0;
  for (const sfm::PairMatches& pm : pairs) {
    const int a = std::min(pm.image1, pm.image2), b = std::max(pm.image1, pm.image2);
    if (!truth[a].ok || !truth[b].ok) continue;
    ++pairsScored;
    // x_b = R_ab x_a + t_ab (camera coordinates).
    const Eigen::Matrix3d Rab = truth[b].R.transpose() * truth[a].R;
    const Eigen::Vector3d tab = truth[b].R.transpose() * (truth[a].c - truth[b].c);
    const bool rotation = tab.norm() < 0.005;
    Eigen::Matrix3d tx;
    tx << 0, -tab.z(), tab.y(), tab.z(), 0, -tab.x(), -tab.y(), tab.x(), 0;
    const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> M =
        rotation ? Eigen::Matrix3d(K * Rab * Ki) : Eigen::Matrix3d(Ki.transpose() * tx * Rab * Ki);
    std::set<std::pair<int, int>> verified;
    for (const auto& m : mapper.graph().pairMatches(a, b)) verified.insert(m);
    const int first =
        pm.firstTrackMatch < 0 ? static_cast<int>(pm.matches.size()) : pm.firstTrackMatch;
    Tally pd, pt;
    int pv = 0, ptv = 0;
    // The keypoints of the descriptor matches: a track match that names one of them with
    // another partner makes the keypoint matched twice in the pair.
    std::map<int, int> descOf1, descOf2;
    for (int k = 0; k < first; ++k) {
      auto [i, j] = pm.matches[k];
      if (pm.image1 > pm.image2) std::swap(i, j);
      descOf1[i] = j;
      descOf2[j] = i;
    }
    for (int k = 0; k < static_cast<int>(pm.matches.size()); ++k) {
      auto [i, j] = pm.matches[k];
      if (pm.image1 > pm.image2) std::swap(i, j);
      const sfm::Vec2 x1 = truthCam.undistortPixel(kfs[a].keypoints[i]);
      const sfm::Vec2 x2 = truthCam.undistortPixel(kfs[b].keypoints[j]);
      const double e =
          std::sqrt(rotation ? geometry::homographySq(M.data(), x1.x(), x1.y(), x2.x(), x2.y())
                             : geometry::sampsonSq(M.data(), x1.x(), x1.y(), x2.x(), x2.y()));
      const bool v = verified.count({i, j}) > 0;
      pv += v;
      if (k < first) {
        desc.add(e);
        pd.add(e);
        if (v) descVerified.add(e);
      } else {
        track.add(e);
        pt.add(e);
        if (first == 0) trackOnly.add(e);
        const auto c1 = descOf1.find(i);
        const auto c2 = descOf2.find(j);
        if ((c1 != descOf1.end() && c1->second != j) || (c2 != descOf2.end() && c2->second != i)) {
          // How far apart the two partners lie (the same place: SIFT's keypoints of one
          // location with two orientations).
          const double apart = c1 != descOf1.end() && c1->second != j
                                   ? (kfs[b].keypoints[c1->second] - kfs[b].keypoints[j]).norm()
                                   : (kfs[a].keypoints[c2->second] - kfs[a].keypoints[i]).norm();
          conflictApart.add(apart);
          if (v) conflictVerified.add(apart);
          conflict.add(e);
        }
        if (v) {
          ++ptv;
          trackVerified.add(e);
          if (first == 0) trackOnlyVerified.add(e);
        } else {
          trackRejected.add(e);
        }
      }
    }
    if (perPair) {
      const double angle = Eigen::AngleAxisd(Rab).angle() * 180.0 / M_PI;
      std::printf(
          "{\"pair\": [%d, %d], \"frames\": [%d, %d], \"turn_deg\": %.2f, \"baseline_m\": %.4f, "
          "\"verified\": %s, \"verified_matches\": %d, \"verified_track_matches\": %d, "
          "\"descriptor\": %s, \"track\": %s}\n",
          a, b, kfs[a].frameIndex, kfs[b].frameIndex, angle, tab.norm(),
          mapper.graph().hasPair(a, b) && !verified.empty() ? "true" : "false", pv, ptv,
          pd.json().c_str(), pt.json().c_str());
    }
  }
  std::string models = "[";
  for (const sfm::Reconstruction* m : mapper.models()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s{\"images\": %d, \"focal_px\": %.1f}",
                  models.size() > 1 ? ", " : "", m->numImages(), m->camera().meanFocal());
    models += buf;
  }
  models += "]";
  std::printf(
      "{\"keyframes\": %zu, \"pairs\": %zu, \"pairs_scored\": %d, \"models\": %s,\n"
      " \"descriptor\": %s,\n \"descriptor_verified\": %s,\n \"track\": %s,\n"
      " \"track_verified\": %s,\n \"track_not_verified\": %s,\n \"track_only_pairs\": %s,\n"
      " \"track_only_pairs_verified\": %s,\n \"track_conflicting\": %s,\n"
      " \"track_conflicting_apart\": %s,\n \"track_conflicting_verified_apart\": %s}\n",
      kfs.size(), pairs.size(), pairsScored, models.c_str(), desc.json().c_str(),
      descVerified.json().c_str(), track.json().c_str(), trackVerified.json().c_str(),
      trackRejected.json().c_str(), trackOnly.json().c_str(), trackOnlyVerified.json().c_str(),
      conflict.json().c_str(), conflictApart.json().c_str(), conflictVerified.json().c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "pair_truth_eval: %s\n", e.what());
  return 1;
}
