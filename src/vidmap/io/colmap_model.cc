#include "vidmap/io/colmap_model.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"

namespace vidmap::io {

namespace fs = std::filesystem;

namespace {

// The COLMAP models of the one enum (all but BAL).
constexpr CameraModelId kModels[] = {CameraModelId::kSimplePinhole, CameraModelId::kPinhole,
                                     CameraModelId::kSimpleRadial,  CameraModelId::kRadial,
                                     CameraModelId::kOpenCV,        CameraModelId::kFullOpenCV};

CameraModelId colmapModel(CameraModelId id) {
  for (CameraModelId m : kModels)
    if (m == id) return id;
  throw Error("unsupported COLMAP camera model id " + std::to_string(static_cast<int>(id)));
}

// Little-endian binary writer/reader (x86-64 and aarch64 are little-endian; COLMAP's files
// are little-endian by definition).
template <class T>
void put(std::ostream& o, T v) {
  o.write(reinterpret_cast<const char*>(&v), sizeof(T));
}

class Reader {
 public:
  Reader(const fs::path& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw Error("cannot open " + path.string());
  }
  template <class T>
  T get() {
    T v;
    in_.read(reinterpret_cast<char*>(&v), sizeof(T));
    if (!in_) throw Error("truncated COLMAP file " + path_.string());
    return v;
  }
  std::string getName() {
    std::string s;
    char c;
    while (true) {
      in_.get(c);
      if (!in_) throw Error("truncated COLMAP file " + path_.string());
      if (c == '\0') return s;
      s.push_back(c);
      if (s.size() > 4096) throw Error("malformed image name in " + path_.string());
    }
  }
  // Guards counts read from the file against absurd values (a corrupt file must not make us
  // allocate terabytes): each element needs at least minBytes bytes of the file.
  std::uint64_t count(std::uint64_t minBytes) {
    auto n = get<std::uint64_t>();
    auto pos = in_.tellg();
    in_.seekg(0, std::ios::end);
    auto end = in_.tellg();
    in_.seekg(pos);
    if (minBytes > 0 && n > static_cast<std::uint64_t>(end - pos) / minBytes)
      throw Error("corrupt COLMAP file " + path_.string() + ": count " + std::to_string(n) +
                  " exceeds the file size");
    return n;
  }

 private:
  fs::path path_;
  std::ifstream in_;
};

bool finite(const double* v, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

void writeBinary(const ColmapModel& m, const fs::path& folder) {
  writeAtomically(folder / "cameras.bin", [&](const fs::path& tmp) {
    std::ofstream o(tmp, std::ios::binary);
    put<std::uint64_t>(o, m.cameras.size());
    for (const auto& [id, c] : m.cameras) {
      put<std::uint32_t>(o, c.id);
      put<int>(o, static_cast<int>(c.model));
      put<std::uint64_t>(o, c.width);
      put<std::uint64_t>(o, c.height);
      for (double p : c.params) put<double>(o, p);
    }
    if (!o.flush()) throw Error("write failed: " + tmp.string());
  });
  writeAtomically(folder / "images.bin", [&](const fs::path& tmp) {
    std::ofstream o(tmp, std::ios::binary);
    put<std::uint64_t>(o, m.images.size());
    for (const auto& [id, im] : m.images) {
      put<std::uint32_t>(o, im.id);
      for (double q : im.qvec) put<double>(o, q);
      for (double t : im.tvec) put<double>(o, t);
      put<std::uint32_t>(o, im.camera_id);
      o.write(im.name.c_str(), static_cast<std::streamsize>(im.name.size() + 1));
      put<std::uint64_t>(o, im.points2d.size());
      for (const auto& p : im.points2d) {
        put<double>(o, p.x);
        put<double>(o, p.y);
        put<std::uint64_t>(o, p.point3d_id);
      }
    }
    if (!o.flush()) throw Error("write failed: " + tmp.string());
  });
  writeAtomically(folder / "points3D.bin", [&](const fs::path& tmp) {
    std::ofstream o(tmp, std::ios::binary);
    put<std::uint64_t>(o, m.points3d.size());
    for (const auto& [id, p] : m.points3d) {
      put<std::uint64_t>(o, p.id);
      for (double x : p.xyz) put<double>(o, x);
      for (auto c : p.rgb) put<std::uint8_t>(o, c);
      put<double>(o, p.error);
      put<std::uint64_t>(o, p.track.size());
      for (const auto& e : p.track) {
        put<std::uint32_t>(o, e.image_id);
        put<std::uint32_t>(o, e.point2d_idx);
      }
    }
    if (!o.flush()) throw Error("write failed: " + tmp.string());
  });
}

// Text as a stream with precision 17 writes it (a double as printf's %.17g, which
// std::to_chars' general format with precision 17 is defined to equal), without the stream's
// per-value locale and state: the text model of a 100-image video is 10 MB of numbers.
class TextBuffer {
 public:
  TextBuffer& operator<<(std::string_view v) {
    s_.append(v);
    return *this;
  }
  TextBuffer& operator<<(const char* v) { return *this << std::string_view(v); }
  TextBuffer& operator<<(const std::string& v) { return *this << std::string_view(v); }
  TextBuffer& operator<<(char c) {  // a character, as a stream writes it (not its code)
    s_.push_back(c);
    return *this;
  }
  TextBuffer& operator<<(double v) {
    char b[40];
    const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 17);
    s_.append(b, r.ptr);
    return *this;
  }
  template <class T>
  requires std::is_integral_v<T> TextBuffer& operator<<(T v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, r.ptr);
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

void writeText(const ColmapModel& m, const fs::path& folder) {
  auto textFile = [&](const char* name, const std::function<void(TextBuffer&)>& body) {
    TextBuffer s;
    body(s);
    writeTextAtomically(folder / name, s.str());
  };
  textFile("cameras.txt", [&](TextBuffer& s) {
    s << "# Camera list with one line of data per camera:\n"
      << "#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
      << "# Number of cameras: " << m.cameras.size() << "\n";
    for (const auto& [id, c] : m.cameras) {
      s << c.id << " " << cameraModelName(c.model) << " " << c.width << " " << c.height;
      for (double p : c.params) s << " " << p;
      s << "\n";
    }
  });
  textFile("images.txt", [&](TextBuffer& s) {
    double obs = 0;
    for (const auto& [id, im] : m.images) obs += static_cast<double>(im.points2d.size());
    s << "# Image list with two lines of data per image:\n"
      << "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n"
      << "#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
      << "# Number of images: " << m.images.size() << ", mean observations per image: "
      << (m.images.empty() ? 0.0 : obs / static_cast<double>(m.images.size())) << "\n";
    for (const auto& [id, im] : m.images) {
      s << im.id;
      for (double q : im.qvec) s << " " << q;
      for (double t : im.tvec) s << " " << t;
      s << " " << im.camera_id << " " << im.name << "\n";
      for (size_t i = 0; i < im.points2d.size(); ++i) {
        const auto& p = im.points2d[i];
        if (i) s << " ";
        s << p.x << " " << p.y << " ";
        if (p.point3d_id == ColmapPoint2D::kInvalidPoint3D)
          s << -1;
        else
          s << p.point3d_id;
      }
      s << "\n";
    }
  });
  textFile("points3D.txt", [&](TextBuffer& s) {
    double len = 0;
    for (const auto& [id, p] : m.points3d) len += static_cast<double>(p.track.size());
    s << "# 3D point list with one line of data per point:\n"
      << "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
      << "# Number of points: " << m.points3d.size() << ", mean track length: "
      << (m.points3d.empty() ? 0.0 : len / static_cast<double>(m.points3d.size())) << "\n";
    for (const auto& [id, p] : m.points3d) {
      s << p.id << " " << p.xyz[0] << " " << p.xyz[1] << " " << p.xyz[2] << " " << int(p.rgb[0])
        << " " << int(p.rgb[1]) << " " << int(p.rgb[2]) << " " << p.error;
      for (const auto& e : p.track) s << " " << e.image_id << " " << e.point2d_idx;
      s << "\n";
    }
  });
}

ColmapModel readBinary(const fs::path& folder) {
  ColmapModel m;
  {
    Reader r(folder / "cameras.bin");
    auto n = r.count(24);
    for (std::uint64_t i = 0; i < n; ++i) {
      ColmapCamera c;
      c.id = r.get<std::uint32_t>();
      c.model = static_cast<CameraModelId>(r.get<int>());
      c.width = r.get<std::uint64_t>();
      c.height = r.get<std::uint64_t>();
      c.params.resize(static_cast<size_t>(cameraModelNumParams(c.model)));
      for (auto& p : c.params) p = r.get<double>();
      m.cameras[c.id] = std::move(c);
    }
  }
  {
    Reader r(folder / "images.bin");
    auto n = r.count(69);
    for (std::uint64_t i = 0; i < n; ++i) {
      ColmapImage im;
      im.id = r.get<std::uint32_t>();
      for (auto& q : im.qvec) q = r.get<double>();
      for (auto& t : im.tvec) t = r.get<double>();
      im.camera_id = r.get<std::uint32_t>();
      im.name = r.getName();
      auto np = r.count(24);
      im.points2d.resize(np);
      for (auto& p : im.points2d) {
        p.x = r.get<double>();
        p.y = r.get<double>();
        p.point3d_id = r.get<std::uint64_t>();
      }
      m.images[im.id] = std::move(im);
    }
  }
  {
    Reader r(folder / "points3D.bin");
    auto n = r.count(43);
    for (std::uint64_t i = 0; i < n; ++i) {
      ColmapPoint3D p;
      p.id = r.get<std::uint64_t>();
      for (auto& x : p.xyz) x = r.get<double>();
      for (auto& c : p.rgb) c = r.get<std::uint8_t>();
      p.error = r.get<double>();
      auto nt = r.count(8);
      p.track.resize(nt);
      for (auto& e : p.track) {
        e.image_id = r.get<std::uint32_t>();
        e.point2d_idx = r.get<std::uint32_t>();
      }
      m.points3d[p.id] = std::move(p);
    }
  }
  return m;
}

// Reads the data lines (not comments, not empty) of a text file.
std::vector<std::string> dataLines(const fs::path& path, bool keepEmpty) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path.string());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty() && !keepEmpty) continue;
    lines.push_back(line);
  }
  return lines;
}

[[noreturn]] void badLine(const fs::path& path, const std::string& line) {
  throw Error("malformed line in " + path.string() + ": \"" + line.substr(0, 80) + "\"");
}

ColmapModel readText(const fs::path& folder) {
  ColmapModel m;
  auto cpath = folder / "cameras.txt";
  for (const auto& line : dataLines(cpath, false)) {
    std::istringstream s(line);
    ColmapCamera c;
    std::string model;
    if (!(s >> c.id >> model >> c.width >> c.height)) badLine(cpath, line);
    c.model = cameraModelFromName(model);
    c.params.resize(static_cast<size_t>(cameraModelNumParams(c.model)));
    for (auto& p : c.params)
      if (!(s >> p)) badLine(cpath, line);
    m.cameras[c.id] = std::move(c);
  }
  auto ipath = folder / "images.txt";
  auto lines = dataLines(ipath, true);
  // Two lines per image: the pose line and the (possibly empty) line of 2D points.
  for (size_t i = 0; i < lines.size(); i += 2) {
    if (lines[i].empty()) continue;
    std::istringstream s(lines[i]);
    ColmapImage im;
    if (!(s >> im.id)) badLine(ipath, lines[i]);
    for (auto& q : im.qvec)
      if (!(s >> q)) badLine(ipath, lines[i]);
    for (auto& t : im.tvec)
      if (!(s >> t)) badLine(ipath, lines[i]);
    if (!(s >> im.camera_id >> im.name)) badLine(ipath, lines[i]);
    if (i + 1 < lines.size()) {
      std::istringstream p(lines[i + 1]);
      double x, y;
      long long id;
      while (p >> x >> y >> id)
        im.points2d.push_back({x, y, id < 0 ? ColmapPoint2D::kInvalidPoint3D : std::uint64_t(id)});
      if (!p.eof()) badLine(ipath, lines[i + 1]);
    }
    m.images[im.id] = std::move(im);
  }
  auto ppath = folder / "points3D.txt";
  for (const auto& line : dataLines(ppath, false)) {
    std::istringstream s(line);
    ColmapPoint3D p;
    int r, g, b;
    if (!(s >> p.id >> p.xyz[0] >> p.xyz[1] >> p.xyz[2] >> r >> g >> b >> p.error))
      badLine(ppath, line);
    p.rgb = {std::uint8_t(r), std::uint8_t(g), std::uint8_t(b)};
    std::uint32_t img, idx;
    while (s >> img >> idx) p.track.push_back({img, idx});
    if (!s.eof()) badLine(ppath, line);
    m.points3d[p.id] = std::move(p);
  }
  return m;
}

}  // namespace

CameraModelId cameraModelFromName(const std::string& name) {
  for (CameraModelId m : kModels)
    if (name == modelName(m)) return m;
  throw Error("unknown camera model \"" + name +
              "\" (supported: SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV, "
              "FULL_OPENCV)");
}

std::string cameraModelName(CameraModelId id) { return modelName(colmapModel(id)); }
int cameraModelNumParams(CameraModelId id) { return modelNumParams(colmapModel(id)); }

void ColmapModel::validate() const {
  for (const auto& [id, c] : cameras) {
    if (id != c.id) throw Error("camera key " + std::to_string(id) + " differs from its id");
    if (static_cast<int>(c.params.size()) != cameraModelNumParams(c.model))
      throw Error("camera " + std::to_string(id) + " (" + cameraModelName(c.model) + ") has " +
                  std::to_string(c.params.size()) + " parameters, expected " +
                  std::to_string(cameraModelNumParams(c.model)));
    if (!finite(c.params.data(), static_cast<int>(c.params.size())))
      throw Error("camera " + std::to_string(id) + " has a non-finite parameter");
  }
  for (const auto& [id, im] : images) {
    if (id != im.id) throw Error("image key " + std::to_string(id) + " differs from its id");
    if (!cameras.count(im.camera_id))
      throw Error("image " + std::to_string(id) + " names missing camera " +
                  std::to_string(im.camera_id));
    if (!finite(im.qvec.data(), 4) || !finite(im.tvec.data(), 3))
      throw Error("image " + std::to_string(id) + " has a non-finite pose");
    if (im.name.empty() || im.name.find_first_of(" \n\t") != std::string::npos)
      throw Error("image " + std::to_string(id) + " has an empty name or one with whitespace");
  }
  for (const auto& [id, p] : points3d) {
    if (id != p.id) throw Error("point key " + std::to_string(id) + " differs from its id");
    if (!finite(p.xyz.data(), 3) || !std::isfinite(p.error))
      throw Error("point " + std::to_string(id) + " is not finite");
    for (const auto& e : p.track) {
      auto it = images.find(e.image_id);
      if (it == images.end())
        throw Error("point " + std::to_string(id) + " names missing image " +
                    std::to_string(e.image_id));
      if (e.point2d_idx >= it->second.points2d.size())
        throw Error("point " + std::to_string(id) + " names missing 2D point " +
                    std::to_string(e.point2d_idx) + " of image " + std::to_string(e.image_id));
    }
  }
}

void writeColmapModel(const ColmapModel& model, const fs::path& folder, ColmapFormat format) {
  model.validate();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (!fs::is_directory(folder)) throw Error("cannot create folder " + folder.string());
  if (format == ColmapFormat::kBinary)
    writeBinary(model, folder);
  else
    writeText(model, folder);
}

ColmapModel readColmapModel(const fs::path& folder) {
  if (!fs::is_directory(folder)) throw Error("no such model folder: " + folder.string());
  ColmapModel m;
  if (fs::exists(folder / "cameras.bin"))
    m = readBinary(folder);
  else if (fs::exists(folder / "cameras.txt"))
    m = readText(folder);
  else
    throw Error("no COLMAP model (cameras.bin or cameras.txt) in " + folder.string());
  m.validate();
  return m;
}

}  // namespace vidmap::io
