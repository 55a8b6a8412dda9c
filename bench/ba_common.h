// Shared by the bundle adjustment benchmarks: loading a problem by name (a BAL file, or
// "synthetic:IMAGESxPOINTS[:model]") and writing results as JSON lines without a JSON library
// (the GPU machine has only the required packages).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "vidmap/ba/bal_io.h"
#include "vidmap/ba/synthetic.h"
#include "vidmap/core/data_dir.h"
#include "vidmap/core/error.h"

namespace vidmap::bench {

// "synthetic:IxP[:MODEL]" (cameras on an arc) or "corridor:IxP[:MODEL]" (sparse covisibility).
inline ba::Problem loadProblem(const std::string& name) {
  for (const std::string tag : {"synthetic:", "corridor:"}) {
    if (name.rfind(tag, 0) != 0) continue;
    ba::SyntheticOptions o;
    if (tag == "corridor:") o.layout = ba::SyntheticLayout::kCorridor;
    std::string spec = name.substr(tag.size());
    std::string model = "SIMPLE_RADIAL";
    if (auto c = spec.find(':'); c != std::string::npos) model = spec.substr(c + 1), spec.resize(c);
    if (std::sscanf(spec.c_str(), "%dx%d", &o.numImages, &o.numPoints) != 2)
      throw Error("bad synthetic problem name " + name + " (synthetic:IMAGESxPOINTS[:MODEL])");
    o.model = ba::parseModel(model);
    o.sharedIntrinsics = o.model != ba::CameraModel::kBal;
    o.seed = 3;
    return ba::makeSyntheticScene(o).initial;
  }
  return ba::readBal(name);
}

// The BAL problems of shared/data/bal, smallest first.
inline std::vector<std::string> defaultProblems() {
  std::vector<std::string> out;
  auto dir = dataPath("bal");
  if (!dir) return out;
  for (const char* f :
       {"ladybug/problem-49-7776-pre.txt.bz2", "trafalgar/problem-21-11315-pre.txt.bz2",
        "trafalgar/problem-39-18060-pre.txt", "dubrovnik/problem-16-22106-pre.txt.bz2",
        "final/problem-93-61203-pre.txt.bz2"}) {
    if (auto p = ba::findBal(*dir, f)) out.push_back(p->string());
  }
  return out;
}

// One JSON object per line.
class JsonLine {
 public:
  JsonLine& add(const std::string& k, const std::string& v) {
    sep();
    std::string e;
    for (char c : v) {
      if (c == '"' || c == '\\') e += '\\';
      e += c == '\n' ? ' ' : c;
    }
    s_ += "\"" + k + "\": \"" + e + "\"";
    return *this;
  }
  JsonLine& add(const std::string& k, const char* v) { return add(k, std::string(v)); }
  JsonLine& add(const std::string& k, double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.12g", v);
    sep();
    s_ += "\"" + k + "\": " + b;
    return *this;
  }
  JsonLine& add(const std::string& k, int v) { return add(k, static_cast<double>(v)); }
  JsonLine& add(const std::string& k, bool v) {
    sep();
    s_ += "\"" + k + "\": " + (v ? "true" : "false");
    return *this;
  }
  std::string str() const { return "{" + s_ + "}"; }

 private:
  void sep() {
    if (!s_.empty()) s_ += ", ";
  }
  std::string s_;
};

inline std::string baseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace vidmap::bench
