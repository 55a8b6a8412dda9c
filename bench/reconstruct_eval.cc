// Accuracy of reconstructions against ground truth, for vidmap's and COLMAP's models alike.
//
//   reconstruct_eval --model OUT/sparse --list rgb.txt --groundtruth groundtruth.txt
//   reconstruct_eval --model OUT/sparse --strecha fountain-P11/gt_dense_cameras
//   reconstruct_eval --model OUT/sparse --middlebury templeSparseRing/templeSR_par.txt
//   ... --common-with OTHER/sparse   (only the images the other reconstruction also holds)
//   reconstruct_eval --trajectory OUT/sparse/0/trajectory.txt --groundtruth groundtruth.txt
//
// --model is a model folder (cameras/images/points3D, .bin or .txt) or a folder of them
// (sparse/0, sparse/1, ...). For each model: images, points, and after a Sim(3) alignment of
// the camera centres to the truth (Umeyama) the ATE RMSE and the rotation error. TUM truth is
// associated by time (the image list gives each name its timestamp); Strecha truth by name
// (<image>.camera: K, 3 zeros, R camera-to-world, C, w h); Middlebury truth by name (*_par.txt:
// a count, then per line "name k11..k33 r11..r33 t1 t2 t3" with P = K [R | t], R world to
// camera). With named truth each model also gets `centre_error_rel_extent` (the ATE RMSE over
// the largest distance between two true centres) and `rel_rot_max_deg` (the worst, over all
// pairs of images, angle between the estimated and the true relative rotation; and
// `rel_rot_mean_deg`, its mean over the pairs). Prints one
// JSON object.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/sfm/model_trajectory.h"
#include "vidmap/sfm/trajectory_eval.h"

namespace fs = std::filesystem;
using namespace vidmap;

namespace {

bool isModel(const fs::path& p) {
  return fs::exists(p / "images.bin") || fs::exists(p / "images.txt");
}

std::map<std::string, sfm::StampedPose> readStrecha(const fs::path& dir) {
  std::map<std::string, sfm::StampedPose> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".camera") continue;
    std::ifstream in(e.path());
    double v[3 * 3 + 3 + 3 * 3 + 3];
    for (double& x : v)
      if (!(in >> x)) throw Error("truncated " + e.path().string());
    Eigen::Matrix3d R;
    R << v[12], v[13], v[14], v[15], v[16], v[17], v[18], v[19], v[20];
    sfm::StampedPose p;
    p.q_wc = Eigen::Quaterniond(R).normalized();
    p.c = {v[21], v[22], v[23]};
    out[name.substr(0, name.size() - 7)] = p;  // "0000.jpg"
  }
  return out;
}

// Middlebury multi-view *_par.txt: "N", then N lines "name k11..k33 r11..r33 t1 t2 t3" with
// P = K [R | t] (R, t world to camera).
std::map<std::string, sfm::StampedPose> readMiddlebury(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot read " + file.string());
  int n = 0;
  if (!(in >> n) || n < 1) throw Error(file.string() + ": no view count on the first line");
  std::map<std::string, sfm::StampedPose> out;
  for (int i = 0; i < n; ++i) {
    std::string name;
    double v[9 + 9 + 3];
    in >> name;
    for (double& x : v)
      if (!(in >> x)) throw Error(file.string() + ": truncated at view " + std::to_string(i + 1));
    Eigen::Matrix3d R;
    R << v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17];
    const Eigen::Vector3d t(v[18], v[19], v[20]);
    sfm::StampedPose p;
    p.q_wc = Eigen::Quaterniond(R.transpose()).normalized();
    p.c = -R.transpose() * t;
    out[name] = p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path model, list, gt, strecha, middlebury, common, trajectory;
  double maxDt = 0.02, timeOffset = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model")
      model = argv[i + 1];
    else if (a == "--list")
      list = argv[i + 1];
    else if (a == "--groundtruth")
      gt = argv[i + 1];
    else if (a == "--strecha")
      strecha = argv[i + 1];
    else if (a == "--middlebury")
      middlebury = argv[i + 1];
    else if (a == "--max-dt")
      maxDt = std::stod(argv[i + 1]);
    else if (a == "--trajectory")
      trajectory = argv[i + 1];
    else if (a == "--common-with")
      common = argv[i + 1];
    else if (a == "--time-offset")
      timeOffset = std::stod(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!trajectory.empty() && !gt.empty()) {
    // A TUM trajectory (vidmap's sparse/N/trajectory.txt) against the truth.
    try {
      const auto pairs =
          sfm::associate(sfm::readTumTrajectory(trajectory), sfm::readTumTrajectory(gt), maxDt);
      const sfm::TrajectoryError e = sfm::evaluateTrajectory(pairs);
      std::printf(
          "{\"trajectory\": \"%s\", \"evaluated\": %d, \"ate_rmse\": %.6f, "
          "\"rot_rmse_deg\": %.4f, \"scale\": %.6f}\n",
          trajectory.string().c_str(), e.pairs, e.ate_rmse, e.rot_rmse_deg, e.alignment.s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "reconstruct_eval: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  if (model.empty() || (strecha.empty() && middlebury.empty() && (list.empty() || gt.empty()))) {
    std::fprintf(stderr,
                 "usage: reconstruct_eval --model DIR (--list rgb.txt --groundtruth gt.txt | "
                 "--strecha CAMERA_DIR | --middlebury PAR_FILE) [--max-dt s]\n");
    return 2;
  }
  try {
    auto modelsIn = [](const fs::path& dir) {
      std::vector<fs::path> out;
      if (isModel(dir)) {
        out.push_back(dir);
      } else if (fs::is_directory(dir)) {
        for (const auto& e : fs::directory_iterator(dir))
          if (isModel(e.path())) out.push_back(e.path());
        std::sort(out.begin(), out.end());
      }
      return out;
    };
    const std::vector<fs::path> models = modelsIn(model);
    // --common-with: evaluate only the images (by file name) that another model set holds.
    std::set<std::string> keep;
    for (const fs::path& m : modelsIn(common))
      for (const auto& [id, im] : io::readColmapModel(m).images)
        keep.insert(fs::path(im.name).filename().string());
    std::map<std::string, double> times;
    std::vector<sfm::StampedPose> truth;
    std::map<std::string, sfm::StampedPose> strechaTruth;
    const bool named = !strecha.empty() || !middlebury.empty();
    if (!strecha.empty())
      strechaTruth = readStrecha(strecha);
    else if (!middlebury.empty())
      strechaTruth = readMiddlebury(middlebury);
    if (!named) {
      times = sfm::readImageListTimes(list);
      truth = sfm::readTumTrajectory(gt);
    }
    std::printf("{\"models\": [");
    int totalImages = 0;
    for (size_t m = 0; m < models.size(); ++m) {
      io::ColmapModel cm = io::readColmapModel(models[m]);
      const size_t allImages = cm.images.size();
      if (!common.empty())
        for (auto it = cm.images.begin(); it != cm.images.end();)
          it = keep.count(fs::path(it->second.name).filename().string()) ? std::next(it)
                                                                         : cm.images.erase(it);
      std::vector<sfm::PosePair> pairs;
      if (!named) {
        auto est = sfm::modelTrajectory(cm, times);
        for (auto& p : est) p.t += timeOffset;
        pairs = sfm::associate(est, truth, maxDt);
      } else {
        for (const auto& [id, im] : cm.images) {
          auto it = strechaTruth.find(fs::path(im.name).filename().string());
          if (it == strechaTruth.end()) continue;
          const Eigen::Quaterniond q_cw(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
          sfm::PosePair pp;
          pp.est.q_wc = q_cw.normalized().conjugate();
          pp.est.c = -(pp.est.q_wc * Eigen::Vector3d(im.tvec[0], im.tvec[1], im.tvec[2]));
          pp.gt = it->second;
          pairs.push_back(pp);
        }
      }
      totalImages += static_cast<int>(allImages);
      std::printf("%s\n  {\"path\": \"%s\", \"images\": %zu, \"points\": %zu, \"evaluated\": %zu",
                  m ? "," : "", models[m].string().c_str(), allImages, cm.points3d.size(),
                  pairs.size());
      if (pairs.size() >= 3) {
        // Gauge-free errors under sfm::alignByOrientations: the rotation that best maps the
        // estimate's orientations onto the truth's, then scale and offset of the centres by
        // least squares (an ATE that stays defined where Umeyama's is not: straight paths).
        // The spread of the true centres (the ATE of a trajectory that stands still) gives scale.
        const sfm::Sim3 oa = sfm::alignByOrientations(pairs);
        Eigen::Vector3d mean = Eigen::Vector3d::Zero();
        for (const auto& pp : pairs) mean += pp.gt.c;
        mean /= static_cast<double>(pairs.size());
        double rs = 0, spread = 0, ateOa = 0;
        for (const auto& pp : pairs) {
          const Eigen::Matrix3d e = oa.R * pp.est.q_wc.toRotationMatrix();
          const double c = std::clamp(
              0.5 * ((e.transpose() * pp.gt.q_wc.toRotationMatrix()).trace() - 1.0), -1.0, 1.0);
          rs += std::pow(std::acos(c) * 180 / M_PI, 2);
          spread += (pp.gt.c - mean).squaredNorm();
          ateOa += (oa.apply(pp.est.c) - pp.gt.c).squaredNorm();
        }
        // Relative rotation between consecutive images: the angle of the estimate's against the
        // truth's (independent of any alignment of the world or of the camera frame).
        double rpe = 0;
        for (size_t i = 0; i + 1 < pairs.size(); ++i) {
          const double ae = pairs[i].est.q_wc.angularDistance(pairs[i + 1].est.q_wc);
          const double ag = pairs[i].gt.q_wc.angularDistance(pairs[i + 1].gt.q_wc);
          rpe += std::abs(ae - ag) * 180 / M_PI;
        }
        std::printf(
            ", \"rot_aligned_rmse_deg\": %.4f, \"rpe_rot_angle_mean_deg\": %.4f, "
            "\"truth_spread_rms\": %.6f, \"ate_rot_aligned_rmse\": %.6f",
            std::sqrt(rs / pairs.size()), pairs.size() > 1 ? rpe / (pairs.size() - 1) : 0.0,
            std::sqrt(spread / pairs.size()), std::sqrt(ateOa / pairs.size()));
        if (named) {
          // Every pair of images: the angle between the estimated and the true relative rotation.
          double worst = 0, sum = 0, extent = 0;
          for (size_t i = 0; i < pairs.size(); ++i)
            for (size_t j = i + 1; j < pairs.size(); ++j) {
              const Eigen::Quaterniond re = pairs[i].est.q_wc.conjugate() * pairs[j].est.q_wc;
              const Eigen::Quaterniond rg = pairs[i].gt.q_wc.conjugate() * pairs[j].gt.q_wc;
              const double a = re.angularDistance(rg) * 180 / M_PI;
              worst = std::max(worst, a);
              sum += a;
              extent = std::max(extent, (pairs[i].gt.c - pairs[j].gt.c).norm());
            }
          const double numPairs = 0.5 * static_cast<double>(pairs.size() * (pairs.size() - 1));
          std::printf(
              ", \"rel_rot_max_deg\": %.4f, \"rel_rot_mean_deg\": %.4f, \"truth_extent\": %.6f",
              worst, sum / numPairs, extent);
          try {
            const sfm::TrajectoryError e = sfm::evaluateTrajectory(pairs);
            std::printf(", \"centre_error_rel_extent\": %.6f", e.ate_rmse / extent);
          } catch (const Error&) {
          }
        }
        try {
          const sfm::TrajectoryError e = sfm::evaluateTrajectory(pairs);
          std::printf(
              ", \"ate_rmse\": %.6f, \"ate_median\": %.6f, \"ate_max\": %.6f, "
              "\"rot_rmse_deg\": %.4f, \"rot_median_deg\": %.4f, \"scale\": %.6f",
              e.ate_rmse, e.ate_median, e.ate_max, e.rot_rmse_deg, e.rot_median_deg, e.alignment.s);
        } catch (const Error& err) {
          std::printf(", \"alignment_error\": \"%s\"", err.what());
        }
      }
      std::printf("}");
    }
    std::printf("\n], \"num_models\": %zu, \"registered_images\": %d}\n", models.size(),
                totalImages);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reconstruct_eval: %s\n", e.what());
    return 1;
  }
  return 0;
}
