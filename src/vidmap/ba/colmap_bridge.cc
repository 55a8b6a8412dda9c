#include "vidmap/ba/colmap_bridge.h"

#include <map>

#include "vidmap/core/error.h"

namespace vidmap::ba {

namespace {

CameraModel refined(CameraModel m) {
  if (!adjusterRefines(m))
    throw Error("bundle adjustment: COLMAP camera model " + io::cameraModelName(m) +
                " is not supported (SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL)");
  return m;
}

}  // namespace

ColmapProblem problemFromColmap(const io::ColmapModel& m) {
  m.validate();
  if (m.cameras.empty() || m.images.empty())
    throw Error("bundle adjustment: the COLMAP model has no cameras or no images");
  ColmapProblem out;
  Problem& p = out.problem;
  p.rotation = RotationType::kQuaternion;
  p.model = refined(m.cameras.begin()->second.model);
  std::map<std::uint32_t, int> camIndex, imageIndex;
  for (const auto& [id, cam] : m.cameras) {
    if (cam.model != p.model)
      throw Error("bundle adjustment: the COLMAP model mixes camera models (camera " +
                  std::to_string(id) + " is " + io::cameraModelName(cam.model) + ")");
    CameraIntrinsics c;
    for (size_t k = 0; k < cam.params.size() && k < c.params.size(); ++k)
      c.params[k] = cam.params[k];
    camIndex[id] = static_cast<int>(p.cameras.size());
    out.cameraIds.push_back(id);
    p.cameras.push_back(c);
  }
  for (const auto& [id, im] : m.images) {
    ImagePose pose;
    pose.rotation = im.qvec;
    pose.translation = im.tvec;
    pose.camera = camIndex.at(im.camera_id);
    imageIndex[id] = static_cast<int>(p.images.size());
    out.imageIds.push_back(id);
    p.images.push_back(pose);
  }
  for (const auto& [id, pt] : m.points3d) {
    const int j = static_cast<int>(p.points.size());
    Point3 q;
    q.xyz = pt.xyz;
    p.points.push_back(q);
    out.pointIds.push_back(id);
    for (const auto& t : pt.track) {
      const auto& im = m.images.at(t.image_id);
      const auto& xy = im.points2d.at(t.point2d_idx);
      p.observations.push_back({imageIndex.at(t.image_id), j, xy.x, xy.y});
    }
  }
  p.check();
  return out;
}

void updateColmap(const ColmapProblem& s, io::ColmapModel& m) {
  const Problem& p = s.problem;
  for (size_t i = 0; i < p.images.size(); ++i) {
    auto& im = m.images.at(s.imageIds[i]);
    im.qvec = p.images[i].rotation;
    im.tvec = p.images[i].translation;
  }
  const int K = numIntrinsics(p.model);
  for (size_t c = 0; c < p.cameras.size(); ++c) {
    auto& cam = m.cameras.at(s.cameraIds[c]);
    for (int k = 0; k < K && k < static_cast<int>(cam.params.size()); ++k)
      cam.params[k] = p.cameras[c].params[k];
  }
  for (size_t j = 0; j < p.points.size(); ++j) m.points3d.at(s.pointIds[j]).xyz = p.points[j].xyz;
}

}  // namespace vidmap::ba
