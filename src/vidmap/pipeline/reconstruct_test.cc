// The video reconstruction end to end on synthetic sequences rendered by the synth module
// (textured 3D rooms along known camera paths; the truth is written beside the frames and read
// back from its files), and on bad input. Bounds:
//   - every keyframe is registered in one model (the sequences are continuous and textured);
//   - camera centres after a similarity alignment within 0.5% of the spread of the true
//     centres and orientations within 0.2 degrees (0.1 with a known camera) for orbit and
//     forward motion; 2% and 0.5 degrees when a third of the keyframes only turn in place (their
//     centres come from PnP against points seen at little parallax). Measured at commit
//     time: 0.19% / 0.06, 0.26% / 0.02, 0.75% / 0.20 (the test prints them);
//   - mean reprojection error below 0.5 px (SIFT localisation on anti-aliased renders);
//   - an unknown focal length refined to within 2% of the truth.
#include "vidmap/pipeline/reconstruct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <type_traits>
#include <variant>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/image_file.h"
#include "vidmap/pipeline/accuracy_test_util.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/scene3d.h"
#include "vidmap/synth/sequence.h"
#include "vidmap/synth/truth_io.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

// Sequences rendered once and reused by several tests; removed when the binary exits.
fs::path tempRoot() { return testCacheFolder("reconstruct"); }

// Renders (once per test binary) a 320 x 240 (or width x height) sequence of the room; its
// folder's name holds every parameter that differs from the defaults (8 fps, 320 px, 60 deg).
fs::path sequence(const std::string& path, int frames, double fps, int width = 320,
                  int height = 240, double hfovDeg = 60, std::uint32_t seed = 1) {
  const fs::path dir =
      tempRoot() / ("seq_" + path + "_" + std::to_string(frames) +
                    (fps == 8 ? "" : "_" + std::to_string(static_cast<int>(fps * 100)) + "cfps") +
                    (width == 320 ? "" : "_" + std::to_string(width)) +
                    (hfovDeg == 60 && seed == 1 ? ""
                                                : "_h" + std::to_string(static_cast<int>(hfovDeg)) +
                                                      "_s" + std::to_string(seed)));
  if (fs::exists(dir / "rgb.txt")) return dir;
  synth::SequenceOptions o;
  o.scene = "room";
  o.path = path;
  o.frames = frames;
  o.fps = fps;
  o.width = width;
  o.height = height;
  o.hfovDeg = hfovDeg;
  o.seed = seed;
  synth::writeSequence(dir, o);
  return dir;
}

// The model against the sequence's rendered truth (accuracy_test_util.h), printed.
Accuracy accuracy(const fs::path& modelDir, const fs::path& seq) {
  const Accuracy a = trajectoryAccuracy(modelDir, seq / "rgb.txt", seq / "groundtruth.txt", 1e-3);
  std::printf("  %s: %d images, ATE %.4f of the spread %.3f, rotation %.4f deg\n",
              seq.filename().string().c_str(), a.evaluated, a.ateRel, a.spread, a.rotDeg);
  return a;
}

// Light settings keep the tests fast on 2 cores: SIFT at the frame's resolution (the default
// doubles 320 px frames first) and at most 1000 features; the defaults run in the benchmarks.
ReconstructOptions quietOptions() {
  ReconstructOptions o;
  o.progress = false;
  o.width = 0;
  o.device = Device::kCpu;
  o.autoFirstOctave = false;
  o.frontend.sift.firstOctave = 0;
  o.frontend.sift.maxFeatures = 1000;
  return o;
}

std::string knownCamera(const fs::path& seq) {
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  // COLMAP's convention: + 0.5 on the principal point.
  char buf[256];
  std::snprintf(buf, sizeof buf, "PINHOLE %.10g,%.10g,%.10g,%.10g", t.camera.fx, t.camera.fy,
                t.camera.cx + 0.5, t.camera.cy + 0.5);
  return buf;
}

// The options this stop's mapper, gate and photo work added: a value just outside the range
// their FieldInfo states is a clear error from check() naming the option, before any work.
TEST(Reconstruct, NewOptionsOutsideTheirRangeAreClearErrors) {
  const std::vector<std::string> added = {"mapper.min_tri_depth_fraction",
                                          "mapper.ba_min_parallax",
                                          "mapper.ba_cuda_min_observations",
                                          "frontend.klt_min_motion_px",
                                          "klt_capacity",
                                          "klt_levels",
                                          "rerun_focal_change",
                                          "rerun_guess_focal_change",
                                          "rerun_reuse_mib",
                                          "frontend.guide_features",
                                          "pipeline_side_threads",
                                          "mapper.init_last_resort_angle",
                                          "mapper.global_ba_growing_tolerance"};
  std::vector<std::string> seen;
  for (int side = 0; side < 2; ++side) {
    ReconstructOptions probe;
    forEachReconstructField(probe, [&](const FieldInfo& f, auto&& value) {
      using T = std::decay_t<decltype(value)>;
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        if (std::find(added.begin(), added.end(), f.path()) == added.end()) return;
        const double bound = side ? f.hi : f.lo;
        if (!std::isfinite(bound)) return;
        if (side == 0) seen.push_back(f.path());
        ReconstructOptions o;
        forEachReconstructField(o, [&](const FieldInfo& g, auto&& v) {
          using U = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<U, T>)
            if (g.path() == f.path()) v = static_cast<U>(side ? bound + 1 : bound - 1);
        });
        try {
          o.check();
          ADD_FAILURE() << f.path() << " = " << (side ? bound + 1 : bound - 1) << " accepted";
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
        }
      }
    });
  }
  for (const std::string& p : added)
    EXPECT_NE(std::find(seen.begin(), seen.end(), p), seen.end()) << p << ": not a field";
}

TEST(Reconstruct, OrbitWithUnknownCamera) {
  const fs::path seq = sequence("orbit", 20, 4);
  const fs::path out = tempRoot() / "out_orbit";
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, quietOptions(), record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.registered, s.keyframes);
  EXPECT_GE(s.keyframes, 15);
  EXPECT_LT(s.models[0].meanReprojErrorPx, 0.5);
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  EXPECT_NEAR(s.models[0].cameraParams[0], t.camera.fx, 0.02 * t.camera.fx);
  // An orbit turns while it translates: the focal length is determined, and the check says so.
  EXPECT_FALSE(s.focalUndetermined);
  EXPECT_EQ(record.counts().at("focal_undetermined"), 0);
  ASSERT_TRUE(s.models[0].focal.ran);
  std::printf("  orbit: sigma_f / f %.4g\n", s.models[0].focal.relUncertainty);
  EXPECT_LT(s.models[0].focal.relUncertainty, 0.005);
  EXPECT_GT(record.metrics().at("self_calibrated_focal_px"), 0.0);
  EXPECT_EQ(record.counts().at("init_last_resort"), 0);  // a model started by the rules
  // The refined focal length is the written camera's.
  EXPECT_EQ(record.metrics().at("refined_focal_px"), s.models[0].cameraParams[0]);
  const Accuracy a = accuracy(out / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, s.registered);
  EXPECT_LT(a.ateRel, 0.005);
  EXPECT_LT(a.rotDeg, 0.2);
  // The outputs: binary and text models, PLY, trajectory and run record.
  for (const char* f : {"cameras.bin", "images.bin", "points3D.bin", "cameras.txt", "images.txt",
                        "points3D.txt", "points3D.ply", "trajectory.txt"})
    EXPECT_TRUE(fs::exists(out / "sparse" / "0" / f)) << f;
  EXPECT_TRUE(fs::exists(out / "run.json"));
  EXPECT_EQ(record.counts().at("keyframes"), s.keyframes);
  EXPECT_GT(record.metrics().at("mean_track_length"), 2.0);
  // The record's options are the field list's, every one, under its name (the CLI's flags and
  // the Python keywords come from the same list), with the value that ran.
  std::map<std::string, io::OptionValue> recorded(record.options().begin(), record.options().end());
  ReconstructOptions given = quietOptions();
  forEachReconstructField(given, [&](const FieldInfo& f, auto&& value) {
    ASSERT_TRUE(recorded.count(f.path())) << f.path();
    const io::OptionValue& v = recorded.at(f.path());
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, TextField>) {
      EXPECT_EQ(std::get<std::string>(v), value.get()) << f.path();
    } else if constexpr (std::is_same_v<T, bool>) {
      EXPECT_EQ(std::get<bool>(v), value) << f.path();
    } else if constexpr (std::is_integral_v<T>) {
      EXPECT_EQ(std::get<std::int64_t>(v), value) << f.path();
    } else {
      EXPECT_EQ(std::get<double>(v), value) << f.path();
    }
  });
  // Width 0 is the native width.
  EXPECT_EQ(recorded.at("working_width"), recorded.at("native_width"));
  EXPECT_GT(std::get<std::int64_t>(recorded.at("working_width")), 0);
  // Nothing temporary is left beside the output.
  for (const auto& e : fs::directory_iterator(tempRoot()))
    EXPECT_EQ(e.path().filename().string().find(".out_orbit.tmp"), std::string::npos);
}

// A video whose mapper starts from a focal length 39% long (self-calibration off: COLMAP's
// guess 1.2 x 320 = 384 px against the truth's 277) ends near the truth's focal length after
// bundle adjustment; with rerunGuessFocalChange the run is made again from that camera, so the
// pairs are verified and the first keyframes registered with it, and the second pass refines it
// again. Without (the default for a guessed start) the first pass is the result.

// The last try at the input's end: with the start rules out of reach (a median angle of 60
// degrees, which no pair of the orbit has) no model starts and the run fails, saying why; the
// last resort (the widest pair above initLastResortMinAngleDeg, once the input has ended) then
// starts one, which registers every keyframe and matches the truth. (A pan over 0.3 m at a
// 70-degree field of view made no model by the rules: docs/benchmarks.md, "A last try at the
// input's end".)
TEST(Reconstruct, ALastResortStartsAModelWhenNoPairPassedTheStartRules) {
  const fs::path seq = sequence("orbit", 20, 4);
  ReconstructOptions o = quietOptions();
  o.mapper.initMinAngleDeg = 60;
  o.mapper.initRelaxedMinAngleDeg = 60;
  o.mapper.initLastResortMinAngleDeg = 0;
  {
    io::RunRecord record;
    try {
      reconstruct(seq / "rgb.txt", tempRoot() / "out_last_resort_off", o, record);
      ADD_FAILURE() << "a model started with the start rules out of reach";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no model could be started"), std::string::npos)
          << e.what();
    }
  }
  o.mapper.initLastResortMinAngleDeg = 0.25;
  const fs::path out = tempRoot() / "out_last_resort";
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.registered, s.keyframes);
  EXPECT_EQ(record.counts().at("init_last_resort"), 1);
  const Accuracy a = accuracy(out / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, s.registered);
  EXPECT_LT(a.ateRel, 0.005);
  EXPECT_LT(a.rotDeg, 0.2);
}
TEST(Reconstruct, AFocalLengthThatMovedIsTheStartOfASecondPass) {
  const fs::path seq = sequence("orbit", 20, 4);
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  ReconstructOptions o = quietOptions();
  o.mapper.selfCalibrateFocal = false;
  for (int rerun : {0, 1}) {
    o.rerunGuessFocalChange = rerun ? 0.1 : 0;
    const fs::path out = tempRoot() / ("out_rerun_" + std::to_string(rerun));
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.registered, s.keyframes);
    EXPECT_FALSE(s.startSelfCalibrated);
    EXPECT_DOUBLE_EQ(s.startFocalPx, 384);
    EXPECT_NEAR(s.endFocalPx, t.camera.fx, 0.02 * t.camera.fx);
    const double f = s.models[0].cameraParams[0];
    std::printf("  rerun %d: focal %.2f (truth %.2f), start %.1f, end of the first pass %.2f\n",
                rerun, f, t.camera.fx, s.startFocalPx, s.endFocalPx);
    EXPECT_NEAR(f, t.camera.fx, 0.02 * t.camera.fx);
    if (rerun) {
      EXPECT_EQ(s.rerunFocalPx, s.endFocalPx);
      EXPECT_EQ(record.metrics().at("rerun_focal_px"), s.endFocalPx);
      // The pass that explains more observations is the output, whole (second_pass_test.cc
      // has a real input where it is the first).
      EXPECT_FALSE(s.rerunDiscarded);
      EXPECT_GE(s.secondPassObservations, s.firstPassObservations);
      std::int64_t onDisk = 0;
      for (const auto& [id, p] : io::readColmapModel(out / "sparse" / "0").points3d)
        onDisk += static_cast<std::int64_t>(p.track.size());
      EXPECT_EQ(onDisk, s.secondPassObservations);
      // The second pass refined its start and checked the focal length.
      EXPECT_NE(f, s.endFocalPx);
      ASSERT_TRUE(s.models[0].focal.ran);
      EXPECT_FALSE(s.focalUndetermined);
    } else {
      EXPECT_EQ(s.rerunFocalPx, 0);
      EXPECT_EQ(record.metrics().count("rerun_focal_px"), 0u);
    }
    const Accuracy a = accuracy(out / "sparse" / "0", seq);
    EXPECT_EQ(a.evaluated, s.registered);
    EXPECT_LT(a.ateRel, 0.005);
    EXPECT_LT(a.rotDeg, 0.2);
  }
}

// The mapper's bound on a camera (MapperOptions::maxDistortion): a global adjustment that
// leaves the distortion above it is made again without distortion, held at 0 from then on. The
// orbit has none (its truth is a pinhole), so its refined k stays small but not zero; with the
// bound set below that, every refinement is a "runaway", and the model is the pinhole's, as
// close to the truth as with the distortion free.
TEST(Reconstruct, ACameraBeyondTheMappersBoundsIsAdjustedAgainWithoutDistortion) {
  const fs::path seq = sequence("orbit", 20, 4);
  for (double bound : {1.0, 1e-6}) {
    ReconstructOptions o = quietOptions();
    o.mapper.maxDistortion = bound;
    const fs::path out = tempRoot() / (bound < 1 ? "out_runaway" : "out_no_runaway");
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.registered, s.keyframes);
    const std::vector<double>& cam = s.models[0].cameraParams;  // SIMPLE_RADIAL f, cx, cy, k
    ASSERT_EQ(cam.size(), 4u);
    const std::int64_t runaways = record.counts().at("intrinsics_runaways");
    std::printf("  bound %g: %lld runaways, f %.2f, k %.3g\n", bound,
                static_cast<long long>(runaways), cam[0], cam[3]);
    if (bound < 1) {
      EXPECT_GE(runaways, 1);
      EXPECT_EQ(cam[3], 0.0);
    } else {
      EXPECT_EQ(runaways, 0);
      EXPECT_NE(cam[3], 0.0);
    }
    const Accuracy a = accuracy(out / "sparse" / "0", seq);
    EXPECT_LT(a.ateRel, 0.005);
    EXPECT_LT(a.rotDeg, 0.2);
  }
}

std::string fileBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The frames of a video as a folder (read as video frames at folderFrameRate; 20 frames are
// below the automatic rule's 30, so --sequential) and as a TUM list with the same times give
// the same model, byte for byte.
TEST(Reconstruct, FolderOfVideoFramesEqualsTheSameFramesAsAList) {
  const fs::path seq = sequence("orbit", 20, 4);
  ReconstructOptions o = quietOptions();
  o.folderFrameRate = 4;  // the list's rate (its times are i / 4)
  o.folder = io::FolderKind::kVideo;
  io::RunRecord listRecord, folderRecord;
  const ReconstructSummary list =
      reconstruct(seq / "rgb.txt", tempRoot() / "out_as_list", o, listRecord);
  const ReconstructSummary folder =
      reconstruct(seq / "rgb", tempRoot() / "out_as_folder", o, folderRecord);
  EXPECT_EQ(list.inputKind, "list");
  EXPECT_EQ(folder.inputKind, "video frames");
  EXPECT_EQ(folder.inputKindReason, "--sequential");
  EXPECT_NE(formatSummary(folder).find("a folder read as video frames"), std::string::npos);
  EXPECT_EQ(folder.frames, list.frames);
  ASSERT_EQ(folder.models.size(), list.models.size());
  ASSERT_GE(list.models.size(), 1u);
  for (const char* f : {"cameras.bin", "images.bin", "points3D.bin", "trajectory.txt"}) {
    const std::string a = fileBytes(tempRoot() / "out_as_list" / "sparse" / "0" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == fileBytes(tempRoot() / "out_as_folder" / "sparse" / "0" / f)) << f;
  }
  // The run record says which way the folder was read.
  std::ifstream f(tempRoot() / "out_as_folder" / "run.json");
  const std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"input_kind\": \"video frames\""), std::string::npos);
  EXPECT_NE(json.find("\"input_kind_reason\": \"--sequential\""), std::string::npos);
}

std::int64_t stageCalls(const io::RunRecord& r, const std::string& name) {
  for (const io::StageStat& st : r.stages())
    if (st.name == name) return st.calls;
  return 0;
}

// A second pass that reuses the first pass's keyframes, SIFT features and plain matches
// (ReconstructOptions::rerunReuseMiB) gives the model of a second pass that decodes and
// extracts the frames again, byte for byte: only the guided matching reads the camera, and it
// is made again with the second pass's camera (the first pass's, 39% long at the start, would
// give other pairs). The reusing run extracts once (SIFT and decoding in the first pass only)
// and is as close to the rendered truth as the test above asks.
TEST(Reconstruct, ASecondPassFromTheFirstPassFeaturesIsTheSecondPassFromTheFrames) {
  const fs::path seq = sequence("orbit", 20, 4);
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  const auto run = [&](int reuseMiB, const char* name, io::RunRecord& record) {
    ReconstructOptions o = quietOptions();
    o.mapper.selfCalibrateFocal = false;
    o.rerunGuessFocalChange = 0.1;
    o.rerunReuseMiB = reuseMiB;
    return reconstruct(seq / "rgb.txt", tempRoot() / name, o, record);
  };
  io::RunRecord reused, again;
  const ReconstructSummary sr = run(64, "out_rerun_reused", reused);
  const ReconstructSummary sa = run(0, "out_rerun_again", again);
  ASSERT_EQ(sr.models.size(), 1u);
  ASSERT_GT(sr.rerunFocalPx, 0);
  ASSERT_GT(sa.rerunFocalPx, 0);
  EXPECT_EQ(reused.counts().at("rerun_reused_frames"), sr.frames);
  EXPECT_GT(reused.metrics().at("rerun_recording_mib"), 0);
  EXPECT_EQ(again.counts().at("rerun_reused_frames"), 0);
  for (const char* f : {"cameras.bin", "images.bin", "points3D.bin"}) {
    const std::string a = fileBytes(tempRoot() / "out_rerun_reused" / "sparse" / "0" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == fileBytes(tempRoot() / "out_rerun_again" / "sparse" / "0" / f)) << f;
  }
  // The counts of the second pass's front end are the same; the stages add up over both passes.
  for (const char* c : {"keyframes", "features", "plain_matches", "guided_matches", "guides"})
    EXPECT_EQ(reused.counts().at(c), again.counts().at(c)) << c;
  EXPECT_EQ(stageCalls(again, "sift"), 2 * sa.siftCalls);
  EXPECT_EQ(stageCalls(reused, "sift"), sr.siftCalls);
  // Each pass opens the source (one call) and reads its frames; the reusing second pass only
  // opens it (the working size).
  EXPECT_EQ(stageCalls(reused, "decode"), stageCalls(again, "decode") / 2 + 1);
  EXPECT_NEAR(sr.models[0].cameraParams[0], t.camera.fx, 0.02 * t.camera.fx);
  const Accuracy a = accuracy(tempRoot() / "out_rerun_reused" / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, sr.registered);
  EXPECT_LT(a.ateRel, 0.005);
  EXPECT_LT(a.rotDeg, 0.2);
}

// FrontendOptions::guideFeatures: the plain matches that make the guides of a keyframe's older
// pairs come from the strongest features only. A limit too small to make any guide (8 matches <
// minPairMatches) has every such pair matched again in full: the model is the one without the
// limit, byte for byte. A limit that makes guides: fewer plain matches, the guided matches and
// the accuracy against the rendered truth as without it.
TEST(Reconstruct, GuidesFromTheStrongestFeatures) {
  const fs::path seq = sequence("orbit", 20, 4);
  const auto run = [&](int limit, const char* name, io::RunRecord& record) {
    ReconstructOptions o = quietOptions();
    o.frontend.guideFeatures = limit;
    return reconstruct(seq / "rgb.txt", tempRoot() / name, o, record);
  };
  io::RunRecord all, none, some;
  const ReconstructSummary sAll = run(0, "out_guides_all", all);
  const ReconstructSummary sNone = run(8, "out_guides_none", none);
  const ReconstructSummary sSome = run(250, "out_guides_some", some);
  ASSERT_EQ(sAll.models.size(), 1u);
  ASSERT_EQ(sNone.models.size(), 1u);
  EXPECT_EQ(all.counts().at("guide_full_rematches"), 0);
  EXPECT_GT(none.counts().at("guide_full_rematches"), 10);
  EXPECT_EQ(none.counts().at("guided_matches"), all.counts().at("guided_matches"));
  for (const char* f : {"cameras.bin", "images.bin", "points3D.bin"}) {
    const std::string a = fileBytes(tempRoot() / "out_guides_all" / "sparse" / "0" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == fileBytes(tempRoot() / "out_guides_none" / "sparse" / "0" / f)) << f;
  }
  EXPECT_LT(some.counts().at("plain_matches"), 0.8 * all.counts().at("plain_matches"));
  EXPECT_NEAR(
      static_cast<double>(some.counts().at("guided_matches")) / all.counts().at("guided_matches"),
      1.0, 0.03);
  ASSERT_EQ(sSome.models.size(), 1u);
  EXPECT_EQ(sSome.registered, sSome.keyframes);
  const Accuracy a = accuracy(tempRoot() / "out_guides_some" / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, sSome.registered);
  EXPECT_LT(a.ateRel, 0.005);
  EXPECT_LT(a.rotDeg, 0.2);
}

TEST(Reconstruct, ForwardWithKnownCameraAndTheGate) {
  const fs::path seq = sequence("forward", 24, 4);
  ReconstructOptions o = quietOptions();
  o.camera = sfm::CameraSpec::parse(knownCamera(seq));
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb.txt", tempRoot() / "out_forward", o, record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.registered, s.keyframes);
  // Forward motion moves little near the focus of expansion: the gate drops some frames.
  EXPECT_GT(s.dropped, 0);
  EXPECT_LT(s.models[0].meanReprojErrorPx, 0.5);
  // A known camera has no focal length to determine: no check, no flag.
  EXPECT_FALSE(s.models[0].focal.ran);
  EXPECT_FALSE(s.focalUndetermined);
  EXPECT_EQ(record.counts().at("focal_undetermined"), 0);
  // The dropped frames are localised afterwards: a pose for every sampled frame, all within
  // the same bounds (the model, and COLMAP, read them as images).
  EXPECT_EQ(s.localized, s.dropped);
  const Accuracy a = accuracy(tempRoot() / "out_forward" / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, s.frames);
  EXPECT_LT(a.ateRel, 0.005);
  EXPECT_LT(a.rotDeg, 0.1);
}

// The CLI's defaults with --klt gate on the CPU, camera unknown, from `seq` into `out`, and what
// a pan that holds shows: one model, every keyframe registered, fewer keyframes than half the
// frames (the gate drops most frames of the turn), the focal within 1% of the truth, every frame
// evaluated, ATE below 3% of the spread and rotation below 0.05 deg.
ReconstructSummary expectGatePanHolds(const fs::path& seq, const fs::path& out) {
  ReconstructOptions o;
  o.progress = false;
  o.device = Device::kCpu;
  o.klt = true;
  o.kltSource.matches = false;  // --klt gate
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
  EXPECT_EQ(s.models.size(), 1u);
  if (s.models.size() != 1) return s;
  EXPECT_EQ(s.registered, s.keyframes);
  EXPECT_LT(s.keyframes, s.frames / 2);
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  EXPECT_NEAR(s.models[0].cameraParams[0], t.camera.fx, 0.01 * t.camera.fx);
  const Accuracy a = accuracy(out / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, s.frames);
  EXPECT_LT(a.ateRel, 0.03);
  EXPECT_LT(a.rotDeg, 0.05);
  return s;
}

// --klt auto (the default): the KLT gate on a sequence sampled at 10 frames a second or more
// (here 12 at all frames), descriptors only on sparser samples (the default 4 fps) and with
// --klt off; the summary and the record say what was asked and what ran.
// The rate of a list's timestamps is its nominal rate up to their jitter: TUM fr1-xyz's list
// at 10 Hz measures 9.96 per second and is dense; 9.7 is not, nor is a photo set at any rate.
TEST(Reconstruct, ARateWithinTheTimestampsJitterOfTenIsDense) {
  io::FrameSourceInfo info;
  info.sequential = true;
  for (const auto& [fps, dense] : std::vector<std::pair<double, bool>>{
           {4, false}, {9.7, false}, {9.81, true}, {9.96, true}, {10, true}, {29.97, true}}) {
    info.fps = fps;
    EXPECT_EQ(sampledDensely(info), dense) << fps;
  }
  info.sequential = false;
  EXPECT_FALSE(sampledDensely(info));
}

TEST(Reconstruct, KltAutoTakesTheGateOnDenseSamplesOnly) {
  const fs::path seq = sequence("orbit", 24, 12, 320, 240);
  struct Case {
    bool allFrames, kltAuto;
    const char* used;
  };
  for (const Case c :
       {Case{true, true, "gate"}, Case{false, true, "off"}, Case{true, false, "off"}}) {
    ReconstructOptions o;
    o.progress = false;
    o.device = Device::kCpu;
    o.allFrames = c.allFrames;
    o.kltAuto = c.kltAuto;
    o.overwrite = true;
    io::RunRecord record;
    const ReconstructSummary s =
        reconstruct(seq / "rgb.txt", tempRoot() / "out_klt_auto", o, record);
    const bool gate = std::string(c.used) == "gate";
    EXPECT_EQ(s.klt, gate) << c.allFrames << c.kltAuto;
    EXPECT_EQ(s.kltGateOnly, gate);
    EXPECT_EQ(s.kltAuto, c.kltAuto);
    EXPECT_EQ(record.counts().count("klt_pushes") == 1, gate) << "the tracker ran";
    std::map<std::string, io::OptionValue> rec(record.options().begin(), record.options().end());
    EXPECT_EQ(std::get<std::string>(rec.at("klt")), c.kltAuto ? "auto" : "off");
    EXPECT_EQ(std::get<std::string>(rec.at("klt_used")), c.used);
    const std::string text = formatSummary(s);
    EXPECT_EQ(text.find("klt: auto, frames sampled densely") != std::string::npos,
              gate && c.kltAuto);
    EXPECT_EQ(text.find("klt: off (auto") != std::string::npos, !gate && c.kltAuto);
  }
  // A value that is no mode is a clear error naming the four, and changes nothing.
  ReconstructOptions o;
  forEachReconstructField(o, [&](const FieldInfo& f, auto&& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, TextField>) {
      if (f.path() != "klt") return;
      try {
        value.set("gate-ish");
        ADD_FAILURE() << "--klt gate-ish accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("is not auto, off, gate or on"), std::string::npos)
            << e.what();
      }
      EXPECT_EQ(value.get(), "auto");
    }
  });
}

// The pan (a +-35 degree yaw over 0.3 m) at 640 x 480 with the camera unknown and the KLT gate,
// the CLI's defaults otherwise (24 of the 48 frames sampled): the gate keeps 7 keyframes about
// 10 degrees apart. Waiting 8 keyframes for the relaxed start (the rule before, counted in
// keyframes) met a wide pair of few matches first, whose pose was wrong (a median angle of 47
// degrees where the truth allows 7), and the model broke (ATE 70% of the spread, focal 5.7%
// long); counted in sampled frames the wait starts the model as --klt off does. Measured at
// commit time: ATE 1.4% of the spread, 0.010 deg, focal 554.1 px (truth 554.3); from the
// profiled start (552.1 px, sfm::profileFocal) 2.6%, 0.040 deg, 553.1 px.
TEST(Reconstruct, APanUnderTheKltGateWithAnUnknownCameraHolds) {
  expectGatePanHolds(sequence("pan", 48, 8, 640, 480), tempRoot() / "out_pan_gate");
}

// The pan at a 75-degree field of view (another texture): the first pairs' homographies, read as
// rotations, take the sideways walk for a longer lens (428.7 px, truth 417.0), and with the
// gate's keyframes 10 degrees apart that 2.8% makes a parallax that is not there: the model
// started from it broke (ATE 80% of the spread, one keyframe refused). The pairs' calibrated
// profile (sfm::profileFocal) starts the mapper within 1% of the truth, and the model holds
// without the focal sweep's extra runs. Measured at commit time: start 416.6 px, ATE 1.2% of the
// spread, 0.019 deg, focal 417.8 px.
TEST(Reconstruct, APanAt75DegreesUnderTheKltGateStartsFromTheTrueFocalLength) {
  const fs::path seq = sequence("pan", 48, 8, 640, 480, 75, 4);
  const ReconstructSummary s = expectGatePanHolds(seq, tempRoot() / "out_pan75_gate");
  const double truth = synth::readSequenceTruth(seq).camera.fx;
  EXPECT_TRUE(s.startSelfCalibrated);
  EXPECT_NEAR(s.startFocalPx, truth, 0.01 * truth);
  EXPECT_TRUE(s.focalSweep.empty());
}

// The pan at 640 x 480 with the camera known and the KLT gate: 7 keyframes of the 24 sampled
// frames, the 17 others localised by PnP on their keyframe's points. With those poses alone
// (the mapper before adjustLocalized) the model is 1.7x the ATE of --klt off's 24 keyframes
// (0.00118 against 0.00070), and the gate's keyframes are as much worse as --klt off's own on
// the same 7 frames: the loss is the dropped frames' observations, not the gate's choice
// (docs/benchmarks.md, "The KLT gate's loss: fewer keyframes, and the dropped frames'
// observations"). A last global adjustment with the localised frames must bring the model
// nearer the truth, poses of keyframes and dropped frames alike. Measured at commit time: ATE
// 1.03% of the spread against 1.34% without it.
TEST(Reconstruct, TheKltGatesDroppedFramesJoinTheLastAdjustment) {
  const fs::path seq = sequence("pan", 48, 8, 640, 480);
  ReconstructOptions o;  // the CLI's defaults
  o.progress = false;
  o.device = Device::kCpu;
  o.camera = sfm::CameraSpec::parse(knownCamera(seq));
  o.klt = true;
  o.kltSource.matches = false;  // --klt gate
  Accuracy a[2];
  for (int adjust = 0; adjust < 2; ++adjust) {
    o.mapper.adjustLocalized = adjust == 1;
    const fs::path out = tempRoot() / ("out_pan_gate_adjust" + std::to_string(adjust));
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_LT(s.keyframes, s.frames / 2);
    EXPECT_EQ(s.localized, s.frames - s.keyframes);
    // The dropped frames' PnP is its own stage, one call a frame (their adjustment is a global
    // BA's, not a registration's).
    const auto& st = record.stages();
    const auto loc = std::find_if(
        st.begin(), st.end(), [](const io::StageStat& x) { return x.name == "mapper.localize"; });
    ASSERT_NE(loc, st.end());
    EXPECT_EQ(loc->calls, s.localized);
    // Every mapper stage counts its timed scopes: one verification a keyframe.
    const auto ver = std::find_if(st.begin(), st.end(),
                                  [](const io::StageStat& x) { return x.name == "mapper.verify"; });
    ASSERT_NE(ver, st.end());
    EXPECT_EQ(ver->calls, s.keyframes);
    a[adjust] = accuracy(out / "sparse" / "0", seq);
    EXPECT_EQ(a[adjust].evaluated, s.frames);
  }
  EXPECT_LT(a[1].ateRel, 0.85 * a[0].ateRel);
  EXPECT_LT(a[1].ateRel, 0.012);
  EXPECT_LT(a[1].rotDeg, 0.02);
}

// Renders the room through `cam` from each pose into tempRoot()/NAME: the frames as
// rgb/<pattern> (printf of the index), the TUM list titled `title` and the truth, frame i at
// time i * dt. A set written before is reused.
fs::path renderRoomSet(const std::string& name, const synth::PinholeCamera& cam,
                       const std::vector<synth::Pose>& poses, double dt, const char* pattern,
                       const char* title, double gain = 1) {
  const fs::path dir = tempRoot() / name;
  if (fs::exists(dir / "rgb.txt")) return dir;
  fs::create_directories(dir / "rgb");
  const synth::Scene scene = synth::makeScene("room", 1);
  std::vector<synth::CameraFrame> frames;
  std::vector<std::string> names;
  for (size_t i = 0; i < poses.size(); ++i) {
    synth::CameraFrame f;
    f.index = static_cast<int>(i);
    f.timestamp = static_cast<double>(i) * dt;
    f.pose = poses[i];
    frames.push_back(f);
    char file[64];
    std::snprintf(file, sizeof file, pattern, static_cast<int>(i));
    names.push_back(std::string("rgb/") + file);
    RgbImage img = synth::renderImage(scene, cam, f.pose);
    if (gain != 1)  // a darker exposure: every channel scaled
      for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
          Rgb8& p = img(x, y);
          for (std::uint8_t* c : {&p.r, &p.g, &p.b})
            *c = static_cast<std::uint8_t>(std::lround(std::min(255.0, gain * *c)));
        }
    io::writePng(dir / names.back(), img);
  }
  std::ofstream(dir / "groundtruth.txt") << synth::formatTumTrajectory(frames);
  std::ofstream(dir / "rgb.txt") << synth::formatTumImageList(frames, names, title);
  return dir;
}

// A path the presets do not have: the camera first turns in place (no baseline at all), then
// walks sideways while it keeps turning. The first model must wait for the translation and
// register the turning keyframes afterwards.
fs::path rotationThenTranslation() {
  std::vector<synth::Pose> poses;
  const int n = 24, turn = 8;
  for (int i = 0; i < n; ++i) {
    // Yaw from +25 to -5 degrees in place, then to -25 while the eye moves 3 m along x.
    const double yaw =
        i < turn ? 25.0 - 30.0 * i / (turn - 1) : -5.0 - 20.0 * (i - turn + 1) / (n - turn);
    const double x = i < turn ? -1.5 : -1.5 + 3.0 * (i - turn + 1) / (n - turn);
    const Eigen::Vector3d eye(x, -3.2, 1.5);
    const double a = yaw * M_PI / 180, pitch = -10 * M_PI / 180;
    const Eigen::Vector3d look(-std::sin(a) * std::cos(pitch), std::cos(a) * std::cos(pitch),
                               std::sin(pitch));
    poses.push_back(synth::Pose::lookAt(eye, eye + look));
  }
  return renderRoomSet("seq_turn_then_walk", synth::PinholeCamera::fromHfov(320, 240, 60), poses,
                       0.25, "frame_%06d.png", "turn then walk");
}

// A photo set of the room (issue 19): 9 photos at wide steps, out along the orbit's arc 30
// degrees apart and back nearer and lower (the loop revisits its start), read as photos.
// Every photo must join one model.
std::vector<synth::Pose> photoLoopPoses() {
  std::vector<synth::Pose> poses;
  const double out[] = {-150, -120, -90, -60, -30}, back[] = {-45, -75, -105, -135};
  for (int i = 0; i < 9; ++i) {
    const bool outward = i < 5;
    const double a = (outward ? out[i] : back[i - 5]) * M_PI / 180;
    const double r = outward ? 2.9 : 2.3, h = outward ? 1.6 : 1.2;
    poses.push_back(synth::Pose::lookAt(Eigen::Vector3d(r * std::cos(a), r * std::sin(a), h),
                                        Eigen::Vector3d(0, 0, 0.6)));
  }
  return poses;
}

fs::path photoLoop() {
  return renderRoomSet("seq_photo_loop", synth::PinholeCamera::fromHfov(320, 240, 60),
                       photoLoopPoses(), 1, "photo_%02d.png", "photo loop");
}

TEST(Reconstruct, APhotoLoopAtWideStepsIsOneModel) {
  const fs::path seq = photoLoop();
  ReconstructOptions o = quietOptions();
  // The renderer's camera (320 x 240, 60 degrees), in COLMAP's convention.
  const synth::PinholeCamera pin = synth::PinholeCamera::fromHfov(320, 240, 60);
  char camera[160];
  std::snprintf(camera, sizeof camera, "PINHOLE %.10g,%.10g,%.10g,%.10g", pin.fx, pin.fy,
                pin.cx + 0.5, pin.cy + 0.5);
  o.camera = sfm::CameraSpec::parse(camera);
  io::RunRecord record;
  // The list keeps the photos' times (for the accuracy check); the frames are not sampled.
  o.allFrames = true;
  const ReconstructSummary s =
      reconstruct(seq / "rgb.txt", tempRoot() / "out_photo_loop", o, record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.registered, 9);
  EXPECT_TRUE(s.unjoined.empty());
  EXPECT_EQ(record.counts().at("unjoined_keyframes"), 0);
  const Accuracy a = accuracy(tempRoot() / "out_photo_loop" / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, 9);
  // Nine photos 30 degrees apart see each point in fewer views than the video tests' frames:
  // measured at commit time 0.59% of the spread and 0.16 degrees; bounds 1% and 0.3 degrees.
  EXPECT_LT(a.ateRel, 0.01);
  EXPECT_LT(a.rotDeg, 0.3);
}

// Issue 19 (the Middlebury dino: a dark subject on black, 226 SIFT features per 640 x 480 image
// at COLMAP's threshold): the photo loop at a quarter of its exposure gives SIFT few features;
// photos below photoMinFeatures (scaled to 320 x 240: 125) are extracted again at a lower peak
// threshold. Asserted: off, fewer than 9 photos registered (no model at all, measured); on,
// every photo is extracted again and one model registers at least 8 within the bright loop's
// bounds.
TEST(Reconstruct, DarkPhotosAreExtractedAgainAtALowerThreshold) {
  const synth::PinholeCamera pin = synth::PinholeCamera::fromHfov(320, 240, 60);
  const fs::path seq = renderRoomSet("seq_photo_loop_dark", pin, photoLoopPoses(), 1,
                                     "photo_%02d.png", "photo loop, dark", 0.25);
  char camera[160];
  std::snprintf(camera, sizeof camera, "PINHOLE %.10g,%.10g,%.10g,%.10g", pin.fx, pin.fy,
                pin.cx + 0.5, pin.cy + 0.5);
  ReconstructOptions o = quietOptions();
  o.camera = sfm::CameraSpec::parse(camera);
  // Off: too few matches between the dark photos to start a model (measured: "no model could
  // be started from 5 keyframes (0 verified pairs)").
  {
    ReconstructOptions off = o;
    off.frontend.photoMinFeatures = 0;
    io::RunRecord record;
    std::string error;
    try {
      const ReconstructSummary s =
          reconstruct(seq / "rgb", tempRoot() / "out_dark_off", off, record);
      std::printf("  dark loop, lowering off: %zu model(s), %d registered\n", s.models.size(),
                  s.registered);
      EXPECT_LT(s.registered, 9);
    } catch (const Error& e) {
      error = e.what();
      std::printf("  dark loop, lowering off: %s\n", e.what());
    }
  }
  const fs::path dir = tempRoot() / "out_dark_lowered";
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb", dir, o, record);
  ASSERT_EQ(s.inputKind, "photos");
  EXPECT_EQ(record.counts().at("sift_lowered_threshold_images"), 9);
  // Measured: 8 of the 9 (each photo extracted once more, at half the threshold: 125 features
  // reached), none without the lowering.
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_GE(s.registered, 8);
  const Accuracy a = accuracy(dir / "sparse" / "0", seq);
  std::printf(
      "  dark loop, lowering on: %lld features in 9 photos (%lld extractions again), %d "
      "registered, centres %.2f%% of the spread, %.3f deg\n",
      static_cast<long long>(record.counts().at("features")),
      static_cast<long long>(record.counts().at("sift_lowered_threshold_calls")), s.registered,
      100 * a.ateRel, a.rotDeg);
  EXPECT_EQ(a.evaluated, s.registered);
  // The bright loop's bounds (APhotoLoopAtWideStepsIsOneModel).
  EXPECT_LT(a.ateRel, 0.01);
  EXPECT_LT(a.rotDeg, 0.3);
}

// The photo loop through a lens whose principal point is 15 px off the image centre (12 right,
// 9 up at 320 x 240; Strecha's fountain has 23 px at 3072 px), camera unknown, read as a folder
// of photos: the mapper holds the point at the centre (as COLMAP), and the pipeline refines it
// when the model rejects the centre (pipeline/principal_point.h). Asserted: the point is
// refined and lands nearer the truth than the centre, and the centres and orientations are more
// accurate than with the refinement off. Measured at commit time: the point 8.7 px from the
// truth (15 held; delta chi2 298): cx within 3 px, cy hardly moved (the loop's cameras all look
// at one centre from two heights, so a tilt of every camera is nearly free: the rings' case);
// centres 1.6% of the spread against 4.7%, orientations 1.01 against 1.20 degrees.
TEST(Reconstruct, APhotoSetsPrincipalPointIsRefinedWhenTheModelFixesIt) {
  synth::PinholeCamera cam = synth::PinholeCamera::fromHfov(320, 240, 60);
  cam.cx += 12;
  cam.cy -= 9;
  const fs::path seq = renderRoomSet("seq_photo_loop_offcentre", cam, photoLoopPoses(), 1,
                                     "photo_%02d.png", "photo loop, principal point off centre");
  Accuracy acc[2];
  for (const bool refine : {true, false}) {
    ReconstructOptions o = quietOptions();
    o.principalPoint.enabled = refine;
    const fs::path dir = tempRoot() / (refine ? "out_pp_on" : "out_pp_off");
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb", dir, o, record);
    ASSERT_EQ(s.inputKind, "photos");
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.registered, 9);
    const PrincipalPointFit& f = s.models[0].principalPoint;
    const io::ColmapModel m = io::readColmapModel(dir / "sparse" / "0");
    ASSERT_EQ(m.cameras.size(), 1u);
    const std::vector<double>& q = m.cameras.begin()->second.params;  // f, cx, cy, k
    // The truth in COLMAP's convention (+ 0.5).
    const double miss = std::hypot(q[1] - (cam.cx + 0.5), q[2] - (cam.cy + 0.5));
    std::printf(
        "  refinement %s: principal point %.2f, %.2f, %.2f px from the truth (shift %.2f, "
        "delta chi2 %.1f, %s)\n",
        refine ? "on" : "off", q[1], q[2], miss, f.shiftPx, f.deltaChi2,
        f.refined ? "refined" : f.reason.c_str());
    acc[refine ? 0 : 1] = accuracy(dir / "sparse" / "0", seq);
    if (refine) {
      EXPECT_TRUE(f.ran);
      EXPECT_TRUE(f.refined) << f.reason;
      EXPECT_EQ(record.counts().at("model_0_principal_point_refined"), 1);
      EXPECT_LT(miss, 0.75 * std::hypot(12.0, 9.0));
    } else {
      EXPECT_FALSE(f.ran);
      EXPECT_NEAR(q[1], 160, 1e-9);  // the centre, as the mapper holds it
      EXPECT_NEAR(q[2], 120, 1e-9);
    }
  }
  EXPECT_EQ(acc[0].evaluated, 9);
  EXPECT_LT(acc[0].ateRel, 0.5 * acc[1].ateRel);
  EXPECT_LT(acc[0].rotDeg, acc[1].rotDeg);
}

// A photo set through a narrow lens (issue 19; the Middlebury dino ring's case): 10 photos of
// the room's table 8 degrees apart on the orbit, a 15 degree field of view (f = 1215 px at
// 320 px, 3.2 times the 1.2 x width guess the mapper starts from), camera unknown. Every model
// must be right (centres within 5% of the spread, orientations within 2 degrees, the focal
// length within 5%) or flagged as suspect in the summary and the record: never a wrong model
// without a word. Measured at commit time, without the focal sweep: one model of 10, centres
// 2.1% of the spread, 0.40 degrees, but the focal length 1052 px (13% short), sigma_f / f 6.3%,
// the views turning by 72 degrees: wrong, flagged; with it: 1192 px (2% short), 1.9%, 0.35 deg. (At
// 12 degrees no model starts; at 20 degrees and 6-degree steps the model is right, 902 px against
// 907, sigma_f / f 1.2%, not flagged.)
constexpr double kNarrowHfovDeg = 15;

fs::path narrowPhotoRing() {
  std::vector<synth::Pose> poses;
  for (int i = 0; i < 10; ++i) {
    const double a = (-150.0 + 8 * i) * M_PI / 180;
    poses.push_back(synth::Pose::lookAt(Eigen::Vector3d(2.9 * std::cos(a), 2.9 * std::sin(a), 1.6),
                                        Eigen::Vector3d(0, 0, 0.6)));
  }
  return renderRoomSet("seq_narrow_ring", synth::PinholeCamera::fromHfov(320, 240, kNarrowHfovDeg),
                       poses, 1, "photo_%02d.png", "narrow ring");
}

// Runs the narrow ring as photos; every model must be right or flagged. Returns the number of
// wrong models.
int narrowRingWrongModels(bool sweep, ReconstructSummary* out) {
  const fs::path seq = narrowPhotoRing();
  const fs::path dir = tempRoot() / (sweep ? "out_narrow_sweep" : "out_narrow_flag");
  ReconstructOptions o = quietOptions();
  o.focalSweep.enabled = sweep;
  io::RunRecord record;
  // The folder of photos (the list keeps their times for the accuracy check).
  const ReconstructSummary s = reconstruct(seq / "rgb", dir, o, record);
  *out = s;
  EXPECT_EQ(s.inputKind, "photos");
  EXPECT_FALSE(s.models.empty());
  const double fx = synth::PinholeCamera::fromHfov(320, 240, kNarrowHfovDeg).fx;
  const std::string summary = formatSummary(s);
  int wrong = 0;
  for (size_t i = 0; i < s.models.size(); ++i) {
    const ModelSummary& m = s.models[i];
    const Accuracy a = accuracy(dir / "sparse" / std::to_string(i), seq);
    const bool right = a.evaluated >= 3 && a.ateRel < 0.05 && a.rotDeg < 2 &&
                       std::abs(m.cameraParams[0] - fx) < 0.05 * fx;
    const bool flagged = m.focal.suspect;
    std::printf(
        "  sweep %s, model %zu: %d images, focal %.1f (truth %.1f), sigma_f / f %.3g, "
        "turn %.1f deg, %s, %s\n",
        sweep ? "on" : "off", i, m.images, m.cameraParams[0], fx, m.focal.relUncertainty,
        m.focal.turnDeg, right ? "right" : "wrong", flagged ? "flagged" : "not flagged");
    wrong += right ? 0 : 1;
    EXPECT_TRUE(right || flagged) << "model " << i << " is wrong and not flagged";
    // A model whose focal length is free is not trusted with the principal point either
    // (pipeline/principal_point.h: the dino's walked 165 px off when freed).
    if (m.focal.undetermined) {
      EXPECT_FALSE(m.principalPoint.refined) << "model " << i;
    }
    EXPECT_EQ(record.counts().at("model_" + std::to_string(i) + "_focal_suspect"), flagged ? 1 : 0);
    if (flagged) {
      EXPECT_NE(summary.find("suspect: sparse/" + std::to_string(i)), std::string::npos) << summary;
    }
  }
  EXPECT_EQ(record.counts().at("focal_suspect"),
            static_cast<std::int64_t>(s.focalSuspectModels.size()));
  if (!s.focalSuspectModels.empty()) {
    EXPECT_NE(summary.find("a model may be wrong"), std::string::npos) << summary;
  }
  EXPECT_EQ(record.counts().at("focal_sweep_runs"), static_cast<std::int64_t>(s.focalSweep.size()));
  return wrong;
}

TEST(Reconstruct, ANarrowLensPhotoSetIsRightOrFlagged) {
  const double fx = synth::PinholeCamera::fromHfov(320, 240, kNarrowHfovDeg).fx;
  // Without the sweep: the model started from the guess is wrong (its focal length 13% short)
  // and flagged.
  ReconstructSummary off, on;
  EXPECT_GE(narrowRingWrongModels(false, &off), 1);
  EXPECT_TRUE(off.focalSweep.empty());
  // With it (the default): the mapper again from 2, 4 and 8 x the guess, the run that explains
  // the most observations kept. Measured: right (1192 px), but by a narrow margin (731 against
  // the first run's 727 observations): asserted are the rule (right or flagged), one run kept,
  // and a focal length no further from the truth than without the sweep.
  narrowRingWrongModels(true, &on);
  ASSERT_EQ(on.focalSweep.size(), 4u);
  int chosen = 0;
  for (const FocalSweepTrial& t : on.focalSweep) {
    std::printf("  start %.0f px: %d images, %lld observations, %.4f px, %d suspect%s\n",
                t.startFocalPx, t.registered, static_cast<long long>(t.observations), t.meanErrorPx,
                t.suspect, t.chosen ? " (kept)" : "");
    chosen += t.chosen ? 1 : 0;
  }
  ASSERT_EQ(chosen, 1);
  // The kept run explains the most observations, and the summary's models are its own.
  const auto kept = std::find_if(on.focalSweep.begin(), on.focalSweep.end(),
                                 [](const FocalSweepTrial& t) { return t.chosen; });
  for (const FocalSweepTrial& t : on.focalSweep) EXPECT_LE(t.observations, kept->observations);
  int registered = 0;
  for (const ModelSummary& m : on.models) registered += m.images;
  EXPECT_EQ(registered, kept->registered);
  ASSERT_FALSE(on.models.empty());
  ASSERT_FALSE(off.models.empty());
  EXPECT_LE(std::abs(on.models[0].cameraParams[0] - fx),
            std::abs(off.models[0].cameraParams[0] - fx));
}

// A translation without rotation does not determine the focal length: f' = s f fits as well,
// with the depths and the cameras' offsets along the optical axis scaled by s
// (pipeline/focal_check.h). Forward motion and a sideways walk with a fixed view direction
// (the synth presets) are such; with an unknown camera the summary, the record's flag and the
// report say so and ask for --camera.
TEST(Reconstruct, PureTranslationWithUnknownCameraSaysTheFocalIsUndetermined) {
  for (const char* path : {"forward", "sideways"}) {
    const fs::path seq = sequence(path, 24, 4);
    const fs::path out = tempRoot() / (std::string("out_unknown_") + path);
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, quietOptions(), record);
    ASSERT_EQ(s.models.size(), 1u) << path;
    EXPECT_TRUE(s.focalUndetermined) << path;
    ASSERT_TRUE(s.models[0].focal.ran) << path;
    std::printf("  %s: sigma_f / f %.4g (delta chi2 %.3g)\n", path,
                s.models[0].focal.relUncertainty, s.models[0].focal.deltaChi2);
    EXPECT_GT(s.models[0].focal.relUncertainty, 0.05) << path;
    EXPECT_EQ(record.counts().at("focal_undetermined"), 1) << path;
    // A translation: the focal length is free in a right model, which is not suspect.
    EXPECT_LT(s.models[0].focal.turnDeg, 10) << path;
    EXPECT_FALSE(s.models[0].focal.suspect) << path;
    EXPECT_EQ(record.counts().at("focal_suspect"), 0) << path;
    const std::string summary = formatSummary(s);
    EXPECT_NE(summary.find("does not determine the focal length"), std::string::npos) << summary;
    EXPECT_NE(summary.find("--camera"), std::string::npos) << summary;
  }
}

TEST(Reconstruct, RotationThenTranslation) {
  const fs::path seq = rotationThenTranslation();
  io::RunRecord record;
  const ReconstructSummary s =
      reconstruct(seq / "rgb.txt", tempRoot() / "out_turn", quietOptions(), record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.registered, s.keyframes);
  // A sideways walk that turns toward the scene (a path past an entrance) determines the focal
  // length, whatever the first pairs' self-calibration made of it.
  std::printf("  turn then walk: sigma_f / f %.4g\n", s.models[0].focal.relUncertainty);
  EXPECT_FALSE(s.focalUndetermined);
  EXPECT_EQ(record.counts().at("focal_undetermined"), 0);
  const double fx = synth::PinholeCamera::fromHfov(320, 240, 60).fx;  // as rendered
  EXPECT_NEAR(s.models[0].cameraParams[0], fx, 0.02 * fx);
  EXPECT_LT(s.models[0].meanReprojErrorPx, 0.5);
  const Accuracy a = accuracy(tempRoot() / "out_turn" / "sparse" / "0", seq);
  EXPECT_EQ(a.evaluated, s.registered);
  EXPECT_LT(a.ateRel, 0.02);
  EXPECT_LT(a.rotDeg, 0.5);
}

// run.json's focal lengths, self-calibrated and refined, are in native pixels (COLMAP's, as the
// written camera) whatever the working width.
TEST(Reconstruct, FocalLengthsAreRecordedInNativePixels) {
  const fs::path seq = sequence("orbit", 20, 4, 640, 480);
  ReconstructOptions o = quietOptions();
  o.width = 320;  // half the native size
  io::RunRecord record;
  const ReconstructSummary s =
      reconstruct(seq / "rgb.txt", tempRoot() / "out_orbit_240", o, record);
  ASSERT_EQ(s.models.size(), 1u);
  const double fx = synth::readSequenceTruth(seq).camera.fx;
  EXPECT_EQ(record.metrics().at("refined_focal_px"), s.models[0].cameraParams[0]);
  EXPECT_NEAR(record.metrics().at("refined_focal_px"), fx, 0.02 * fx);
  // The first pairs' estimate is rougher (measured: 9% below), but far from half of it.
  EXPECT_NEAR(record.metrics().at("self_calibrated_focal_px"), fx, 0.15 * fx);
}

// The working width: automatic by the kind of input, never above native.
TEST(Reconstruct, WorkingWidthByInputKind) {
  EXPECT_EQ(workingWidth(kAutoWidth, false, 1920), kVideoWidth);
  EXPECT_EQ(workingWidth(kAutoWidth, true, 3072), kPhotoWidth);
  EXPECT_EQ(workingWidth(kAutoWidth, true, 640), 0);  // native
  EXPECT_EQ(workingWidth(kAutoWidth, false, 320), 0);
  EXPECT_EQ(workingWidth(1280, true, 3072), 1280);
  EXPECT_EQ(workingWidth(0, true, 3072), 0);
  EXPECT_EQ(workingWidth(800, false, 640), 0);
  ReconstructOptions o;
  o.width = -2;
  EXPECT_THROW(o.check(), Error);
  o.width = 32;
  EXPECT_THROW(o.check(), Error);
}

// The video sweep's options (pipeline/focal_sweep.h) out of range: one clear error naming the
// field, through the options' own check.
TEST(Reconstruct, VideoFocalSweepOptionsOutOfRangeAreClearErrors) {
  const auto message = [](const ReconstructOptions& o) -> std::string {
    try {
      o.check();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message(ReconstructOptions{}), "");
  ReconstructOptions o;
  o.focalSweep.videoFactors = {0.97, 0.0};
  EXPECT_NE(message(o).find("focal_sweep.video_factors"), std::string::npos) << message(o);
  o = ReconstructOptions{};
  o.focalSweep.videoMaxKeyframeFraction = 1.5;
  EXPECT_NE(message(o).find("focal_sweep.video_max_keyframe_fraction"), std::string::npos)
      << message(o);
  o = ReconstructOptions{};
  o.focalSweep.videoNearMost = 0;
  EXPECT_NE(message(o).find("focal_sweep.video_near_most"), std::string::npos) << message(o);
}

// A folder of photos: every photo is a keyframe (no gate: a second shot of the same view is kept,
// where a video's gate drops it) and each is matched against every earlier one (exhaustive
// pairs).
TEST(Reconstruct, PhotosAreAllKeyframesWithExhaustivePairs) {
  const fs::path seq = sequence("orbit", 16, 4);
  const fs::path photos = tempRoot() / "photos";
  fs::create_directories(photos);
  int n = 0;
  for (int i = 0; i < 16; i += 2, ++n)
    fs::copy_file(seq / "rgb" /
                      ("frame_" + std::string(6 - std::to_string(i).size(), '0') +
                       std::to_string(i) + ".png"),
                  photos / ("view_" + std::to_string(i + 10) + ".png"));
  // A second shot of one view (named to sort right after it).
  fs::copy_file(photos / "view_14.png", photos / "view_14b.png");
  ++n;
  ReconstructOptions o = quietOptions();
  // A short window, so that the video's pairs would be fewer than the exhaustive ones: at most
  // 1 + 2 (n - 2) = 15 for 9 keyframes.
  o.frontend.activeKeyframes = 2;
  o.frontend.historyKeyframes = 0;
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(photos, tempRoot() / "out_photos", o, record);
  EXPECT_EQ(s.inputKind, "photos");
  EXPECT_EQ(s.keyframes, n);
  EXPECT_EQ(s.dropped, 0);
  EXPECT_GT(record.counts().at("pairs_verified"), 1 + 2 * (n - 2));
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_GE(s.registered, n - 1);
  const synth::SequenceTruth t = synth::readSequenceTruth(seq);
  EXPECT_NEAR(record.metrics().at("refined_focal_px"), t.camera.fx, 0.03 * t.camera.fx);
  EXPECT_FALSE(s.focalUndetermined);
  // The same files as a video's frames: the gate drops the second shot.
  ReconstructOptions v = o;
  v.folder = io::FolderKind::kVideo;
  v.allFrames = true;
  io::RunRecord vr;
  const ReconstructSummary vs = reconstruct(photos, tempRoot() / "out_photos_video", v, vr);
  EXPECT_GE(vs.dropped, 1);
}

// Bad input: one clear error, and no output folder (nor a temporary one) left behind.
void expectCleanFailure(const fs::path& input, const std::string& name, const std::string& what,
                        ReconstructOptions o = quietOptions()) {
  const fs::path out = tempRoot() / ("bad_" + name);
  io::RunRecord record;
  try {
    reconstruct(input, out, o, record);
    ADD_FAILURE() << name << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << name << ": " << e.what();
  }
  EXPECT_FALSE(fs::exists(out)) << name;
  for (const auto& e : fs::directory_iterator(tempRoot()))
    EXPECT_EQ(e.path().filename().string().find(".bad_" + name), std::string::npos) << name;
}

// A folder of copies of one image (or of black images): what a static or black video gives.
fs::path folderOf(const std::string& name, const RgbImage& img, int n) {
  const fs::path dir = tempRoot() / name;
  fs::create_directories(dir);
  for (int i = 0; i < n; ++i) io::writePng(dir / ("f" + std::to_string(i) + ".png"), img);
  return dir;
}

TEST(Reconstruct, BadInputLeavesNothing) {
  const fs::path seq = sequence("orbit", 20, 4);
  // Unreadable files.
  expectCleanFailure(tempRoot() / "missing.mp4", "missing", "missing.mp4");
  {
    const fs::path junk = tempRoot() / "junk.mp4";
    std::ofstream(junk) << "this is not a video";
    expectCleanFailure(junk, "junk", "junk.mp4");
  }
  // A sequence shorter than two keyframes.
  {
    const fs::path one = tempRoot() / "one";
    fs::create_directories(one);
    fs::copy_file(seq / "rgb" / "frame_000000.png", one / "frame_000000.png");
    expectCleanFailure(one, "one", "only one keyframe");
  }
  const RgbImage frame = io::readRgb(seq / "rgb" / "frame_000000.png");
  // A static camera: keyframes every maxGapSeconds, but no baseline.
  expectCleanFailure(folderOf("static", frame, 12), "static", "no model");
  // A black video: no features.
  expectCleanFailure(folderOf("black", RgbImage(320, 240), 6), "black", "no features");
  // A folder that is not empty is not overwritten.
  {
    const fs::path out = tempRoot() / "full";
    fs::create_directories(out);
    std::ofstream(out / "keep.txt") << "mine";
    io::RunRecord record;
    EXPECT_THROW(reconstruct(seq / "rgb.txt", out, quietOptions(), record), Error);
    EXPECT_TRUE(fs::exists(out / "keep.txt"));
  }
  // Bad options.
  ReconstructOptions o = quietOptions();
  o.fps = 0;
  expectCleanFailure(seq / "rgb.txt", "fps", "fps", o);
  EXPECT_THROW(parseDevice("gpu"), Error);
}

// --klt on: the tracks drive the gate (SIFT runs only on frames that become
// keyframes or that the tracks cannot judge), add matches across keyframes, and the poses are
// no worse than --klt off on the same input (within 25% and 0.05 degrees: the two differ in
// their keyframes); with 1 and 4 threads the model is the same bit for bit.
TEST(Reconstruct, KltTracksOnOrbit) {
  const fs::path seq = sequence("orbit", 24, 8);
  ReconstructOptions o = quietOptions();  // 4 fps: 12 frames
  Accuracy off;
  {
    const fs::path out = tempRoot() / "out_klt_off";
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.siftCalls, s.frames);
    EXPECT_EQ(record.counts().at("frames_gated_by_tracks"), 0);
    off = accuracy(out / "sparse" / "0", seq);
  }
  o.klt = true;
  std::string bytes[2];
  for (int run = 0; run < 2; ++run) {
#if defined(_OPENMP)
    const int before = omp_get_max_threads();
    omp_set_num_threads(run == 0 ? 1 : 4);
#endif
    const fs::path out = tempRoot() / ("out_klt_" + std::to_string(run));
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
#if defined(_OPENMP)
    omp_set_num_threads(before);
#endif
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.registered, s.keyframes);
    EXPECT_EQ(s.siftCalls, s.keyframes + s.featureless);
    EXPECT_GT(record.counts().at("frames_gated_by_tracks"), 0);
    EXPECT_GT(s.kltMatches, 0);
    EXPECT_GT(s.kltOnlyMatches, 0);
    EXPECT_GT(record.counts().at("klt_joins"), 0);
    EXPECT_LT(s.models[0].meanReprojErrorPx, 0.5);
    const Accuracy a = accuracy(out / "sparse" / "0", seq);
    EXPECT_LT(a.ateRel, 1.25 * off.ateRel + 1e-3);
    EXPECT_LT(a.rotDeg, off.rotDeg + 0.05);
    bytes[run] = fileBytes(out / "sparse" / "0" / "points3D.bin") +
                 fileBytes(out / "sparse" / "0" / "images.bin") +
                 fileBytes(out / "sparse" / "0" / "cameras.bin");
  }
  EXPECT_FALSE(bytes[0].empty());
  EXPECT_TRUE(bytes[0] == bytes[1]) << "the model depends on the number of threads";
  // --klt gate: the tracks still choose the keyframes (SIFT only on them, every frame posed),
  // the mapper gets descriptor matches only, and the poses are no worse than --klt off's.
  {
    ReconstructOptions g = o;
    forEachReconstructField(g, [&](const FieldInfo& f, auto&& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, TextField>)
        if (f.path() == "klt") {
          value.set("gate");
          EXPECT_EQ(value.get(), "gate");
        }
    });
    ASSERT_TRUE(g.klt);
    ASSERT_FALSE(g.kltSource.matches);
    const fs::path out = tempRoot() / "out_klt_gate_only";
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, g, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_TRUE(s.kltGateOnly);
    EXPECT_EQ(s.siftCalls, s.keyframes + s.featureless);
    EXPECT_EQ(s.registered + s.localized, s.frames - s.featureless);
    EXPECT_GT(record.counts().at("frames_gated_by_tracks"), 0);
    EXPECT_GT(record.counts().at("klt_joins"), 0);
    EXPECT_EQ(s.kltMatches, 0);
    EXPECT_EQ(record.counts().at("klt_matches"), 0);
    const Accuracy a = accuracy(out / "sparse" / "0", seq);
    EXPECT_LT(a.ateRel, 1.25 * off.ateRel + 1e-3);
    EXPECT_LT(a.rotDeg, off.rotDeg + 0.05);
  }
  // The tracks' displacement gate, with its own threshold: demanding more motion of the
  // tracks keeps fewer keyframes,
  // SIFT still runs only on them, and every frame is still posed (keyframes and localised).
  int keyframes[2] = {0, 0};
  o.frontend.gate.trackGate = sfm::TrackGate::kDisplacement;
  for (int run = 0; run < 2; ++run) {
    o.frontend.gate.trackMinMotionPx = run == 0 ? 8 : 48;
    const fs::path out = tempRoot() / ("out_klt_gate" + std::to_string(run));
    io::RunRecord record;
    const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, o, record);
    ASSERT_EQ(s.models.size(), 1u);
    EXPECT_EQ(s.siftCalls, s.keyframes + s.featureless);
    EXPECT_EQ(s.registered + s.localized, s.frames - s.featureless);
    keyframes[run] = s.keyframes;
  }
  EXPECT_LT(keyframes[1], keyframes[0]);
}

TEST(Reconstruct, MergesPairsOfASecondSource) {
  std::vector<sfm::PairMatches> pairs(1);
  pairs[0].image1 = 3;
  pairs[0].image2 = 1;
  pairs[0].matches = {{10, 20}, {11, 21}};
  sfm::PairMatches extra;
  extra.image1 = 1;
  extra.image2 = 3;
  extra.matches = {{20, 10}, {22, 12}};
  sfm::PairMatches other;
  other.image1 = 0;
  other.image2 = 3;
  other.matches = {{1, 2}};
  mergePairMatches(pairs, {extra, other});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].image1, 1);
  EXPECT_EQ(pairs[0].image2, 3);
  // (20, 10) is the same match as (10, 20) of the pair (3, 1): counted once.
  EXPECT_EQ(pairs[0].matches.size(), 3u);
  // The mapper checks the source's own matches (from index 2 on) against the descriptors'.
  EXPECT_EQ(pairs[0].firstTrackMatch, 2);
  EXPECT_EQ(pairs[1].image1, 0);
  EXPECT_EQ(pairs[1].firstTrackMatch, 0);
}

}  // namespace
}  // namespace vidmap::pipeline
