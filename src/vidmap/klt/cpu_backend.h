// The CPU backend of the tracker: the functions of kernels.h in OpenMP loops (parallelFor over
// rows and tracks). It is the oracle the CUDA backend is tested against.
#pragma once

#include <vector>

#include "vidmap/klt/backend.h"

namespace vidmap::klt {

class CpuBackend final : public Backend {
 public:
  CpuBackend(int width, int height, const Options& options);

  const char* name() const override { return "cpu"; }
  int width() const override { return width_; }
  int height() const override { return height_; }
  const Options& options() const override { return options_; }
  const Layout& layout() const override { return layout_; }

  void uploadGray(int slot, ImageView<const float> gray) override;
  void uploadRgb(int slot, ImageView<const Rgb8> rgb) override;
  void buildPyramid(int slot) override;
  void uploadSeeds(const TrackRecord* seeds, int count) override;
  void track(Direction direction, int prevSlot, int curSlot, int begin, int end) override;
  void check(int begin, int end) override;
  void readRecords(RecordBuffer which, int begin, int count, TrackRecord* out) override;
  void eigenMap(int slot) override;
  float eigenMax() override { return eigenMax_; }
  SelectCounts select(int aliveCount) override;
  void readLevel(int slot, int level, float* gray, float* grad) override;
  void readEigenMap(float* out) override;
  std::size_t residentBytes() const override;

  PyramidView pyramid(int slot) const { return {gray_[slot].data(), grad_[slot].data(), layout_}; }

 private:
  void checkSlot(int slot) const;
  void checkRange(int begin, int end) const;

  int width_, height_;
  Options options_;
  Layout layout_;
  CellGrid grid_;
  std::vector<float> gray_[2], grad_[2];
  std::vector<TrackRecord> records_[4];
  std::vector<float> eig_;
  float eigenMax_ = 0.0f;
  std::vector<Pick> picks_;
  std::vector<int> trackStart_;      // cells + 1
  std::vector<float> trackXY_;       // capacity * 2, bucketed by cell
  std::vector<unsigned char> keep_;  // cells
  std::vector<float> scratch_;       // x blurs of one level (height x width of level 1)
};

}  // namespace vidmap::klt
