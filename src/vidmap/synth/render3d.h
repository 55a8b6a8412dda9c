// Renders a synthetic 3D scene through a pinhole camera by ray casting every pixel (no
// rasteriser), anti-aliased (render_kernels.h), on all CPU threads. The pixel conventions
// are those of camera.h and render_kernels.h: the centre of pixel (x, y) is at (x, y).
#pragma once

#include <cstdint>

#include "vidmap/core/image.h"
#include "vidmap/synth/camera.h"
#include "vidmap/synth/render_kernels.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {

struct RenderOptions {
  // true: textures prefiltered by the pixel footprint, 4 rotated-grid rays on silhouettes
  // (render_kernels.h); false: one ray through the pixel centre, texture point-sampled
  // (aliases).
  bool antialias = true;
  // true: rows on all CPU threads; false: on the calling thread only (for callers that
  // render several frames at once).
  bool parallel = true;
};

CameraView makeCameraView(const PinholeCamera& camera, const Pose& pose);

// Colour in [0, 1] per pixel, before quantisation (tests compare against this).
Image<Vec3> renderLinear(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                         const RenderOptions& options = {});
// The 8-bit image: round(255 * colour).
RgbImage renderImage(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                     const RenderOptions& options = {});
// Depth (camera z, metres) of the surface at each pixel centre; 0 where the ray meets only
// the sky.
Image<float> renderDepth(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                         bool parallel = true);

// Quantises a colour in [0, 1] to 8 bits (round half up, clamped).
inline std::uint8_t toByte(double v) {
  double c = v * 255.0 + 0.5;
  return static_cast<std::uint8_t>(c <= 0 ? 0 : (c >= 255 ? 255 : c));
}

}  // namespace vidmap::synth
