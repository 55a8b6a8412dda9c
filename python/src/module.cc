// _vidmap: the Python module's C++ part (pybind11). The public API is python/vidmap/__init__.py,
// in pycolmap's shape (colmap/colmap python/README.md): vidmap.reconstruct, vidmap.track,
// vidmap.Reconstruction with .cameras, .images, .points3D. Arrays are numpy views of the C++
// data where the layout allows (keypoints, point ids, tracks, positions, parameters); the GIL
// is released during long work; vidmap::Error becomes vidmap.Error with the same message.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <pybind11/stl_bind.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/nerfstudio.h"
#include "vidmap/io/run_record.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/synth/sequence.h"
#if defined(VIDMAP_HAVE_REPORT)
#include "vidmap/report/report_html.h"
#endif

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace vidmap;
using io::ColmapCamera;
using io::ColmapImage;
using io::ColmapModel;
using io::ColmapPoint3D;

using CameraMap = std::map<std::uint32_t, ColmapCamera>;
using ImageMap = std::map<std::uint32_t, ColmapImage>;
using Point3DMap = std::map<std::uint64_t, ColmapPoint3D>;
PYBIND11_MAKE_OPAQUE(CameraMap);
PYBIND11_MAKE_OPAQUE(ImageMap);
PYBIND11_MAKE_OPAQUE(Point3DMap);

namespace {

// A numpy view of `n` rows of `cols` T at `ptr`, rows `rowStride` bytes apart, kept alive by
// `owner`. An empty one is a fresh (0, cols) array (numpy wants a non-null pointer).
template <class T>
py::array view(const T* ptr, py::ssize_t n, py::ssize_t cols, py::ssize_t rowStride,
               py::handle owner, bool flat = false) {
  using Dims = std::vector<py::ssize_t>;
  if (n == 0) return py::array_t<T>(flat ? Dims{0} : Dims{0, cols});
  if (flat) return py::array_t<T>(Dims{n}, Dims{rowStride}, ptr, owner);
  return py::array_t<T>(Dims{n, cols}, Dims{rowStride, py::ssize_t(sizeof(T))}, ptr, owner);
}

sfm::Camera toSfmCamera(const ColmapCamera& c) {
  require(c.width > 0 && c.height > 0, "Camera: width and height must be positive");
  require(static_cast<int>(c.params.size()) == io::cameraModelNumParams(c.model),
          "Camera: model " + io::cameraModelName(c.model) + " takes " +
              std::to_string(io::cameraModelNumParams(c.model)) + " parameters, got " +
              std::to_string(c.params.size()));
  sfm::CameraSpec spec;
  spec.model = c.model;
  spec.params = c.params;
  const int w = static_cast<int>(c.width), h = static_cast<int>(c.height);
  return sfm::Camera::fromSpec(spec, w, h, w, h);
}

// COLMAP pixels of camera-frame points (N x 3) or of normalized image points (N x 2).
py::array_t<double> imgFromCam(const ColmapCamera& c,
                               py::array_t<double, py::array::c_style | py::array::forcecast> pts) {
  const bool single = pts.ndim() == 1;
  const py::ssize_t n = single ? 1 : pts.shape(0), d = single ? pts.shape(0) : pts.shape(1);
  require((pts.ndim() == 1 || pts.ndim() == 2) && (d == 2 || d == 3),
          "img_from_cam: expected points of shape (N, 3) (camera frame) or (N, 2) (normalized)");
  const sfm::Camera cam = toSfmCamera(c);
  py::array_t<double> out(single ? std::vector<py::ssize_t>{2} : std::vector<py::ssize_t>{n, 2});
  auto in = pts.unchecked();
  double* o = out.mutable_data();
  const double* p = pts.data();
  for (py::ssize_t i = 0; i < n; ++i) {
    const double* q = p + i * d;
    geometry::Vec2 nrm =
        d == 3 ? geometry::Vec2(q[0] / q[2], q[1] / q[2]) : geometry::Vec2(q[0], q[1]);
    if (d == 3 && !(q[2] > 0)) nrm = geometry::Vec2(NAN, NAN);
    const geometry::Vec2 px = cam.toColmapPixel(cam.distortAndProject(nrm));
    o[2 * i] = px.x();
    o[2 * i + 1] = px.y();
  }
  (void)in;
  return out;
}

// Normalized image points (N x 2) of COLMAP pixels (N x 2), undistorted.
py::array_t<double> camFromImg(const ColmapCamera& c,
                               py::array_t<double, py::array::c_style | py::array::forcecast> pts) {
  const bool single = pts.ndim() == 1;
  require((single && pts.shape(0) == 2) || (pts.ndim() == 2 && pts.shape(1) == 2),
          "cam_from_img: expected pixels of shape (N, 2)");
  const py::ssize_t n = single ? 1 : pts.shape(0);
  const sfm::Camera cam = toSfmCamera(c);
  py::array_t<double> out(single ? std::vector<py::ssize_t>{2} : std::vector<py::ssize_t>{n, 2});
  const double* p = pts.data();
  double* o = out.mutable_data();
  for (py::ssize_t i = 0; i < n; ++i) {
    const geometry::Vec2 nrm = cam.normalize({p[2 * i] - 0.5, p[2 * i + 1] - 0.5});
    o[2 * i] = nrm.x();
    o[2 * i + 1] = nrm.y();
  }
  return out;
}

struct ModelStats {
  std::int64_t observations = 0;
  double meanTrackLength = 0, meanError = 0, meanObsPerImage = 0;
};

ModelStats stats(const ColmapModel& m) {
  ModelStats s;
  double err = 0;
  for (const auto& [id, p] : m.points3d) {
    s.observations += static_cast<std::int64_t>(p.track.size());
    err += p.error;
  }
  if (!m.points3d.empty()) {
    s.meanTrackLength = static_cast<double>(s.observations) / m.points3d.size();
    s.meanError = err / m.points3d.size();
  }
  if (!m.images.empty()) s.meanObsPerImage = static_cast<double>(s.observations) / m.images.size();
  return s;
}

std::string summary(const ColmapModel& m) {
  const ModelStats s = stats(m);
  std::ostringstream o;
  o << "Reconstruction:\n\tnum_reg_images = " << m.images.size()
    << "\n\tnum_cameras = " << m.cameras.size() << "\n\tnum_points3D = " << m.points3d.size()
    << "\n\tnum_observations = " << s.observations
    << "\n\tmean_track_length = " << s.meanTrackLength
    << "\n\tmean_observations_per_image = " << s.meanObsPerImage
    << "\n\tmean_reprojection_error = " << s.meanError;
  return o.str();
}

// ---- options through the one field list (reconstruct_options_fields.h) ----

std::string typeName(py::handle v) { return py::str(py::type::handle_of(v).attr("__name__")); }

void setField(pipeline::ReconstructOptions& o, const std::string& key, py::handle value) {
  bool found = false;
  pipeline::forEachReconstructField(o, [&](const pipeline::FieldInfo& f, auto&& field) {
    if (found || (f.path() != key && !(std::string(f.name) == key))) return;
    found = true;
    using T = std::decay_t<decltype(field)>;
    const std::string what = "option " + f.path();
    if constexpr (std::is_same_v<T, bool>) {
      if (!py::isinstance<py::bool_>(value))
        throw Error(what + " expects True or False, got " + typeName(value));
      field = value.cast<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value))
        throw Error(what + " expects an integer, got " + typeName(value));
      // The range is the options' check(); here only what fits the field.
      long long v = 0;
      try {
        v = value.cast<long long>();
      } catch (const py::cast_error&) {
        v = std::numeric_limits<long long>::max();
      }
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        throw Error(what + " = " + py::str(value).cast<std::string>() + " does not fit its type");
      field = static_cast<T>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (py::isinstance<py::bool_>(value) ||
          !(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)))
        throw Error(what + " expects a number, got " + typeName(value));
      field = value.cast<double>();
    } else {
      if (py::isinstance<py::str>(value) || py::isinstance<py::int_>(value) ||
          py::hasattr(value, "__fspath__"))
        field.set(py::str(value).cast<std::string>());
      else
        throw Error(what + " expects a string, got " + typeName(value));
    }
  });
  if (!found) {
    std::string known;
    pipeline::forEachReconstructField(o, [&](const pipeline::FieldInfo& f, auto&&) {
      known += (known.empty() ? "" : ", ") + f.path();
    });
    throw Error("unknown option '" + key + "' (known: " + known + ")");
  }
}

// A dict of options: flat names, dotted paths, or nested dicts per group.
void applyOptions(pipeline::ReconstructOptions& o, py::handle options, const std::string& prefix) {
  if (options.is_none()) return;
  if (!py::isinstance<py::dict>(options))
    throw Error("options must be a dict, got " + typeName(options));
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(options)) {
    if (!py::isinstance<py::str>(k)) throw Error("option names must be strings");
    const std::string key =
        prefix.empty() ? k.cast<std::string>() : prefix + "." + k.cast<std::string>();
    if (py::isinstance<py::dict>(v) && (key == "frontend" || key == "mapper" || key == "mvs"))
      applyOptions(o, v, key);
    else
      setField(o, key, v);
  }
}

py::dict optionsToDict(pipeline::ReconstructOptions& o) {
  py::dict d, groups;
  pipeline::forEachReconstructField(o, [&](const pipeline::FieldInfo& f, auto&& field) {
    using T = std::decay_t<decltype(field)>;
    py::object v;
    if constexpr (std::is_arithmetic_v<T>)
      v = py::cast(field);
    else
      v = py::str(field.get());
    if (!*f.group) {
      d[f.name] = v;
    } else {
      if (!d.contains(f.group)) d[f.group] = py::dict();
      d[f.group][f.name] = v;
    }
  });
  return d;
}

py::list optionFields() {
  pipeline::ReconstructOptions o;
  py::list out;
  pipeline::forEachReconstructField(o, [&](const pipeline::FieldInfo& f, auto&& field) {
    using T = std::decay_t<decltype(field)>;
    py::dict d;
    d["path"] = f.path();
    d["group"] = f.group;
    d["name"] = f.name;
    d["help"] = f.help;
    d["type"] = std::is_same_v<T, bool>       ? "bool"
                : std::is_integral_v<T>       ? "int"
                : std::is_floating_point_v<T> ? "float"
                                              : "str";
    d["lo"] = f.lo;
    d["hi"] = f.hi;
    if constexpr (std::is_arithmetic_v<T>)
      d["default"] = py::cast(field);
    else
      d["default"] = field.get();
    out.append(d);
  });
  return out;
}

// A Python callable shared with C++ threads: copied without the GIL (a shared_ptr), released
// with it.
using PyFunc = std::shared_ptr<py::object>;
PyFunc share(py::object f) {
  return PyFunc(new py::object(std::move(f)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

py::tuple reconstruct(const fs::path& input, const fs::path& output, py::object options,
                      py::object progress) {
  pipeline::ReconstructOptions o;
  o.progress = false;  // Python callers get the callback; the bar only when asked
  applyOptions(o, options, "");
  o.check();
  PyFunc cb = progress.is_none() ? nullptr : share(progress);
  // Ctrl-C and the callback's exceptions end the run; OUTDIR is left as it was.
  o.onProgress = [cb](long frames, long total, const std::string& status) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (cb) (*cb)(frames, total, status);
  };
  io::RunRecord record;
  // The call as made, every option with it.
  std::string call = "vidmap.reconstruct(" + std::string(py::repr(py::str(input.string()))) + ", " +
                     std::string(py::repr(py::str(output.string())));
  if (py::isinstance<py::dict>(options) && py::len(options) > 0)
    call += ", **" + std::string(py::repr(options));
  record.setCommand(call + ")");
  pipeline::ReconstructSummary s;
  {
    py::gil_scoped_release release;
    s = pipeline::reconstruct(input, output, o, record);
  }
  return py::make_tuple(pipeline::formatSummary(s), s.outDir, s.models.size());
}

py::dict track(const fs::path& input, double fps, int width, int maxFrames, int keyframeEvery,
               double refillBelow, py::dict kltOptions, py::object progress) {
  io::FrameSourceOptions so;
  so.fps = fps;
  so.width = width;
  so.check();
  require(keyframeEvery >= 0, "track: keyframe_every must be >= 0");
  require(refillBelow >= 0 && refillBelow <= 1, "track: refill_below must be in [0, 1]");
  std::unique_ptr<io::FrameSource> source = io::openFrameSource(input, so);
  const io::FrameSourceInfo info = source->info();
  klt::Options o = klt::optionsFor(info.width);
  for (auto [k, v] : kltOptions) {
    const std::string key = k.cast<std::string>();
    if (key == "levels")
      o.levels = v.cast<int>();
    else if (key == "half_window")
      o.halfWindow = v.cast<int>();
    else if (key == "max_iterations")
      o.maxIterations = v.cast<int>();
    else if (key == "epsilon_px")
      o.epsilonPx = v.cast<float>();
    else if (key == "min_eig_threshold")
      o.minEigThreshold = v.cast<float>();
    else if (key == "fb_threshold_px")
      o.fbThresholdPx = v.cast<float>();
    else if (key == "ncc_threshold")
      o.nccThreshold = v.cast<float>();
    else if (key == "photometric")
      o.photometric = v.cast<int>();
    else if (key == "block_size")
      o.blockSize = v.cast<int>();
    else if (key == "quality_level")
      o.qualityLevel = v.cast<float>();
    else if (key == "min_distance_px")
      o.minDistancePx = v.cast<float>();
    else if (key == "max_age_frames")
      o.maxAgeFrames = v.cast<int>();
    else if (key == "capacity")
      o.capacity = v.cast<int>();
    else
      throw Error("track: unknown KLT option '" + key +
                  "' (levels, half_window, max_iterations, epsilon_px, min_eig_threshold, "
                  "fb_threshold_px, ncc_threshold, photometric, block_size, quality_level, "
                  "min_distance_px, max_age_frames, capacity)");
  }
  o.check();
  PyFunc cb = progress.is_none() ? nullptr : share(progress);
  std::vector<std::int64_t> ids;
  std::vector<std::int32_t> frames, status;
  std::vector<float> xy;
  int n = 0;
  {
    py::gil_scoped_release release;
    klt::Tracker tracker(info.width, info.height, o);
    io::Frame frame;
    auto add = [&](std::int64_t id, int f, float x, float y, int s) {
      ids.push_back(id);
      frames.push_back(f);
      xy.push_back(x);
      xy.push_back(y);
      status.push_back(s);
    };
    for (;;) {
      if (maxFrames > 0 && n >= maxFrames) break;
      if (!source->next(frame)) break;
      const bool key = n == 0 || (keyframeEvery > 0 && n % keyframeEvery == 0) ||
                       tracker.tracks().size() < refillBelow * o.capacity;
      tracker.push(frame.gray, key);
      for (const auto& e : tracker.ended()) add(e.id, n, e.x, e.y, e.reason);
      const klt::TrackTable& t = tracker.tracks();
      for (int i = 0; i < t.size(); ++i) add(t.id[i], n, t.x[i], t.y[i], 0);
      ++n;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (cb) (*cb)(n, info.frameCount, std::to_string(t.size()) + " tracks alive");
    }
  }
  require(n > 0, "track: '" + input.string() + "' gave no frames");
  py::dict d;
  const py::ssize_t m = static_cast<py::ssize_t>(ids.size());
  d["id"] = py::array_t<std::int64_t>(m, ids.data());
  d["frame"] = py::array_t<std::int32_t>(m, frames.data());
  d["xy"] = py::array_t<float>({m, py::ssize_t(2)}, xy.data());
  d["status"] = py::array_t<std::int32_t>(m, status.data());
  d["frames"] = n;
  d["width"] = info.width;
  d["height"] = info.height;
  py::list reasons;
  for (int r = 0; r < klt::kEndReasonCount; ++r)
    reasons.append(r == 0 ? "alive" : klt::endReasonName(r));
  d["status_names"] = reasons;
  return d;
}

}  // namespace

PYBIND11_MODULE(_vidmap, m) {
  m.doc() = "vidmap: a video to cameras and a 3D map (C++ core)";
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.what());
    }
  });

  py::class_<ColmapCamera>(m, "Camera")
      .def(py::init([](const std::string& model, std::uint64_t width, std::uint64_t height,
                       std::vector<double> params, std::uint32_t id) {
             ColmapCamera c;
             c.model = io::cameraModelFromName(model);
             c.width = width;
             c.height = height;
             c.params = std::move(params);
             c.id = id;
             toSfmCamera(c);  // validates
             return c;
           }),
           py::arg("model"), py::arg("width"), py::arg("height"), py::arg("params"),
           py::arg("camera_id") = 1)
      .def_readwrite("camera_id", &ColmapCamera::id)
      .def_property(
          "model", [](const ColmapCamera& c) { return io::cameraModelName(c.model); },
          [](ColmapCamera& c, const std::string& s) { c.model = io::cameraModelFromName(s); })
      .def_property_readonly("model_name",
                             [](const ColmapCamera& c) { return io::cameraModelName(c.model); })
      .def_readwrite("width", &ColmapCamera::width)
      .def_readwrite("height", &ColmapCamera::height)
      .def_property(
          "params",
          [](py::object self) {
            auto& c = self.cast<ColmapCamera&>();
            return view<double>(c.params.data(), c.params.size(), 1, sizeof(double), self, true);
          },
          [](ColmapCamera& c, std::vector<double> p) { c.params = std::move(p); })
      .def("calibration_matrix",
           [](const ColmapCamera& c) {
             const geometry::Pinhole k = toSfmCamera(c).pinhole();
             // vidmap's pinhole is in its integer-centre convention: back to COLMAP's.
             py::array_t<double> K({3, 3});
             auto r = K.mutable_unchecked<2>();
             r(0, 0) = k.fx, r(0, 1) = 0, r(0, 2) = k.cx + 0.5;
             r(1, 0) = 0, r(1, 1) = k.fy, r(1, 2) = k.cy + 0.5;
             r(2, 0) = 0, r(2, 1) = 0, r(2, 2) = 1;
             return K;
           })
      .def("img_from_cam", &imgFromCam, py::arg("points"),
           "COLMAP pixels of points in the camera frame (N x 3) or of normalized image points "
           "(N x 2), through the model's distortion")
      .def("cam_from_img", &camFromImg, py::arg("pixels"),
           "Undistorted normalized image points (N x 2) of COLMAP pixels (N x 2)")
      .def("__repr__", [](const ColmapCamera& c) {
        std::ostringstream s;
        s << "Camera(camera_id=" << c.id << ", model=" << io::cameraModelName(c.model)
          << ", width=" << c.width << ", height=" << c.height << ", params=[";
        for (size_t i = 0; i < c.params.size(); ++i) s << (i ? ", " : "") << c.params[i];
        s << "])";
        return s.str();
      });

  py::class_<ColmapImage>(m, "Image")
      .def(py::init<>())
      .def_readwrite("image_id", &ColmapImage::id)
      .def_readwrite("camera_id", &ColmapImage::camera_id)
      .def_readwrite("name", &ColmapImage::name)
      // World to camera: (qw, qx, qy, qz) and t, as views (Image.cam_from_world wraps them).
      .def_property_readonly("_qvec",
                             [](py::object self) {
                               auto& im = self.cast<ColmapImage&>();
                               return view<double>(im.qvec.data(), 4, 1, sizeof(double), self,
                                                   true);
                             })
      .def_property_readonly("_tvec",
                             [](py::object self) {
                               auto& im = self.cast<ColmapImage&>();
                               return view<double>(im.tvec.data(), 3, 1, sizeof(double), self,
                                                   true);
                             })
      .def_property_readonly(
          "keypoints",
          [](py::object self) {
            auto& im = self.cast<ColmapImage&>();
            return view<double>(im.points2d.empty() ? nullptr : &im.points2d[0].x,
                                im.points2d.size(), 2, sizeof(io::ColmapPoint2D), self);
          },
          "(N, 2) keypoints in COLMAP's pixel convention (a view)")
      .def_property_readonly(
          "point3D_ids",
          [](py::object self) {
            auto& im = self.cast<ColmapImage&>();
            return view<std::uint64_t>(im.points2d.empty() ? nullptr : &im.points2d[0].point3d_id,
                                       im.points2d.size(), 1, sizeof(io::ColmapPoint2D), self,
                                       true);
          },
          "(N,) 3D point id of each keypoint; 2**64-1 for none (a view)")
      .def("num_points2D", [](const ColmapImage& im) { return im.points2d.size(); })
      .def("num_points3D",
           [](const ColmapImage& im) {
             size_t n = 0;
             for (const auto& p : im.points2d)
               n += p.point3d_id != io::ColmapPoint2D::kInvalidPoint3D;
             return n;
           })
      .def("__repr__", [](const ColmapImage& im) {
        return "Image(image_id=" + std::to_string(im.id) +
               ", camera_id=" + std::to_string(im.camera_id) + ", name='" + im.name +
               "', num_points2D=" + std::to_string(im.points2d.size()) + ")";
      });

  py::class_<ColmapPoint3D>(m, "Point3D")
      .def(py::init<>())
      .def_readonly("point3D_id", &ColmapPoint3D::id)
      .def_property_readonly("xyz",
                             [](py::object self) {
                               auto& p = self.cast<ColmapPoint3D&>();
                               return view<double>(p.xyz.data(), 3, 1, sizeof(double), self, true);
                             })
      .def_property_readonly("color",
                             [](py::object self) {
                               auto& p = self.cast<ColmapPoint3D&>();
                               return view<std::uint8_t>(p.rgb.data(), 3, 1, 1, self, true);
                             })
      .def_readwrite("error", &ColmapPoint3D::error)
      .def_property_readonly(
          "track",
          [](py::object self) {
            auto& p = self.cast<ColmapPoint3D&>();
            return view<std::uint32_t>(p.track.empty() ? nullptr : &p.track[0].image_id,
                                       p.track.size(), 2, sizeof(io::ColmapTrackElement), self);
          },
          "(N, 2) (image_id, point2D_idx) of each observation (a view)")
      .def("track_length", [](const ColmapPoint3D& p) { return p.track.size(); })
      .def("__repr__", [](const ColmapPoint3D& p) {
        std::ostringstream s;
        s << "Point3D(point3D_id=" << p.id << ", xyz=[" << p.xyz[0] << ", " << p.xyz[1] << ", "
          << p.xyz[2] << "], track_length=" << p.track.size() << ")";
        return s.str();
      });

  py::bind_map<CameraMap>(m, "CameraMap");
  py::bind_map<ImageMap>(m, "ImageMap");
  // Its key views have the Python names of the 32-bit maps' ("KeysView[int]"): another scope.
  py::module_ p3d = m.def_submodule("_point3d_map");
  py::bind_map<Point3DMap>(p3d, "Point3DMap");
  m.attr("Point3DMap") = p3d.attr("Point3DMap");

  py::class_<ColmapModel>(m, "Reconstruction")
      .def(py::init<>())
      .def(py::init([](const fs::path& path) {
             py::gil_scoped_release release;
             return io::readColmapModel(path);
           }),
           py::arg("path"), "Reads a COLMAP model folder (binary or text)")
      .def("read",
           [](ColmapModel& m, const fs::path& path) {
             py::gil_scoped_release release;
             m = io::readColmapModel(path);
           })
      .def_readwrite("cameras", &ColmapModel::cameras, py::return_value_policy::reference_internal)
      .def_readwrite("images", &ColmapModel::images, py::return_value_policy::reference_internal)
      .def_readwrite("points3D", &ColmapModel::points3d,
                     py::return_value_policy::reference_internal)
      .def("num_cameras", [](const ColmapModel& m) { return m.cameras.size(); })
      .def("num_images", [](const ColmapModel& m) { return m.images.size(); })
      .def("num_reg_images", [](const ColmapModel& m) { return m.images.size(); })
      .def("num_points3D", [](const ColmapModel& m) { return m.points3d.size(); })
      .def("compute_num_observations", [](const ColmapModel& m) { return stats(m).observations; })
      .def("compute_mean_track_length",
           [](const ColmapModel& m) { return stats(m).meanTrackLength; })
      .def("compute_mean_observations_per_reg_image",
           [](const ColmapModel& m) { return stats(m).meanObsPerImage; })
      .def("compute_mean_reprojection_error",
           [](const ColmapModel& m) { return stats(m).meanError; })
      .def(
          "points3D_xyz",
          [](const ColmapModel& m) {
            py::array_t<double> a({static_cast<py::ssize_t>(m.points3d.size()), py::ssize_t(3)});
            double* o = a.mutable_data();
            for (const auto& [id, p] : m.points3d)
              for (int i = 0; i < 3; ++i) *o++ = p.xyz[i];
            return a;
          },
          "(N, 3) positions of all points in id order (a copy: points live in a map)")
      .def("validate", &ColmapModel::validate)
      .def("summary", &summary)
      .def(
          "write",
          [](const ColmapModel& m, const fs::path& path) {
            py::gil_scoped_release release;
            io::writeColmapModel(m, path, io::ColmapFormat::kBinary);
          },
          py::arg("path"), "Writes cameras/images/points3D.bin into path (created)")
      .def(
          "write_text",
          [](const ColmapModel& m, const fs::path& path) {
            py::gil_scoped_release release;
            io::writeColmapModel(m, path, io::ColmapFormat::kText);
          },
          py::arg("path"), "Writes cameras/images/points3D.txt into path (created)")
      .def("__repr__", [](const ColmapModel& m) {
        return "Reconstruction(num_reg_images=" + std::to_string(m.images.size()) +
               ", num_cameras=" + std::to_string(m.cameras.size()) +
               ", num_points3D=" + std::to_string(m.points3d.size()) + ")";
      });

  m.def("_reconstruct", &reconstruct, py::arg("input"), py::arg("output_path"), py::arg("options"),
        py::arg("progress"));
  m.def("_default_options", [] {
    pipeline::ReconstructOptions o;
    return optionsToDict(o);
  });
  m.def("_resolve_options", [](py::object options) {
    pipeline::ReconstructOptions o;
    applyOptions(o, options, "");
    o.check();
    return optionsToDict(o);
  });
  m.def("option_fields", &optionFields,
        "The fields of the reconstruction options: path, group, name, help, type, range, default");
  m.def("_track", &track, py::arg("input"), py::arg("fps"), py::arg("width"), py::arg("max_frames"),
        py::arg("keyframe_every"), py::arg("refill_below"), py::arg("klt"), py::arg("progress"));
  m.def(
      "export_nerfstudio",
      [](py::object model, const fs::path& output, const std::string& imageDir, bool ply) {
        io::NerfstudioOptions o;
        o.imageDir = imageDir;
        if (!ply) o.plyFile.clear();
        ColmapModel loaded;
        const ColmapModel* mp;
        if (py::isinstance<ColmapModel>(model)) {
          mp = &model.cast<const ColmapModel&>();
        } else {
          loaded = io::readColmapModel(model.cast<fs::path>());
          mp = &loaded;
        }
        py::gil_scoped_release release;
        io::exportNerfstudio(*mp, output, o);
      },
      py::arg("model"), py::arg("output"), py::arg("image_dir") = "images", py::arg("ply") = true,
      "Writes nerfstudio's transforms.json (and sparse_pc.ply) for a Reconstruction or a model "
      "folder");
  m.def(
      "synth",
      [](const fs::path& output, const std::string& scene, const std::string& path, int frames,
         double fps, int width, int height, double hfov, std::uint32_t seed,
         const std::string& video, bool overwrite) {
        synth::SequenceOptions o;
        o.scene = scene;
        o.path = path;
        o.frames = frames;
        o.fps = fps;
        o.width = width;
        o.height = height;
        o.hfovDeg = hfov;
        o.seed = seed;
        o.video = video;
        o.overwrite = overwrite;
        o.check();
        synth::SequenceResult r;
        {
          py::gil_scoped_release release;
          r = synth::writeSequence(output, o);
        }
        py::dict d;
        d["path"] = r.dir;
        d["frames"] = r.frames.size();
        d["camera"] =
            py::dict(py::arg("fx") = r.camera.fx, py::arg("fy") = r.camera.fy,
                     py::arg("cx") = r.camera.cx, py::arg("cy") = r.camera.cy,
                     py::arg("width") = r.camera.width, py::arg("height") = r.camera.height);
        d["video"] = r.video;
        return d;
      },
      py::arg("output_path"), py::arg("scene") = "room", py::arg("path") = "orbit",
      py::arg("frames") = 60, py::arg("fps") = 30.0, py::arg("width") = 640,
      py::arg("height") = 480, py::arg("hfov") = 60.0, py::arg("seed") = 1, py::arg("video") = "",
      py::arg("overwrite") = false,
      "Renders a synthetic sequence with known truth (vidmap synth): rgb/, rgb.txt, "
      "groundtruth.txt and the true model as COLMAP text");
  m.def(
      "write_report",
      [](const fs::path& dir, const std::string& groundTruth, std::int64_t maxPoints) {
#if defined(VIDMAP_HAVE_REPORT)
        report::ReportOptions o;
        o.groundTruth = groundTruth;
        o.maxPoints = maxPoints;
        py::gil_scoped_release release;
        return report::writeReport(dir, o);
#else
        throw Error("write_report: this vidmap was built without nlohmann-json");
        return fs::path();
#endif
      },
      py::arg("output_path"), py::arg("groundtruth") = "", py::arg("max_points") = 200000,
      "Writes OUTDIR/report.html again (vidmap report)");
}
