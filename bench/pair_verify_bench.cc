// Pair verification of a video, before and after the video policy (sfm/pair_verification.h):
// the front end (SIFT, matching, keyframe gate, guided matching) runs once over the input;
// every pair it hands to the mapper is then verified three times, "scratch" (E, F and H
// searched from scratch), "video, full H" (the guide's E as E's first hypothesis, F only as
// E's fallback, H searched in full) and "video" (the same with H as the plane/rotation test
// only, TwoViewOptions::homography_test_only), timed in CPU time of the calling thread (one
// thread; a shared machine's wall time says little), then once more step by step. The camera
// is the one given (--camera), as after self-calibration.
//
//   pair_verify_bench INPUT --camera "PINHOLE fx,fy,cx,cy" [--fps 4 | --all-frames]
// prints one JSON line per policy: pairs, keyframes, CPU ms per keyframe, the verified pairs
// and inliers (the policies must agree on what they keep), and the pairs whose geometry (as the
// mapper reads it) differs from "video, full H"; then the time of each step.
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "vidmap/geometry/two_view_steps.h"
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
  // Policies: 0 scratch, 1 video with H searched in full (before this change), 2 video with
  // H as the plane/rotation test only (TwoViewOptions::homography_test_only, the default).
  const char* names[] = {"scratch", "video, full H", "video"};
  std::vector<geometry::TwoViewGeometry> full(pairs.size());
  for (int policy = 0; policy < 3; ++policy) {
    double ms = 0, ms_dropped = 0, ms_no_prior = 0;  // of the pairs the mapper drops; unguided
    long kept = 0, inliers = 0, differ = 0, config_differ = 0;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const Pair& p = pairs[k];
      const double t0 = threadCpuMs();
      sfm::PairVerification v =
          sfm::pairVerification(mo.twoView, policy > 0, sfm::FocalLength::kEstimated, p.pm, false);
      if (policy == 1) v.options.homography_test_only = false;
      geometry::TwoViewGeometry g =
          geometry::estimateRelativePose(p.p1, p.p2, pin, pin, v.options, v.prior());
      const double dt = threadCpuMs() - t0;
      ms += dt;
      if (!p.pm.essential) ms_no_prior += dt;
      if (g.success() && g.num_inliers >= mo.minPairInliers) {
        ++kept;
        inliers += g.num_inliers;
      } else {
        ms_dropped += dt;
      }
      if (policy == 2) {  // what the mapper reads of a pair: config, inliers, pose, points
        const geometry::TwoViewGeometry& f = full[k];
        config_differ += f.config != g.config;
        differ += f.config != g.config || f.inlier_mask != g.inlier_mask ||
                  f.point_indices != g.point_indices || !(f.relative.R == g.relative.R) ||
                  !(f.relative.t == g.relative.t);
      }
      if (policy == 1) full[k] = std::move(g);
    }
    const int kf = static_cast<int>(keypoints.size());
    std::printf(
        "{\"policy\": \"%s\", \"keyframes\": %d, \"pairs\": %zu, \"verify_cpu_ms\": %.1f, "
        "\"verify_cpu_ms_per_keyframe\": %.2f, \"pairs_kept\": %ld, \"inliers\": %ld, "
        "\"cpu_ms_of_pairs_dropped\": %.1f, \"cpu_ms_of_pairs_without_guide\": %.1f, "
        "\"pairs_differing_from_full_h\": %ld, \"configs_differing\": %ld}\n",
        names[policy], kf, pairs.size(), ms, kf ? ms / kf : 0.0, kept, inliers, ms_dropped,
        ms_no_prior, differ, config_differ);
  }
  // Where the video policy's time goes, step by step (the steps of estimateRelativePose,
  // geometry/two_view_steps.h, timed apart): setup, E's RANSAC (with the guide's prior), F
  // (when E fails), H (the rotation test), and the model choice, pose refinement and
  // triangulation; with the samples drawn by E and H (searched in full, and as the test only)
  // and the pairs the H test calls planar.
  {
    double t_setup = 0, t_e = 0, t_f = 0, t_h = 0, t_hfull = 0, t_finish = 0;
    long e_it = 0, h_it = 0, hfull_it = 0, f_runs = 0, prior = 0, plan = 0, pano = 0, h_over = 0,
         n_all = 0;
    for (const Pair& p : pairs) {
      const sfm::PairVerification v =
          sfm::pairVerification(mo.twoView, true, sfm::FocalLength::kEstimated, p.pm, false);
      double t0 = threadCpuMs();
      geometry::detail::TwoViewSetup s;
      geometry::TwoViewGeometry early;
      const bool ok = geometry::detail::setupTwoView(p.p1, p.p2, pin, pin, v.options,
                                                     v.prior() != nullptr, &s, &early);
      double t1 = threadCpuMs();
      t_setup += t1 - t0;
      if (!ok) continue;
      n_all += s.n;
      prior += v.prior() != nullptr;
      geometry::EssentialEstimator eest(s.x1, s.x2);
      geometry::RansacResult<geometry::Mat3R> er, fr, hr;
      if (v.prior()) {
        const geometry::Mat3R pr = *v.prior();
        er = geometry::ransac(eest, s.e, &pr);
      } else {
        er = geometry::ransac(eest, s.e);
      }
      double t2 = threadCpuMs();
      t_e += t2 - t1;
      e_it += er.iterations;
      if (geometry::detail::needsFundamental(v.options, s.n, er)) {
        fr = geometry::ransac(geometry::FundamentalEstimator(p.p1, p.p2), s.fh);
        ++f_runs;
      }
      double t3 = threadCpuMs();
      t_f += t3 - t2;
      const geometry::HomographyEstimator hest(p.p1, p.p2);
      const geometry::RansacResult<geometry::Mat3R> hfull = geometry::ransac(hest, s.fh);
      double t3b = threadCpuMs();
      t_hfull += t3b - t3;
      hfull_it += hfull.iterations;
      hr = geometry::ransac(hest, geometry::detail::homographyOptions(v.options, s, er));
      double t4 = threadCpuMs();
      t_h += t4 - t3b;
      h_it += hr.iterations;
      h_over += hr.success && er.success && hr.num_inliers > 0.8 * er.num_inliers;
      const geometry::TwoViewGeometry g =
          geometry::detail::finishTwoView(p.p1, p.p2, pin, pin, v.options, s, eest, er, fr, hr);
      t_finish += threadCpuMs() - t4;
      plan += g.config == geometry::TwoViewConfig::kPlanar;
      pano += g.config == geometry::TwoViewConfig::kPanoramic;
    }
    std::printf(
        "{\"policy\": \"video, by step\", \"pairs\": %zu, \"with_prior\": %ld, "
        "\"matches_per_pair\": %.1f, \"setup_ms\": %.1f, \"e_ms\": %.1f, \"e_samples\": %ld, "
        "\"f_ms\": %.1f, \"f_runs\": %ld, \"h_full_ms\": %.1f, \"h_full_samples\": %ld, "
        "\"h_test_ms\": %.1f, \"h_test_samples\": %ld, "
        "\"finish_ms\": %.1f, \"h_over_0.8_e\": %ld, \"planar\": %ld, \"panoramic\": %ld}\n",
        pairs.size(), prior, pairs.empty() ? 0.0 : double(n_all) / pairs.size(), t_setup, t_e, e_it,
        t_f, f_runs, t_hfull, hfull_it, t_h, h_it, t_finish, h_over, plan, pano);
  }
  return 0;
}
