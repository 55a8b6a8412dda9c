// Writes the CPU KLT tracker's records, byte for byte, to a file: the forward, backward and
// checked records of 54 track pairs (photometric 0/1/2 x windows 7/15/21 x six warps of the
// textured scene, 1540 seeds, some outside the frame), the period-8 texture, and a 10-push
// Tracker sequence with keyframes and a maximum age of 4 (checked records, the table, ends and
// ended tracks field by field). Two builds that must compute the same bits (a refactor of
// kernels.h, issue 15) are compared with `cmp` on their outputs:
//   build-a/bench/klt_record_dump a.bin && build-b/bench/klt_record_dump b.bin && cmp a.bin b.bin
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "vidmap/klt/test_support.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace {

using namespace vidmap;
using namespace vidmap::klt;

template <class T>
void put(std::FILE* f, const std::vector<T>& v) {
  if (!v.empty()) std::fwrite(v.data(), sizeof(T), v.size(), f);
}

template <class T>
void put(std::FILE* f, const T& v) {
  std::fwrite(&v, sizeof v, 1, f);
}

void dump(std::FILE* f) {
  const GrayImage I = synth::makeTexturedScene({});
  std::vector<std::pair<float, float>> pts;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ux(-20.f, 660.f), uy(-20.f, 380.f);
  for (int i = 0; i < 1500; ++i) pts.push_back({ux(rng), uy(rng)});
  for (auto p : synth::gridPoints(640, 360, 8, 5, 100, 80)) pts.push_back(p);
  const std::vector<synth::Warp2d> warps = {synth::translation(3.7, -2.1),
                                            synth::translation(-30, 25),
                                            synth::rotationAboutCentre(4, 640, 360),
                                            synth::scaleAboutCentre(1.06, 640, 360),
                                            synth::gainOffset(1.3, 0.05),
                                            synth::translation(200, 0)};
  for (int photometric = 0; photometric < 3; ++photometric)
    for (int hw : {3, 7, 10})
      for (const auto& w : warps) {
        Options o;
        o.photometric = photometric;
        o.halfWindow = hw;
        o.capacity = 2048;
        const GrayImage J = synth::warpImage(I, w);
        const auto r = testing::trackPair(640, 360, o, I, J, pts, photometric == 1 ? 97 : 0);
        put(f, r.forward);
        put(f, r.backward);
        put(f, r.checked);
      }
  const GrayImage P = synth::makePeriodicTexture(640, 360, 8, 5);
  Options op;
  op.capacity = 2048;
  const auto r =
      testing::trackPair(640, 360, op, P, synth::warpImage(P, synth::translation(4, 0)), pts);
  put(f, r.forward);
  put(f, r.backward);
  put(f, r.checked);
  // A Tracker sequence with keyframes, ends and ages.
  Options o;
  o.maxAgeFrames = 4;
  Tracker t(640, 360, o);
  for (int k = 0; k < 10; ++k) {
    const StepReport rep =
        t.push(synth::warpImage(I, synth::translation(2.5 * k, -1.3 * k)), k % 3 == 0);
    put(f, t.lastChecked());
    const TrackTable& tb = t.tracks();
    put(f, tb.x);
    put(f, tb.y);
    put(f, tb.age);
    put(f, tb.measure);
    put(f, tb.id);
    put(f, rep.ends);
    for (const auto& e : t.ended()) {  // field by field: the struct has padding
      put(f, e.id);
      put(f, e.reason);
      put(f, e.x);
      put(f, e.y);
      put(f, e.seedFrame);
      put(f, e.age);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: klt_record_dump OUT.bin\n");
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f) {
    std::fprintf(stderr, "klt_record_dump: cannot write %s\n", argv[1]);
    return 1;
  }
  dump(f);
  return std::fclose(f) == 0 ? 0 : 1;
}
