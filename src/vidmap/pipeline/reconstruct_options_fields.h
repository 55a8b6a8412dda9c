// The user-facing fields of ReconstructOptions, listed once: name, group, help and range.
// The Python binding (python/src/options.cc) maps keyword arguments and nested dicts through
// this list, the tests hold each range against the options' own check(), and new front ends
// (CLI flags, the run record) can take names and help from it instead of retyping them.
//
//   forEachReconstructField(options, [](const FieldInfo& f, auto& value) { ... });
//
// `value` is a bool, int, float or double member of the options, or a TextField for the fields
// that are parsed from text (camera, device, mvs.max_gpu_memory) or have an automatic default
// (sift_first_octave). The CLI spells the fields of group "mvs" --mvs-NAME.
#pragma once

#include <functional>
#include <limits>
#include <string>

#include "vidmap/pipeline/reconstruct.h"

namespace vidmap::pipeline {

struct FieldInfo {
  const char* group;  // "" (top level), "frontend", "mapper" or "mvs" (the dense stage)
  const char* name;   // snake_case, as the CLI's long option without dashes where there is one
  const char* help;
  double lo = -std::numeric_limits<double>::infinity();  // the range check() enforces
  double hi = std::numeric_limits<double>::infinity();
  std::string path() const { return *group ? std::string(group) + "." + name : name; }
};

// A field read and written as text; set() throws vidmap::Error on a bad value.
struct TextField {
  std::function<std::string()> get;
  std::function<void(const std::string&)> set;
};

// io::FolderKind as the CLI spells it.
inline const char* toString(io::FolderKind k) {
  return k == io::FolderKind::kVideo ? "video" : k == io::FolderKind::kPhotos ? "photos" : "auto";
}
inline io::FolderKind parseFolderKind(const std::string& s) {
  if (s == "auto") return io::FolderKind::kAuto;
  if (s == "video") return io::FolderKind::kVideo;
  if (s == "photos") return io::FolderKind::kPhotos;
  throw Error("option folder = '" + s + "' is not auto, video or photos");
}

// "on" or "off" (the CLI's spelling of the switches that name a mode).
inline bool parseOnOff(const char* name, const std::string& s) {
  if (s == "on") return true;
  if (s == "off") return false;
  throw Error(std::string("option ") + name + " = '" + s + "' is not on or off");
}

template <class Visitor>
void forEachReconstructField(ReconstructOptions& o, Visitor&& v) {
  // Top level.
  v(FieldInfo{"", "fps", "Frames per second sampled from a video or list", 1e-3, 120}, o.fps);
  v(FieldInfo{"", "all_frames", "Use every frame of a video or list", 0, 1}, o.allFrames);
  v(FieldInfo{"", "width",
              "Working width in pixels (-1: automatic, 640 for videos and 1280 for photos; 0: "
              "native; else at least 64; never above native)",
              -1, 16384},
    o.width);
  v(FieldInfo{"", "camera",
              "Camera model, with parameters when known, in COLMAP's order and pixel convention "
              "at the native size: SIMPLE_RADIAL (unknown, refined), 'PINHOLE fx,fy,cx,cy', "
              "'OPENCV fx,fy,cx,cy,k1,k2,p1,p2', 'FULL_OPENCV ...'. A model without parameters "
              "(SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL) is unknown and refined. Checked: "
              "focal 0.05-100 x the larger side, principal point at most a quarter of the image "
              "outside it, |k| <= 100, |p| <= 1"},
    TextField{[&o] { return o.camera.toString(); },
              [&o](const std::string& s) { o.camera = sfm::CameraSpec::parse(s); }});
  v(FieldInfo{"", "device", "auto, cpu or cuda"},
    TextField{[&o] { return std::string(toString(o.device)); },
              [&o](const std::string& s) { o.device = parseDevice(s); }});
  v(FieldInfo{"", "overwrite",
              "Replace an earlier vidmap output in OUTDIR (refused when OUTDIR holds anything else "
              "or the input)",
              0, 1},
    o.overwrite);
  v(FieldInfo{"", "strict",
              "Damaged input (a video that ends early or has damaged frames, skipped frames) is "
              "an error, and nothing is written",
              0, 1},
    o.strict);
  v(FieldInfo{"", "skip_bad_frames",
              "Folders and lists: skip (and report) frames that cannot be read or differ in size, "
              "instead of stopping before the work starts",
              0, 1},
    o.skipBadFrames);
  v(FieldInfo{"", "klt",
              "on: KLT tracks between keyframes give matches across several keyframes and drive "
              "the keyframe gate (SIFT only on keyframes); gate: the tracks drive the gate, the "
              "matches are descriptors only; off: descriptors only; auto: gate for a video or "
              "list sampled at 10 fps or more (--all-frames), else off"},
    TextField{[&o] {
                return std::string(!o.klt && o.kltAuto ? "auto"
                                                       : kltModeName(o.klt, o.kltSource.matches));
              },
              [&o](const std::string& s) {
                if (s != "auto" && s != "off" && s != "gate" && s != "on")
                  throw Error("option klt = '" + s + "' is not auto, off, gate or on");
                o.kltAuto = s == "auto";
                o.klt = s == "gate" || s == "on";
                if (o.klt) o.kltSource.matches = s == "on";
              }});
  v(FieldInfo{"", "klt_fill_in",
              "on: Shi-Tomasi points beside the SIFT keypoints seed tracks; off: SIFT-seeded "
              "tracks only"},
    TextField{[&o] { return std::string(o.kltSource.fillIn ? "on" : "off"); },
              [&o](const std::string& s) { o.kltSource.fillIn = parseOnOff("klt_fill_in", s); }});
  v(FieldInfo{"", "klt_capacity", "Most alive KLT tracks (--klt on)", 16, klt::kMaxCapacity},
    o.kltSource.capacity);
  v(FieldInfo{"", "klt_levels",
              "Pyramid levels of the KLT tracker (0: by width, 5 at 640 px; else 1-8)", 0,
              klt::kMaxLevels},
    o.kltSource.levels);
  v(FieldInfo{"", "klt_fb_threshold_px",
              "Forward-backward bound of the KLT tracker (px at 640 px; 0: the design's 0.5)", 0,
              1000},
    o.kltSource.fbThresholdPx);
  v(FieldInfo{"", "klt_join_radius_px",
              "A KLT track joins the nearest SIFT keypoint of a keyframe within this distance (px "
              "at 640 px)",
              0.01, 100},
    o.kltSource.joinRadiusPx);
  v(FieldInfo{"", "klt_seed_quality",
              "A SIFT keypoint seeds a KLT track when its lambda_min is at least this fraction "
              "of the frame's largest (0: any that passes the low-structure test)",
              0, 1},
    o.kltSource.seedQuality);
  v(FieldInfo{"", "klt_outlier_lag",
              "Keyframes before the outliers of a keyframe's verification end their KLT tracks "
              "(0: the tracker waits for each verification; 1: the front end works on the next "
              "keyframe meanwhile; another model)",
              0, 64},
    o.kltSource.outlierLag);
  v(FieldInfo{"", "folder",
              "An image folder is read as the frames of one video (video: sampled at --fps like a "
              "video), as photos (photos: every image), or by its names and sizes (auto: numbered "
              "names, one size, at least 30 images)"},
    TextField{[&o] { return std::string(toString(o.folder)); },
              [&o](const std::string& s) { o.folder = parseFolderKind(s); }});
  v(FieldInfo{"", "frame_rate",
              "Frames per second of a folder of video frames (their names carry no time), (0, "
              "1000]"},
    o.folderFrameRate);
  v(FieldInfo{"", "pipeline_depth",
              "Keyframes the front end (decode, SIFT, matching, KLT) may run ahead of the mapper "
              "on a thread of its own; 0: one thread (the model is the same); -1: 2 when SIFT "
              "runs on CUDA or OpenMP has 2 threads or more, else 0",
              -1, 64},
    o.pipelineDepth);
  v(FieldInfo{"", "pipeline_side_threads",
              "Threads of the pipeline's side that waits less (the front end or the mapper; the "
              "other gets the rest and one more); 0: a quarter of the threads, at least one",
              0, 1024},
    o.pipelineSideThreads);
  v(FieldInfo{"", "verify_ahead",
              "Pipelined: the front end verifies the pairs of queued keyframes while it waits for "
              "the mapper, which keeps a pair's geometry when its inputs are the same (the same "
              "model either way)",
              0, 1},
    o.verifyAhead);
  v(FieldInfo{"", "decode_ahead",
              "Frames decoded ahead of the front end on a thread of their own (the same frames: "
              "the same model); 0: decoded on the front end's thread; -1: 4",
              -1, 64},
    o.decodeAhead);
  v(FieldInfo{"", "profile_kernels",
              "Time each CUDA kernel for the run record (off: host times only)", 0, 1},
    o.profileKernels);
  v(FieldInfo{"", "check_focal",
              "An unknown camera: measure whether each model determines the focal length (the "
              "bundle adjustment's cost profiled over it; a warning when it does not)",
              0, 1},
    o.checkFocal);
  v(FieldInfo{"", "rerun_focal_change",
              "A video, camera unknown and self-calibrated: when the largest model's focal length "
              "ends further than this fraction from the self-calibrated one, reconstruct again "
              "from that model's camera (0: never)",
              0, 100},
    o.rerunFocalChange);
  v(FieldInfo{"", "rerun_guess_focal_change",
              "The same for a camera whose self-calibration was refused (started from 1.2 x the "
              "width) (0: never)",
              0, 100},
    o.rerunGuessFocalChange);
  v(FieldInfo{"", "rerun_reuse_mib",
              "A second pass (rerun_focal_change) reuses the first's keyframes, SIFT features and "
              "plain matches, kept in up to this many MiB (beyond: decoded and extracted again; "
              "0: never kept)",
              0, 1 << 20},
    o.rerunReuseMiB);
  v(FieldInfo{"", "focal_sweep",
              "Photos whose models are suspect (focal length undetermined although the views "
              "turn) or none: map again from 2, 4 and 8 x the starting focal length, keep the run "
              "explaining the most observations; a video under the KLT gate (self-calibrated, at "
              "most half the frames keyframes): again from 0.97 and 1.03 x, keep the lowest error "
              "of the runs explaining 90% of the most observations",
              0, 1},
    o.focalSweep.enabled);
  v(FieldInfo{"", "principal_point",
              "Photos, unknown camera: refine the principal point in each model whose focal length "
              "is determined and which fixes the point (a likelihood-ratio test; else it stays at "
              "the image centre)",
              0, 1},
    o.principalPoint.enabled);
  v(FieldInfo{"", "progress", "A progress bar when stderr is a terminal", 0, 1}, o.progress);
  v(FieldInfo{"", "groundtruth",
              "TUM trajectory (camera to world) drawn over the model in report.html"},
    TextField{[&o] { return o.groundTruth.string(); },
              [&o](const std::string& s) { o.groundTruth = s; }});

  // Front end.
  v(FieldInfo{"frontend", "max_features",
              "SIFT features per frame (0: no cap, every feature found)", 0, 1 << 20},
    o.frontend.sift.maxFeatures);
  v(FieldInfo{"frontend", "sift_first_octave",
              "-1 doubles the image before the first octave, 0 does not; 'auto': -1 up to 1000 px "
              "of working width (photos: 1280), else 0 (videos and lists at 10 fps or more: 0 "
              "from 640 px)",
              -1, 0},
    TextField{[&o] {
                return o.autoFirstOctave ? std::string("auto")
                                         : std::to_string(o.frontend.sift.firstOctave);
              },
              [&o](const std::string& s) {
                if (s == "auto") {
                  o.autoFirstOctave = true;
                  return;
                }
                if (s != "-1" && s != "0")
                  throw Error("option frontend.sift_first_octave = '" + s +
                              "' is not -1, 0 or auto");
                o.autoFirstOctave = false;
                o.frontend.sift.firstOctave = std::stoi(s);
              }});
  v(FieldInfo{"frontend", "min_motion_px",
              "Keyframe gate: median motion (px at 640 px) below which a frame is dropped", 0,
              10000},
    o.frontend.gate.minMotionPx);
  v(FieldInfo{"frontend", "klt_min_motion_px",
              "Keyframe gate on KLT tracks (--klt on): median track motion (px at 640 px) below "
              "which a frame is dropped",
              0, 10000},
    o.frontend.gate.trackMinMotionPx);
  v(FieldInfo{"frontend", "klt_gate",
              "Keyframe gate on KLT tracks (--klt on): parallax (the tracks' median residual "
              "after their best rotation, the tracks thinning, or a turn) or displacement (their "
              "median motion)"},
    TextField{[&o] {
                return std::string(o.frontend.gate.trackGate == sfm::TrackGate::kParallax
                                       ? "parallax"
                                       : "displacement");
              },
              [&o](const std::string& s) {
                if (s == "parallax")
                  o.frontend.gate.trackGate = sfm::TrackGate::kParallax;
                else if (s == "displacement")
                  o.frontend.gate.trackGate = sfm::TrackGate::kDisplacement;
                else
                  throw Error("option klt_gate = '" + s + "' must be parallax or displacement");
              }});
  v(FieldInfo{"frontend", "klt_min_parallax_px",
              "Keyframe gate on KLT tracks by parallax: median residual after the tracks' "
              "best rotation (px at 640 px) that makes a keyframe",
              0, 10000},
    o.frontend.gate.minParallaxPx);
  v(FieldInfo{"frontend", "klt_min_tracked_fraction",
              "Keyframe gate on KLT tracks by parallax: a keyframe when fewer than this fraction "
              "of the last keyframe's tracks are alive",
              0, 1},
    o.frontend.gate.minTrackedFraction);
  v(FieldInfo{"frontend", "klt_max_turn_px",
              "Keyframe gate on KLT tracks by parallax: a keyframe when the tracks' median motion "
              "since the last keyframe reaches this (px at 640 px), so that a turn keeps the "
              "active keyframes overlapping; 0: off",
              0, 10000},
    o.frontend.gate.maxTurnPx);
  v(FieldInfo{"frontend", "max_gap_s", "Keyframe gate: a keyframe at least this often (seconds)", 0,
              1e6},
    o.frontend.gate.maxGapSeconds);
  v(FieldInfo{"frontend", "active_keyframes", "Earlier keyframes each frame is matched against", 1,
              1000},
    o.frontend.activeKeyframes);
  v(FieldInfo{"frontend", "history_keyframes", "Older keyframes reachable at doubling distances", 0,
              100000},
    o.frontend.historyKeyframes);
  v(FieldInfo{"frontend", "min_gate_matches",
              "Matches with the last keyframe below which the motion counts as unknown", 1, 1e6},
    o.frontend.gate.minMatches);
  v(FieldInfo{"frontend", "min_features", "Frames with fewer features are skipped", 8, 1e6},
    o.frontend.minFeatures);
  v(FieldInfo{"frontend", "guided", "Guided (epipolar) matching after plain matching", 0, 1},
    o.frontend.guided);
  v(FieldInfo{"frontend", "guide_band_px", "Half width of the epipolar band (px at 640 px)", 0.1,
              1000},
    o.frontend.guideBandPx);
  v(FieldInfo{"frontend", "guide_iterations", "RANSAC hypotheses of the guide's essential matrix",
              1, 100000},
    o.frontend.guideIterations);
  v(FieldInfo{"frontend", "guide_features",
              "Video: plain matches for the guides of the older pairs from this many strongest "
              "features of each side (0: all)",
              0, 1 << 20},
    o.frontend.guideFeatures);
  v(FieldInfo{"frontend", "min_pair_matches", "A pair with fewer matches is not handed on", 5, 1e6},
    o.frontend.minPairMatches);
  v(FieldInfo{"frontend", "exhaustive_photos",
              "Photos: each of the first this many is matched against every earlier one (later "
              "ones as a video's keyframes)",
              0, 100000},
    o.frontend.exhaustivePhotos);
  v(FieldInfo{"frontend", "photo_min_features",
              "Photos with fewer SIFT features (at 640 x 480, scaled by area) are extracted again "
              "at a lower threshold (0: off)",
              0, 1e6},
    o.frontend.photoMinFeatures);
  v(FieldInfo{"frontend", "photo_threshold_steps",
              "Halvings of the SIFT peak threshold for a feature-poor photo", 0, 8},
    o.frontend.photoThresholdSteps);

  // Mapper.
  sfm::MapperOptions& m = o.mapper;
  v(FieldInfo{"mapper", "min_pair_inliers", "A verified pair with fewer inliers is dropped", 5,
              1e6},
    m.minPairInliers);
  v(FieldInfo{"mapper", "video_verification",
              "Verify a pair from the guide's essential matrix, F only when E fails once the focal "
              "is known (off: E, F and H searched from scratch)",
              0, 1},
    m.videoVerification);
  v(FieldInfo{"mapper", "self_calibrate_focal",
              "Self-calibrate an unknown focal length from the first pairs", 0, 1},
    m.selfCalibrateFocal);
  v(FieldInfo{"mapper", "init_min_points", "Points the initial pair must triangulate", 5, 1e6},
    m.initMinPoints);
  v(FieldInfo{"mapper", "init_min_angle", "Median triangulation angle of the initial pair (deg)", 0,
              90},
    m.initMinAngleDeg);
  v(FieldInfo{"mapper", "init_max_pending_keyframes",
              "Sampled frames (from a segment's first keyframe) waited for before the relaxed "
              "initialisation",
              2, 1e6},
    m.initMaxPendingKeyframes);
  v(FieldInfo{"mapper", "init_relaxed_angle",
              "Median triangulation angle an initial pair needs after waiting (deg)", 0, 90},
    m.initRelaxedMinAngleDeg);
  v(FieldInfo{"mapper", "init_last_resort_angle",
              "Median triangulation angle an initial pair needs at the input's end when no model "
              "was started (deg; 0: no last try)",
              0, 90},
    m.initLastResortMinAngleDeg);
  v(FieldInfo{"mapper", "pnp_max_error", "PnP inlier threshold (working pixels)", 0.1, 1000},
    m.pnpMaxErrorPx);
  v(FieldInfo{"mapper", "pnp_min_inliers", "PnP inliers to register", 6, 1e6}, m.pnpMinInliers);
  v(FieldInfo{"mapper", "pnp_min_inlier_ratio",
              "PnP inliers to register, over the keypoints with 2D-3D correspondences", 0, 1},
    m.pnpMinInlierRatio);
  v(FieldInfo{"mapper", "max_registration_trials",
              "Tries of a refused keyframe after later registrations", 1, 1e6},
    m.maxRegistrationTrials);
  v(FieldInfo{"mapper", "max_jump_over_depth",
              "Largest camera jump to the nearest keyframe, in median depths", 0, 1e9},
    m.maxJumpOverDepth);
  v(FieldInfo{"mapper", "max_reproj_error",
              "Observations with a larger error are filtered (working pixels)", 0.1, 1000},
    m.maxReprojErrorPx);
  v(FieldInfo{"mapper", "min_tri_angle", "Smallest triangulation angle of a kept point (deg)", 0,
              90},
    m.minTriAngleDeg);
  v(FieldInfo{"mapper", "min_tri_depth_fraction",
              "New points nearer than this fraction of the image's median depth are refused (0: "
              "none)",
              0, 1},
    m.minTriDepthFraction);
  v(FieldInfo{"mapper", "local_ba_images", "Images in a local bundle adjustment", 2, 1000},
    m.localBaImages);
  v(FieldInfo{"mapper", "local_ba_iterations", "Iterations of a local bundle adjustment", 0, 1000},
    m.localBaIterations);
  v(FieldInfo{"mapper", "local_ba_function_tolerance",
              "A local bundle adjustment stops at this relative cost change", 0, 1},
    m.localBaFunctionTolerance);
  v(FieldInfo{"mapper", "local_ba_max_points",
              "Points a local BA refines at most, spread over each window image, the new "
              "keyframe's first (0: all)",
              0, 1 << 30},
    m.localBaMaxPoints);
  v(FieldInfo{"mapper", "local_ba_max_constant_images",
              "Outside images whose observations hold a local BA (0: all)", 0, 1 << 30},
    m.localBaMaxConstantImages);
  v(FieldInfo{"mapper", "ba_cuda_min_observations",
              "With --device cuda, bundle adjustments of fewer observations run on the CPU", 0,
              1 << 30},
    m.baCudaMinObservations);
  v(FieldInfo{"mapper", "ba_cuda_one_block_cholesky",
              "With --device cuda, a bundle adjustment's reduced system of at most this many "
              "columns is factored in one kernel instead of cuSOLVER (0: cuSOLVER; another model)",
              0, ba::Options::kOneBlockCholeskyColumnsLimit},
    m.baCudaOneBlockCholesky);
  v(FieldInfo{"mapper", "ba_min_parallax",
              "Bundle adjustments hold the points their observations see with less parallax "
              "than this (deg; 0: none held)",
              0, 90},
    m.baMinParallaxDeg);
  v(FieldInfo{"mapper", "global_ba_iterations", "Iterations of a global bundle adjustment", 0,
              1000},
    m.globalBaIterations);
  v(FieldInfo{"mapper", "global_ba_growing_tolerance",
              "A global bundle adjustment made while the model grows stops at this relative "
              "cost change (the final ones at 1e-6)",
              0, 1},
    m.globalBaGrowingTolerance);
  v(FieldInfo{"mapper", "global_ba_growth",
              "A global bundle adjustment when the model grew by this factor", 1, 100},
    m.globalBaGrowth);
  v(FieldInfo{"mapper", "global_ba_error_budget",
              "At a growth milestone, a global bundle adjustment only when the mean reprojection "
              "error exceeds this factor times its value after the last one",
              1, 100},
    m.globalBaErrorBudget);
  v(FieldInfo{"mapper", "global_ba_max_growth",
              "A global bundle adjustment at the latest when the model grew by this factor "
              "since the last one",
              1, 100},
    m.globalBaMaxGrowth);
  v(FieldInfo{"mapper", "global_ba_budget_min_images",
              "Below this many images every growth milestone runs a global bundle adjustment", 0,
              1e6},
    m.globalBaBudgetMinImages);
  v(FieldInfo{"mapper", "refine_intrinsics_min_images",
              "An unknown camera is refined from this model size on", 2, 1e6},
    m.refineIntrinsicsMinImages);
  v(FieldInfo{"mapper", "max_consecutive_failures",
              "Keyframes in a row not registered before a new model starts", 1, 1e6},
    m.maxConsecutiveFailures);
  v(FieldInfo{"mapper", "min_model_images", "Smaller finished models are dropped", 2, 1e6},
    m.minModelImages);
  v(FieldInfo{"mapper", "merge_models", "Merge finished models the tracks link", 0, 1},
    m.mergeModels);
  v(FieldInfo{"mapper", "adjust_localized",
              "A last global bundle adjustment with the frames the keyframe gate dropped", 0, 1},
    m.adjustLocalized);
  v(FieldInfo{"mapper", "merge_min_common_points",
              "3D-3D correspondences a merge by alignment needs", 3, 1e6},
    m.mergeMinCommonPoints);
  v(FieldInfo{"mapper", "verbose", "Log the mapper's events on stderr", 0, 1}, m.verbose);

  // Dense stage (pipeline/dense_stage.h), run with `dense`.
  v(FieldInfo{"", "dense",
              "Dense stereo after the sparse model: the largest model's depth maps and fused "
              "cloud in OUTDIR/dense (PatchMatch, on --device)",
              0, 1},
    o.dense);
  DenseOptions& d = o.mvs;
  v(FieldInfo{"mvs", "max_image_size",
              "Dense: longer image side in pixels (0: the working frames' size)", 0, 1 << 16},
    d.workspace.maxImageSize);
  v(FieldInfo{"mvs", "sources", "Dense: source views per reference", 1, 12},
    d.workspace.maxSources);
  v(FieldInfo{"mvs", "min_triangulation_angle",
              "Dense: a source shares sparse points at this triangulation angle (deg)", 0, 60},
    d.workspace.minTriangulationAngleDeg);
  v(FieldInfo{"mvs", "photometric_iterations", "Dense: PatchMatch iterations, photometric pass", 1,
              100},
    d.patchMatch.photometricIterations);
  v(FieldInfo{"mvs", "geometric_iterations",
              "Dense: PatchMatch iterations, geometric-consistency pass (0: none)", 0, 100},
    d.patchMatch.geometricIterations);
  v(FieldInfo{"mvs", "top_k", "Dense: best sources averaged per hypothesis", 1, mvs::kMaxTopK},
    d.patchMatch.topK);
  v(FieldInfo{"mvs", "multi_resolution",
              "Dense: the photometric pass first at half resolution, then fine_iterations at full",
              0, 1},
    d.patchMatch.multiResolution);
  v(FieldInfo{"mvs", "fine_iterations",
              "Dense, with multi_resolution: photometric iterations at full resolution", 1, 100},
    d.patchMatch.fineIterations);
  v(FieldInfo{"mvs", "max_cost", "Dense: depths of a higher matching cost are dropped", 0, 2},
    d.patchMatch.maxCost);
  v(FieldInfo{"mvs", "max_gpu_memory",
              "Dense: device memory budget, e.g. 4G or 512M (0: 80 percent of the device)"},
    TextField{[&d] { return formatByteSize(d.patchMatch.maxGpuMemory); },
              [&d](const std::string& s) {
                d.patchMatch.maxGpuMemory = parseByteSize(s, "option mvs.max_gpu_memory");
              }});
  v(FieldInfo{"mvs", "fusion_min_pixels", "Dense fusion: pixels per point", 1, 1000},
    d.fusion.minPixels);
  v(FieldInfo{"mvs", "fusion_max_depth_error", "Dense fusion: relative depth difference", 0, 1},
    d.fusion.maxDepthError);
  v(FieldInfo{"mvs", "fusion_max_reproj_error", "Dense fusion: reprojection error (px)", 0, 1000},
    d.fusion.maxReprojectionError);
  v(FieldInfo{"mvs", "fusion_max_normal_error", "Dense fusion: normal angle (deg)", 0, 180},
    d.fusion.maxNormalErrorDeg);
  v(FieldInfo{"mvs", "depth_maps", "Dense: write the depth and normal maps beside fused.ply", 0, 1},
    d.writeMaps);
}

}  // namespace vidmap::pipeline
