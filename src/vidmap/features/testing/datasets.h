// Readers for the ground truth of the evaluation data: OpenCV's graf homography (H1to3p.xml),
// Strecha's .camera files and Middlebury's *_par.txt, and the fundamental matrix of two
// calibrated views.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <string>

namespace vidmap::features::testing {

using Mat3 = std::array<double, 9>;  // row-major

struct Camera {
  Mat3 K;                   // intrinsics
  Mat3 R;                   // world -> camera rotation
  std::array<double, 3> t;  // world -> camera translation: x_cam = R X + t
};

// The 3x3 <data> of an OpenCV FileStorage XML matrix.
Mat3 readOpenCvMatrix(const std::filesystem::path& path);

// A Strecha camera file: K, a zero line, R (camera -> world), centre C, size.
Camera readStrechaCamera(const std::filesystem::path& path);

// Middlebury multi-view parameters: image name -> camera (P = K [R | t]).
std::map<std::string, Camera> readMiddleburyCameras(const std::filesystem::path& parFile);

// The camera of an image scaled by s with pixel centres kept (x' = s (x + 0.5) - 0.5).
Camera scaleCamera(const Camera& c, double s);

// F with x_b^T F x_a = 0 for pixels x_a of view a and x_b of view b.
Mat3 fundamentalFromCameras(const Camera& a, const Camera& b);

// E and the relative pose's essential matrix in normalised coordinates (x_b^T E x_a = 0).
Mat3 essentialFromCameras(const Camera& a, const Camera& b);

}  // namespace vidmap::features::testing
