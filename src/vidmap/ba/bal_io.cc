#include "vidmap/ba/bal_io.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"

#if defined(VIDMAP_HAVE_BZIP2)
#include <bzlib.h>
#endif

namespace vidmap::ba {

namespace fs = std::filesystem;

namespace {

std::string readPlain(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open BAL file " + path.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string readBz2(const fs::path& path) {
#if defined(VIDMAP_HAVE_BZIP2)
  FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) throw Error("cannot open BAL file " + path.string());
  int err = BZ_OK;
  BZFILE* bz = BZ2_bzReadOpen(&err, fp, 0, 0, nullptr, 0);
  std::string out;
  char buf[1 << 16];
  while (err == BZ_OK) {
    const int n = BZ2_bzRead(&err, bz, buf, sizeof buf);
    if (err == BZ_OK || err == BZ_STREAM_END) out.append(buf, n);
  }
  BZ2_bzReadClose(&err, bz);
  std::fclose(fp);
  if (out.empty()) throw Error("BAL file " + path.string() + " is not a valid bzip2 stream");
  return out;
#else
  throw Error("cannot read " + path.string() +
              ": this build has no bzip2 support; decompress it first (bunzip2 -k)");
#endif
}

class Tokens {
 public:
  Tokens(const std::string& t, const std::string& name)
      : p_(t.data()), end_(t.data() + t.size()), name_(name) {}
  template <class T>
  T next(const char* what) {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    if (p_ >= end_) throw Error("BAL file " + name_ + " ends early, reading " + what);
    T v{};
    auto r = std::from_chars(p_, end_, v);
    if (r.ec != std::errc()) {
      std::string tok(p_, std::min<size_t>(20, end_ - p_));
      throw Error("BAL file " + name_ + ": cannot read " + what + " from '" + tok + "'");
    }
    p_ = r.ptr;
    return v;
  }

 private:
  const char* p_;
  const char* end_;
  std::string name_;
};

}  // namespace

bool balBzip2Supported() {
#if defined(VIDMAP_HAVE_BZIP2)
  return true;
#else
  return false;
#endif
}

std::optional<fs::path> findBal(const fs::path& dir, const std::string& rel) {
  const fs::path p = dir / rel;
  if (fs::exists(p) && (p.extension() != ".bz2" || balBzip2Supported())) return p;
  if (p.extension() == ".bz2") {
    fs::path plain = p;
    plain.replace_extension();
    if (fs::exists(plain)) return plain;
  }
  return std::nullopt;
}

Problem parseBal(const std::string& text, const std::string& name) {
  Tokens tk(text, name);
  const long nc = tk.next<long>("the camera count");
  const long np = tk.next<long>("the point count");
  const long no = tk.next<long>("the observation count");
  if (nc <= 0 || np <= 0 || no <= 0 || nc > (1 << 26) || np > (1 << 28) || no > (1L << 32))
    throw Error("BAL file " + name + ": bad header " + std::to_string(nc) + " " +
                std::to_string(np) + " " + std::to_string(no));
  Problem p;
  p.model = CameraModel::kBal;
  p.rotation = RotationType::kAngleAxis;
  p.observations.resize(no);
  for (long o = 0; o < no; ++o) {
    auto& ob = p.observations[o];
    ob.image = static_cast<int>(tk.next<long>("an observation's camera"));
    ob.point = static_cast<int>(tk.next<long>("an observation's point"));
    ob.x = tk.next<double>("an observation's x");
    ob.y = tk.next<double>("an observation's y");
    if (ob.image < 0 || ob.image >= nc || ob.point < 0 || ob.point >= np)
      throw Error("BAL file " + name + ": observation " + std::to_string(o) + " refers to camera " +
                  std::to_string(ob.image) + ", point " + std::to_string(ob.point) +
                  " out of range");
  }
  p.images.resize(nc);
  p.cameras.resize(nc);
  for (long c = 0; c < nc; ++c) {
    auto& im = p.images[c];
    for (int k = 0; k < 3; ++k) im.rotation[k] = tk.next<double>("a camera rotation");
    for (int k = 0; k < 3; ++k) im.translation[k] = tk.next<double>("a camera translation");
    for (int k = 0; k < 3; ++k) p.cameras[c].params[k] = tk.next<double>("a camera intrinsic");
    im.camera = static_cast<int>(c);
  }
  p.points.resize(np);
  for (long j = 0; j < np; ++j)
    for (int k = 0; k < 3; ++k) p.points[j].xyz[k] = tk.next<double>("a point coordinate");
  p.check();
  return p;
}

Problem readBal(const fs::path& path) {
  if (!fs::exists(path)) throw Error("BAL file " + path.string() + " does not exist");
  const std::string text = path.extension() == ".bz2" ? readBz2(path) : readPlain(path);
  return parseBal(text, path.string());
}

void writeBal(const fs::path& path, const Problem& p) {
  if (p.model != CameraModel::kBal || p.rotation != RotationType::kAngleAxis)
    throw Error("writeBal: the problem must use the BAL camera model and angle-axis rotations");
  p.check();
  io::writeAtomically(path, [&](const fs::path& tmp) {
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw Error("cannot write " + tmp.string());
    std::fprintf(f, "%zu %zu %zu\n", p.images.size(), p.points.size(), p.observations.size());
    for (const auto& o : p.observations)
      std::fprintf(f, "%d %d %.17g %.17g\n", o.image, o.point, o.x, o.y);
    for (const auto& im : p.images) {
      for (int k = 0; k < 3; ++k) std::fprintf(f, "%.17g\n", im.rotation[k]);
      for (int k = 0; k < 3; ++k) std::fprintf(f, "%.17g\n", im.translation[k]);
      for (int k = 0; k < 3; ++k) std::fprintf(f, "%.17g\n", p.cameras[im.camera].params[k]);
    }
    for (const auto& pt : p.points)
      for (int k = 0; k < 3; ++k) std::fprintf(f, "%.17g\n", pt.xyz[k]);
    const bool ok = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !ok) throw Error("write failed: " + tmp.string());
  });
}

}  // namespace vidmap::ba
