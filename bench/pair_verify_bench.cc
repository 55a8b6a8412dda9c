// Pair verification of a video, before and after the video policy (sfm/pair_verification.h):
// the front end (SIFT, matching, keyframe gate, guided matching) runs once over the input;
// every pair it hands to the mapper is then verified twice, "scratch" (E, F and H searched
// from scratch, as before) and "video" (the guide's E as E's first hypothesis, F only as E's
// fallback), timed in CPU time of the calling thread (one thread; a shared machine's wall
// time says little). The camera is the one given (--camera), as after self-calibration.
//
//   pair_verify_bench INPUT --camera "PINHOLE fx,fy,cx,cy" [--fps 4 | --all-frames]
// prints one JSON line per policy: pairs, keyframes, CPU ms per keyframe, and the verified
// pairs and inliers (the policies must agree on what they keep).
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/frontend.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/mapper.h"
#include "vidmap/sfm/pair_verification.h"

using namespace vidmap;

namespace {

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct Pair {
  sfm::PairMatches pm;
  geometry::Vec2List p1, p2;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: pair_verify_bench INPUT --camera SPEC [--fps F | --all-frames]\n");
    return 2;
  }
  io::FrameSourceOptions so;
  so.width = 640;
  std::string camera;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--camera") && i + 1 < argc) camera = argv[++i];
    if (!std::strcmp(argv[i], "--fps") && i + 1 < argc) so.fps = std::stod(argv[++i]);
    if (!std::strcmp(argv[i], "--all-frames")) so.allFrames = true;
  }
  auto source = io::openFrameSource(argv[1], so);
  const io::FrameSourceInfo info = source->info();
  const sfm::Camera cam = sfm::Camera::fromSpec(sfm::CameraSpec::parse(camera), info.nativeWidth,
                                                info.nativeHeight, info.width, info.height);
  pipeline::FrontendOptions fo;
  fo.sift.backend = features::Backend::kCpu;
  fo.match.backend = features::Backend::kCpu;
  fo.sift.firstOctave = info.fps >= 10 ? 0 : -1;  // the pipeline's rule at 640 px
  io::RunRecord record;
  pipeline::Frontend frontend(fo, record);
  std::vector<Pair> pairs;
  std::vector<std::vector<sfm::Vec2>> keypoints;
  io::Frame frame;
  pipeline::KeyframeOutput out;
  sfm::TrackedFrame tracked;
  while (source->next(frame)) {
    if (frontend.process(frame, cam, &out, &tracked) != pipeline::FrameOutcome::kKeyframe) continue;
    std::vector<sfm::Vec2> kp;
    for (const sfm::Vec2& k : out.keyframe.keypoints) kp.push_back(cam.undistortPixel(k));
    keypoints.push_back(std::move(kp));
    for (const sfm::PairMatches& pm : out.pairs) {
      Pair p{pm, {}, {}};
      for (const auto& [i, j] : pm.matches) {
        p.p1.push_back(keypoints[pm.image1][i]);
        p.p2.push_back(keypoints[pm.image2][j]);
      }
      pairs.push_back(std::move(p));
    }
  }
  sfm::MapperOptions mo;  // the mapper's two-view options
  const geometry::Pinhole pin = cam.pinhole();
  for (int video = 0; video < 2; ++video) {
    double ms = 0;
    long kept = 0, inliers = 0;
    for (const Pair& p : pairs) {
      const double t0 = threadCpuMs();
      const sfm::PairVerification v = sfm::pairVerification(mo.twoView, video, true, p.pm, false);
      const geometry::TwoViewGeometry g =
          geometry::estimateRelativePose(p.p1, p.p2, pin, pin, v.options, v.prior());
      ms += threadCpuMs() - t0;
      if (g.success() && g.num_inliers >= mo.minPairInliers) {
        ++kept;
        inliers += g.num_inliers;
      }
    }
    const int kf = static_cast<int>(keypoints.size());
    std::printf(
        "{\"policy\": \"%s\", \"keyframes\": %d, \"pairs\": %zu, \"verify_cpu_ms\": %.1f, "
        "\"verify_cpu_ms_per_keyframe\": %.2f, \"pairs_kept\": %ld, \"inliers\": %ld}\n",
        video ? "video" : "scratch", kf, pairs.size(), ms, kf ? ms / kf : 0.0, kept, inliers);
  }
  return 0;
}
