#include "vidmap/klt/cuda_engine.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <string>
#include <type_traits>
#include <utility>

#include "vidmap/core/copy_rows.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/klt/cuda_kernels.cuh"

namespace vidmap::klt::cuda {

namespace {

constexpr int kBlock = 256;

std::size_t align16(std::size_t b) { return (b + 15) & ~std::size_t{15}; }

unsigned blocksFor(std::int64_t n, int block) {
  return static_cast<unsigned>((std::max<std::int64_t>(n, 1) + block - 1) / block);
}

// Unpacks the staged seeds (dense, per-sequence offsets) into records[0], ages and alive[];
// tableAge (a resident table starts, else null): the table's ages, one less than the staged
// ages after the push.
__global__ void unpackSeedsKernel(BatchView v, const int* counts, const int* offsets,
                                  const TrackRecord* seeds, const int* ages, int* agesOut,
                                  int* tableAge) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int n = counts[seq];
  if (i == 0) v.alive[seq] = n;
  if (i >= n) return;
  const std::int64_t g = static_cast<std::int64_t>(seq) * v.capacity + i;
  v.records[0][g] = seeds[offsets[seq] + i];
  if (ages) agesOut[g] = ages[offsets[seq] + i];
  if (ages && tableAge) tableAge[g] = ages[offsets[seq] + i] - 1;
}

// Flags of compactAlive: the tracks that survive the push (pushEndReason of kernels.h, the
// rule of every tracker's table update); ages are the ages after the push.
__global__ void aliveFlagKernel(BatchView v, const int* counts, const int* ages, int maxAge,
                                int* flag) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= v.capacity) return;
  const std::int64_t g = static_cast<std::int64_t>(seq) * v.capacity + i;
  flag[g] = i < counts[seq] && pushEndReason(v.records[3][g].status, ages[g], maxAge) == 0 ? 1 : 0;
}

// tableAge (the resident table, else null): the survivors' ages after the push move with them.
__global__ void aliveScatterKernel(BatchView v, const int* flag, const int* pos, const int* ages,
                                   int* tableAge) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const std::int64_t base = static_cast<std::int64_t>(seq) * v.capacity;
  if (i == 0) v.alive[seq] = pos[base + v.capacity] - pos[base];
  if (i >= v.capacity || !flag[base + i]) return;
  const TrackRecord r = v.records[3][base + i];
  const std::int64_t to = base + pos[base + i] - pos[base];
  v.records[0][to] = seedRecord(r.x, r.y, r.measure);
  if (tableAge) tableAge[to] = ages[base + i];
}

// The seeds of a resident push: the table the last one left (records[0][0, alive)), its counts
// and offsets where a staged push has them, and the ages after this push.
__global__ void residentSeedsKernel(BatchView v, int* counts, int* offsets, const int* tableAge,
                                    int* ages) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int n = v.alive[seq];
  if (i == 0) {
    counts[seq] = n;
    offsets[seq] = seq * v.capacity;
  }
  const std::int64_t g = static_cast<std::int64_t>(seq) * v.capacity + i;
  if (i < n) ages[g] = tableAge[g] + 1;
}

// The picks of the sequences that keep them join the resident table (age 0, as appendNew), one
// block a sequence: the host appends the same picks in the same order.
__global__ void appendPicksKernel(BatchView v, const int* keep, int* tableAge) {
  const int seq = blockIdx.x;
  if (!keep[seq]) return;
  const int a = v.alive[seq], n = v.sel.appended[seq];
  const std::int64_t base = static_cast<std::int64_t>(seq) * v.capacity + a;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x))
    tableAge[base + i] = 0;
  __syncthreads();  // every thread has read alive[seq]
  if (threadIdx.x == 0) v.alive[seq] = a + n;
}

// The outbox: counts, the checked records in the staged (dense) order, the picks.
__global__ void packOutputKernel(BatchView v, const int* counts, const int* offsets, bool checked,
                                 bool picks, int maxPicks, int* outSelected, int* outAppended,
                                 TrackRecord* outChecked, TrackRecord* outPicks) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const std::int64_t base = static_cast<std::int64_t>(seq) * v.capacity;
  if (i == 0 && picks) {
    outSelected[seq] = v.sel.selected[seq];
    outAppended[seq] = v.sel.appended[seq];
  }
  if (checked && i < counts[seq]) outChecked[offsets[seq] + i] = v.records[3][base + i];
  if (picks && i < maxPicks && i < v.sel.appended[seq])
    outPicks[static_cast<std::int64_t>(seq) * maxPicks + i] = v.records[0][base + v.alive[seq] + i];
}

int bitsFor(int v) {
  int b = 0;
  while ((1 << b) <= v) ++b;
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

PinnedBytes::PinnedBytes(std::size_t bytes) : size_(bytes) {
  if (bytes) VIDMAP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), bytes, 0));
}

PinnedBytes::~PinnedBytes() {
  if (data_) cudaFreeHost(data_);
}

PinnedBytes::PinnedBytes(PinnedBytes&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

PinnedBytes& PinnedBytes::operator=(PinnedBytes&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFreeHost(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

struct Engine::Graph {
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
  }
};

Engine::Engine(gpu::Context& ctx, int sequences, int width, int height, const Options& options,
               TrackKernel kernel, int frameSlots)
    : ctx_(ctx), options_(options), kernel_(kernel) {
  options_.checkFrame(width, height);
  require(sequences >= 1 && sequences <= 4095,
          "klt cuda: sequences = " + std::to_string(sequences) + " is out of range [1, 4095]");
  require(frameSlots == 2 || frameSlots == 3,
          "klt cuda: frameSlots = " + std::to_string(frameSlots) + " is not 2 or 3");
  ctx_.makeCurrent();
  multiProcessors_ = ctx_.info().multiProcessors;
  params_ = trackParams(options_);
  const int K = sequences, cap = options_.capacity;
  BatchView& v = view_;
  v.sequences = K;
  v.width = width;
  v.height = height;
  v.capacity = cap;
  v.slots = frameSlots;
  v.layout = makeLayout(width, height, options_.levels);
  v.sel.grid = makeCellGrid(width, height, options_.minDistancePx);
  const int cells = v.sel.grid.count();
  require(cells < (1 << 20), "klt cuda: " + std::to_string(cells) +
                                 " selection cells exceed 2^20 (raise klt.minDistancePx)");
  const std::size_t total = static_cast<std::size_t>(v.layout.total);
  const std::size_t kcap = static_cast<std::size_t>(K) * cap;
  const std::size_t kcells = static_cast<std::size_t>(K) * cells;

  gray_ = gpu::DeviceBuffer<float>(ctx_, frameSlots * K * total);
  grad_ = gpu::DeviceBuffer<float>(ctx_, 2 * frameSlots * K * total);
  for (auto& r : records_) r = gpu::DeviceBuffer<TrackRecord>(ctx_, kcap);
  eig_ = gpu::DeviceBuffer<float>(ctx_, K * static_cast<std::size_t>(v.pixels()));
  eigMax_ = gpu::DeviceBuffer<unsigned>(ctx_, K);
  alive_ = gpu::DeviceBuffer<int>(ctx_, K);
  ages_ = gpu::DeviceBuffer<int>(ctx_, kcap);
  tableAge_ = gpu::DeviceBuffer<int>(ctx_, kcap);
  keep_ = gpu::DeviceBuffer<int>(ctx_, K);
  cellCount_ = gpu::DeviceBuffer<int>(ctx_, kcells + 1);
  trackStart_ = gpu::DeviceBuffer<int>(ctx_, kcells + 1);
  trackXY_ = gpu::DeviceBuffer<float>(ctx_, 2 * kcap);
  trackCell_ = gpu::DeviceBuffer<int>(ctx_, kcap);
  picks_ = gpu::DeviceBuffer<Pick>(ctx_, kcells);
  keys_ = gpu::DeviceBuffer<std::uint64_t>(ctx_, kcells);
  sorted_ = gpu::DeviceBuffer<std::uint64_t>(ctx_, kcells);
  take_ = gpu::DeviceBuffer<int>(ctx_, kcells + 1);
  takePos_ = gpu::DeviceBuffer<int>(ctx_, kcells + 1);
  selCounts_ = gpu::DeviceBuffer<int>(ctx_, 2 * static_cast<std::size_t>(K));
  aliveFlag_ = gpu::DeviceBuffer<int>(ctx_, kcap + 1);
  alivePos_ = gpu::DeviceBuffer<int>(ctx_, kcap + 1);

  // The inbox and the outbox.
  in_.frames = 0;
  in_.counts = align16(static_cast<std::size_t>(K) * v.pixels() * 4);
  in_.offsets = in_.counts + align16(4 * static_cast<std::size_t>(K));
  in_.seeds = in_.offsets + align16(4 * static_cast<std::size_t>(K));
  in_.ages = in_.seeds + align16(16 * kcap);
  in_.bytes = in_.ages + align16(4 * kcap);
  out_.maxPicks = std::min(cap, cells);
  out_.selected = 0;
  out_.appended = align16(4 * static_cast<std::size_t>(K));
  out_.picks = out_.appended + align16(4 * static_cast<std::size_t>(K));
  out_.checked = out_.picks + 16 * static_cast<std::size_t>(K) * out_.maxPicks;
  out_.bytes = out_.checked + 16 * kcap;
  inbox_ = gpu::DeviceBuffer<std::uint8_t>(ctx_, in_.bytes);
  for (auto& o : outbox_) o = gpu::DeviceBuffer<std::uint8_t>(ctx_, out_.bytes);
  stage_ = PinnedBytes(in_.bytes);
  for (auto& r : result_) r = PinnedBytes(out_.bytes);
  counts_.assign(K, 0);
  offsets_.assign(K, 0);
  staged_.assign(K, Staged{});

  // CUB scratch: the largest of the scans and the sort.
  const int nCells = static_cast<int>(kcells + 1), nCap = static_cast<int>(kcap + 1);
  std::size_t b = 0, need = 0;
  VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, static_cast<int*>(nullptr),
                                                  static_cast<int*>(nullptr), nCells));
  need = std::max(need, b);
  VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, static_cast<int*>(nullptr),
                                                  static_cast<int*>(nullptr), nCap));
  need = std::max(need, b);
  VIDMAP_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, b, static_cast<std::uint64_t*>(nullptr),
                                                   static_cast<std::uint64_t*>(nullptr),
                                                   static_cast<int>(kcells)));
  need = std::max(need, b);
  cubBytes_ = std::max<std::size_t>(need, 16);
  cubTemp_ = gpu::DeviceBuffer<std::uint8_t>(ctx_, cubBytes_);

  v.gray = gray_.data();
  v.grad = grad_.data();
  for (int i = 0; i < 4; ++i) v.records[i] = records_[i].data();
  v.eig = eig_.data();
  v.eigMax = eigMax_.data();
  v.alive = alive_.data();
  v.sel.cellCount = cellCount_.data();
  v.sel.trackStart = trackStart_.data();
  v.sel.trackXY = trackXY_.data();
  v.sel.trackCell = trackCell_.data();
  v.sel.picks = picks_.data();
  v.sel.keys = keys_.data();
  v.sel.sorted = sorted_.data();
  v.sel.take = take_.data();
  v.sel.takePos = takePos_.data();
  v.sel.selected = selCounts_.data();
  v.sel.appended = selCounts_.data() + K;

  // Defined contents everywhere (the pyramids of an unused slot, the end markers of scans).
  cudaStream_t s = ctx_.stream().handle();
  for (auto* buf : {&gray_, &grad_, &eig_, &trackXY_})
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(buf->data(), 0, buf->bytes(), s));
  for (auto& r : records_) VIDMAP_CUDA_CHECK(cudaMemsetAsync(r.data(), 0, r.bytes(), s));
  for (auto* buf : {&alive_, &ages_, &tableAge_, &keep_, &cellCount_, &trackStart_, &trackCell_,
                    &take_, &takePos_, &selCounts_, &aliveFlag_, &alivePos_})
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(buf->data(), 0, buf->bytes(), s));
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(eigMax_.data(), 0, eigMax_.bytes(), s));
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(picks_.data(), 0, picks_.bytes(), s));
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(keys_.data(), 0, keys_.bytes(), s));
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(sorted_.data(), 0, sorted_.bytes(), s));
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(inbox_.data(), 0, inbox_.bytes(), s));
  for (auto& o : outbox_) VIDMAP_CUDA_CHECK(cudaMemsetAsync(o.data(), 0, o.bytes(), s));
  cudaEvent_t e = nullptr;
  VIDMAP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  uploadDone_ = e;
  ctx_.synchronize();
}

Engine::~Engine() {
  // Nothing may still use the buffers (a pipelined push not finished).
  if (frameStream_) cudaStreamSynchronize(frameStream_->handle());
  cudaStreamSynchronize(ctx_.stream().handle());
  for (auto e : {uploadDone_, frameUploaded_[0], frameUploaded_[1], resultReady_[0],
                 resultReady_[1], resultTimed_[0], resultTimed_[1], resultTimed_[2]})
    if (e) cudaEventDestroy(e);
  for (auto e : slotFree_) cudaEventDestroy(e);
  for (auto e : slotReady_) cudaEventDestroy(e);
}

void Engine::waitForSeedUpload() {
  if (!uploadPending_) return;
  VIDMAP_CUDA_CHECK(cudaEventSynchronize(uploadDone_));
  uploadPending_ = false;
}

void Engine::waitForUpload() {
  waitForSeedUpload();
  if (!frameUploadPending_[frameBuf_]) return;
  VIDMAP_CUDA_CHECK(cudaEventSynchronize(frameUploaded_[frameBuf_]));
  frameUploadPending_[frameBuf_] = false;
}

void Engine::checkSlot(int slot) const {
  require(slot >= 0 && slot < view_.slots, "klt: frame slot " + std::to_string(slot) +
                                               " is outside [0, " + std::to_string(view_.slots) +
                                               ")");
}

gpu::StreamHandle Engine::queueStream() const {
  return queueStream_ ? queueStream_ : ctx_.stream().handle();
}

void Engine::ensurePipeline() {
  if (frameStream_) return;
  frameStream_ = std::make_unique<gpu::Stream>(ctx_.device());
  auto make = [](unsigned flags) {
    cudaEvent_t e = nullptr;
    VIDMAP_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return e;
  };
  for (int i = 0; i < view_.slots; ++i) {
    slotFree_.push_back(make(cudaEventDisableTiming));
    slotReady_.push_back(make(cudaEventDisableTiming));
  }
  for (int i = 0; i < 2; ++i) {
    frameUploaded_[i] = make(cudaEventDisableTiming);
    resultReady_[i] = make(cudaEventDisableTiming);
  }
  frameStage2_ = PinnedBytes(in_.counts - in_.frames);
  keepStage_ = PinnedBytes(2 * sizeof(int) * static_cast<std::size_t>(sequences()));
}

std::size_t Engine::residentBytes() const {
  std::size_t b = gray_.bytes() + grad_.bytes() + eig_.bytes() + trackXY_.bytes() +
                  eigMax_.bytes() + picks_.bytes() + keys_.bytes() + sorted_.bytes() +
                  inbox_.bytes() + outbox_[0].bytes() + outbox_[1].bytes() + cubTemp_.bytes();
  for (const auto& r : records_) b += r.bytes();
  for (const auto* buf : {&alive_, &ages_, &tableAge_, &keep_, &cellCount_, &trackStart_,
                          &trackCell_, &take_, &takePos_, &selCounts_, &aliveFlag_, &alivePos_})
    b += buf->bytes();
  return b;
}

// ---------------------------------------------------------------------------------------------
// Staging and transfers

void Engine::stageGray(int seq, ImageView<const float> gray) {
  require(gray.width == width() && gray.height == height(),
          "klt: frame is " + std::to_string(gray.width) + " x " + std::to_string(gray.height) +
              ", the tracker was made for " + std::to_string(width()) + " x " +
              std::to_string(height()));
  require(stagedFormat_ == FrameFormat::kNone || stagedFormat_ == FrameFormat::kGrayFloat,
          "klt cuda: frames of one push must have one format");
  stagedFormat_ = FrameFormat::kGrayFloat;
  waitForUpload();
  float* dst = reinterpret_cast<float*>(frameStage()) + seq * view_.pixels();
  copyRows(dst, gray.data, sizeof(float) * width(), sizeof(float) * gray.stride, height());
}

void Engine::stageRgb(int seq, ImageView<const Rgb8> rgb) {
  require(rgb.width == width() && rgb.height == height(),
          "klt: frame is " + std::to_string(rgb.width) + " x " + std::to_string(rgb.height) +
              ", the tracker was made for " + std::to_string(width()) + " x " +
              std::to_string(height()));
  require(stagedFormat_ == FrameFormat::kNone || stagedFormat_ == FrameFormat::kRgb8,
          "klt cuda: frames of one push must have one format");
  static_assert(sizeof(Rgb8) == 3, "Rgb8 is three bytes");
  stagedFormat_ = FrameFormat::kRgb8;
  waitForUpload();
  std::uint8_t* dst = frameStage() + 3 * seq * view_.pixels();
  copyRows(dst, rgb.data, 3 * static_cast<std::size_t>(width()),
           3 * static_cast<std::size_t>(rgb.stride), height());
}

void Engine::stageGray8(int seq, ImageView<const std::uint8_t> gray) {
  require(gray.width == width() && gray.height == height(),
          "klt: frame is " + std::to_string(gray.width) + " x " + std::to_string(gray.height) +
              ", the tracker was made for " + std::to_string(width()) + " x " +
              std::to_string(height()));
  require(stagedFormat_ == FrameFormat::kNone || stagedFormat_ == FrameFormat::kGray8,
          "klt cuda: frames of one push must have one format");
  stagedFormat_ = FrameFormat::kGray8;
  waitForUpload();
  std::uint8_t* dst = frameStage() + seq * view_.pixels();
  copyRows(dst, gray.data, width(), gray.stride, height());
}

void Engine::stageSeeds(int seq, const TrackRecord* seeds, int count, const int* ages) {
  require(count >= 0 && count <= options_.capacity, "klt: " + std::to_string(count) +
                                                        " seeds exceed the capacity " +
                                                        std::to_string(options_.capacity));
  counts_[seq] = count;
  seedsStaged_ = true;
  if (ages) agesStaged_ = true;  // then every sequence must give its ages
  // Dense: the offsets follow the counts of the sequences staged so far, in sequence order.
  int off = 0;
  for (int s = 0; s < sequences(); ++s) {
    offsets_[s] = off;
    off += counts_[s];
  }
  staged_[seq] = {seeds, ages};
}

int Engine::stagedTotal() const {
  int n = 0;
  for (int c : counts_) n += c;
  return n;
}

std::uint8_t* Engine::frameStage() {
  return frameBuf_ == 0 ? stage_.data() + in_.frames : frameStage2_.data();
}

void Engine::copyFrames(gpu::StreamHandle s) {
  if (stagedFormat_ == FrameFormat::kNone) return;
  const std::size_t bpp =
      stagedFormat_ == FrameFormat::kRgb8 ? 3 : (stagedFormat_ == FrameFormat::kGray8 ? 1 : 4);
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(inbox_.data() + in_.frames, frameStage(),
                                    bpp * sequences() * view_.pixels(), cudaMemcpyHostToDevice, s));
}

void Engine::writeSeeds() {
  const int K = sequences();
  waitForSeedUpload();  // the seeds are written into stage_ now
  int* counts = reinterpret_cast<int*>(stage_.data() + in_.counts);
  int* offsets = reinterpret_cast<int*>(stage_.data() + in_.offsets);
  TrackRecord* seeds = reinterpret_cast<TrackRecord*>(stage_.data() + in_.seeds);
  int* ages = reinterpret_cast<int*>(stage_.data() + in_.ages);
  for (int q = 0; q < K; ++q) {
    counts[q] = counts_[q];
    offsets[q] = offsets_[q];
    if (counts_[q] > 0 && staged_[q].seeds)
      std::memcpy(seeds + offsets_[q], staged_[q].seeds, sizeof(TrackRecord) * counts_[q]);
    if (counts_[q] > 0 && staged_[q].ages)
      std::memcpy(ages + offsets_[q], staged_[q].ages, sizeof(int) * counts_[q]);
  }
}

void Engine::copySeeds() {
  if (!seedsStaged_) return;
  cudaStream_t s = ctx_.stream().handle();
  writeSeeds();
  const std::size_t total = static_cast<std::size_t>(stagedTotal());
  // One copy of the counts, offsets and seeds; the ages follow when staged.
  const std::size_t end = agesStaged_ ? in_.ages + 4 * total : in_.seeds + 16 * total;
  if (agesStaged_) {
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(inbox_.data() + in_.counts, stage_.data() + in_.counts,
                                      in_.seeds + 16 * total - in_.counts, cudaMemcpyHostToDevice,
                                      s));
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(inbox_.data() + in_.ages, stage_.data() + in_.ages, 4 * total,
                                      cudaMemcpyHostToDevice, s));
  } else {
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(inbox_.data() + in_.counts, stage_.data() + in_.counts,
                                      end - in_.counts, cudaMemcpyHostToDevice, s));
  }
}

void Engine::copyInbox() {
  cudaStream_t s = ctx_.stream().handle();
  copyFrames(s);
  copySeeds();
  if (stagedFormat_ != FrameFormat::kNone || seedsStaged_) {
    VIDMAP_CUDA_CHECK(cudaEventRecord(uploadDone_, s));
    uploadPending_ = true;
  }
}

void Engine::unpack(int slot) {
  unpackFrame(slot);
  unpackSeeds();
}

void Engine::unpackFrame(int slot) {
  cudaStream_t s = queueStream();
  const int K = sequences();
  if (stagedFormat_ == FrameFormat::kGrayFloat) {
    grayFromFloatKernel<<<dim3(blocksFor(view_.pixels(), kBlock), K), kBlock, 0, s>>>(
        view_, slot, reinterpret_cast<const float*>(inbox_.data() + in_.frames));
    VIDMAP_CUDA_CHECK_LAUNCH();
  } else if (stagedFormat_ == FrameFormat::kRgb8) {
    grayFromRgbKernel<<<dim3(blocksFor(view_.pixels(), kBlock), K), kBlock, 0, s>>>(
        view_, slot, inbox_.data() + in_.frames);
    VIDMAP_CUDA_CHECK_LAUNCH();
  } else if (stagedFormat_ == FrameFormat::kGray8) {
    grayFromByteKernel<<<dim3(blocksFor(view_.pixels(), kBlock), K), kBlock, 0, s>>>(
        view_, slot, inbox_.data() + in_.frames);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
}

void Engine::unpackSeeds(bool resident) {
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences();
  if (seedsStaged_) {
    unpackSeedsKernel<<<dim3(blocksFor(options_.capacity, kBlock), K), kBlock, 0, s>>>(
        view_, reinterpret_cast<const int*>(inbox_.data() + in_.counts),
        reinterpret_cast<const int*>(inbox_.data() + in_.offsets),
        reinterpret_cast<const TrackRecord*>(inbox_.data() + in_.seeds),
        agesStaged_ ? reinterpret_cast<const int*>(inbox_.data() + in_.ages) : nullptr,
        ages_.data(), resident ? tableAge_.data() : nullptr);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
}

void Engine::send(int slot) {
  ctx_.makeCurrent();
  if (stagedFormat_ != FrameFormat::kNone) checkSlot(slot);
  copyInbox();
  unpack(slot);
  stagedFormat_ = FrameFormat::kNone;
  seedsStaged_ = agesStaged_ = false;
}

// ---------------------------------------------------------------------------------------------
// Launches

template <class F>
void Engine::timed(const char* name, F&& launch) {
  if (profiling_ && !capturing_) {
    auto scope = ctx_.profiler().time(name, ctx_.stream());
    launch();
  } else {
    launch();
  }
  VIDMAP_CUDA_CHECK_LAUNCH();
}

void Engine::buildPyramid(int slot) {
  checkSlot(slot);
  ctx_.makeCurrent();
  cudaStream_t s = queueStream();
  const int K = sequences();
  const Layout& L = view_.layout;
  timed("klt_pyramid", [&] {
    for (int l = 1; l < L.levels; ++l)
      pyrDownKernel<<<dim3(blocksFor(L.pixels(l), kBlock), K), kBlock, 0, s>>>(view_, slot, l);
  });
  timed("klt_scharr",
        [&] { scharrKernel<<<dim3(blocksFor(L.total, kBlock), K), kBlock, 0, s>>>(view_, slot); });
}

namespace {

// The warp kernels by window: PL = ceil((2 hw + 1)^2 / 32) pixels a lane, and the half window
// at compile time for the windows of optionsFor (15 x 15 and 21 x 21: no divisions by the
// window size, no tests of the pixels every lane has), else at run time (HW = 0).
template <class F>
void forWindow(int halfWindow, F&& f) {
  using std::integral_constant;
  const int size = 2 * halfWindow + 1, perLane = (size * size + kLanes - 1) / kLanes;
  if (halfWindow == 7)
    f(integral_constant<int, 8>{}, integral_constant<int, 7>{});
  else if (halfWindow == 10)
    f(integral_constant<int, 14>{}, integral_constant<int, 10>{});
  else if (perLane <= 8)
    f(integral_constant<int, 8>{}, integral_constant<int, 0>{});
  else if (perLane <= 14)
    f(integral_constant<int, 14>{}, integral_constant<int, 0>{});
  else
    f(integral_constant<int, 31>{}, integral_constant<int, 0>{});
}

// The dynamic shared memory of a block of 4 warps.
std::size_t sharedBytes(int form, int pl) {
  return 4 * static_cast<std::size_t>(sliceWords(form, pl)) * sizeof(float);
}

int warpForm(TrackKernel k) {
  return k == TrackKernel::kWarpShared ? kFormShared
         : k == TrackKernel::kWarpStaged || k == TrackKernel::kWarpStaged16 ||
                 k == TrackKernel::kWarpStaged20
             ? kFormStaged
             : kFormRegisters;
}

// The staged fused kernel with its register cap (only the 21 x 21 window has the capped
// instances: each is a large kernel to compile).
template <int PL, int HW>
auto stagedFusedKernel(TrackKernel k) {
  if constexpr (HW == 10) {
    if (k == TrackKernel::kWarpStaged16) return trackFusedBoundedKernel<PL, kFormStaged, HW, 4>;
    if (k == TrackKernel::kWarpStaged20) return trackFusedBoundedKernel<PL, kFormStaged, HW, 5>;
  }
  return trackFusedKernel<PL, kFormStaged, HW>;
}

// The register form's fused kernel: within one wave of 2 blocks a multiprocessor, the
// instance with 255 registers (the windows of optionsFor), measured faster there on the H200
// (docs/benchmarks.md, "KLT push and batch at the goals (issue 15, helper klt4)": 0.107
// against 0.124 ms at 1280 x 720 with 1024 tracks); beyond it the default (more warps).
template <int PL, int HW>
auto registerFusedKernel(bool oneWave) {
  if constexpr (HW == 7 || HW == 10) {
    if (oneWave) return trackFusedBoundedKernel<PL, kFormRegisters, HW, 1>;
  }
  return trackFusedKernel<PL, kFormRegisters, HW>;
}

}  // namespace

void Engine::launchTrack(bool backward, int prevSlot, int curSlot, int begin, int end,
                         bool useAlive) {
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences(), n = end - begin;
  if (n <= 0) return;
  if (kernel_ == TrackKernel::kLane) {
    trackLaneKernel<<<dim3(blocksFor(n, 64), K), 64, 0, s>>>(view_, prevSlot, curSlot, backward,
                                                             begin, end, useAlive, params_);
    return;
  }
  // One warp per track, 4 tracks per block; a lane holds ceil(n / 32) window pixels.
  const dim3 grid(blocksFor(n, 4), K);
  const int form = warpForm(kernel_);
  forWindow(options_.halfWindow, [&](auto pl, auto hw) {
    constexpr int PL = decltype(pl)::value, HW = decltype(hw)::value;
    auto kernel = form == kFormShared   ? trackWarpKernel<PL, kFormShared, HW>
                  : form == kFormStaged ? trackWarpKernel<PL, kFormStaged, HW>
                                        : trackWarpKernel<PL, kFormRegisters, HW>;
    kernel<<<grid, 128, sharedBytes(form, PL), s>>>(view_, prevSlot, curSlot, backward, begin, end,
                                                    useAlive, params_);
  });
}

void Engine::trackFused(int prevSlot, int curSlot, int begin, int end, bool useAlive) {
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences(), n = end - begin;
  if (n <= 0) return;
  const dim3 grid(blocksFor(n, 4), K);
  const int form = warpForm(kernel_);
  const bool oneWave = static_cast<std::int64_t>(grid.x) * K <= 2 * multiProcessors_;
  timed("klt_track_fused", [&] {
    forWindow(options_.halfWindow, [&](auto pl, auto hw) {
      constexpr int PL = decltype(pl)::value, HW = decltype(hw)::value;
      auto kernel = form == kFormShared   ? trackFusedKernel<PL, kFormShared, HW>
                    : form == kFormStaged ? stagedFusedKernel<PL, HW>(kernel_)
                                          : registerFusedKernel<PL, HW>(oneWave);
      kernel<<<grid, 128, sharedBytes(form, PL), s>>>(view_, prevSlot, curSlot, begin, end,
                                                      useAlive, params_, options_.fbThresholdPx,
                                                      options_.nccThreshold);
    });
  });
}

void Engine::track(bool backward, int prevSlot, int curSlot, int begin, int end, bool useAlive) {
  checkSlot(prevSlot);
  checkSlot(curSlot);
  require(begin >= 0 && begin <= end && end <= options_.capacity,
          "klt: track range [" + std::to_string(begin) + ", " + std::to_string(end) +
              ") is outside the capacity " + std::to_string(options_.capacity));
  ctx_.makeCurrent();
  timed(backward ? "klt_track_backward" : "klt_track_forward",
        [&] { launchTrack(backward, prevSlot, curSlot, begin, end, useAlive); });
}

void Engine::check(int begin, int end, bool useAlive) {
  require(begin >= 0 && begin <= end && end <= options_.capacity,
          "klt: track range [" + std::to_string(begin) + ", " + std::to_string(end) +
              ") is outside the capacity " + std::to_string(options_.capacity));
  if (end <= begin) return;
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  timed("klt_check", [&] {
    checkKernel<<<dim3(blocksFor(end - begin, kBlock), sequences()), kBlock, 0, s>>>(
        view_, begin, end, useAlive, options_.fbThresholdPx, options_.nccThreshold);
  });
}

void Engine::compactAlive(bool resident) {
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences(), cap = options_.capacity;
  timed("klt_compact_alive", [&] {
    aliveFlagKernel<<<dim3(blocksFor(cap, kBlock), K), kBlock, 0, s>>>(
        view_, reinterpret_cast<const int*>(inbox_.data() + in_.counts), ages_.data(),
        options_.maxAgeFrames, aliveFlag_.data());
    std::size_t bytes = cubBytes_;
    VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cubTemp_.data(), bytes, aliveFlag_.data(),
                                                    alivePos_.data(), K * cap + 1, s));
    aliveScatterKernel<<<dim3(blocksFor(cap, kBlock), K), kBlock, 0, s>>>(
        view_, aliveFlag_.data(), alivePos_.data(), ages_.data(),
        resident ? tableAge_.data() : nullptr);
  });
}

void Engine::eigenMap(int slot) {
  checkSlot(slot);
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  timed("klt_eigen_map", [&] {
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(eigMax_.data(), 0, eigMax_.bytes(), s));
    eigenMapKernel<<<dim3(blocksFor(view_.pixels(), kBlock), sequences()), kBlock, 0, s>>>(
        view_, slot, options_.blockSize, options_.halfWindow);
  });
}

void Engine::setAlive(int seq, int alive) {
  require(alive >= 0 && alive <= options_.capacity, "klt: " + std::to_string(alive) +
                                                        " alive tracks exceed the capacity " +
                                                        std::to_string(options_.capacity));
  ctx_.makeCurrent();
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(alive_.data() + seq, &alive, sizeof(int),
                                    cudaMemcpyHostToDevice, ctx_.stream().handle()));
  ctx_.synchronize();  // `alive` is on the caller's stack
}

void Engine::select() {
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences(), cap = options_.capacity, cells = view_.sel.grid.count();
  const int kcells = K * cells;
  timed("klt_select", [&] {
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(cellCount_.data(), 0, cellCount_.bytes(), s));
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(selCounts_.data(), 0, selCounts_.bytes(), s));
    bucketCountKernel<<<dim3(blocksFor(cap, kBlock), K), kBlock, 0, s>>>(view_);
    std::size_t bytes = cubBytes_;
    VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cubTemp_.data(), bytes, cellCount_.data(),
                                                    trackStart_.data(), kcells + 1, s));
    bucketScatterKernel<<<dim3(blocksFor(cap, kBlock), K), kBlock, 0, s>>>(view_);
    selectCellKernel<<<dim3(blocksFor(cells, 128), K), 128, 0, s>>>(view_, options_.qualityLevel);
    keepPickKernel<<<dim3(blocksFor(cells, 128), K), 128, 0, s>>>(view_, options_.minDistancePx);
    bytes = cubBytes_;
    VIDMAP_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
        cubTemp_.data(), bytes, keys_.data(), sorted_.data(), kcells, 0, 52 + bitsFor(K - 1), s));
    rankPickKernel<<<blocksFor(kcells, kBlock), kBlock, 0, s>>>(view_);
    bytes = cubBytes_;
    VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cubTemp_.data(), bytes, take_.data(),
                                                    takePos_.data(), kcells + 1, s));
    compactPickKernel<<<dim3(blocksFor(cells, kBlock), K), kBlock, 0, s>>>(view_);
  });
}

// ---------------------------------------------------------------------------------------------
// Results

void Engine::receive(bool checked, bool picks, gpu::EventTimer* stopTimer, bool wait) {
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences();
  const int maxPicks = out_.maxPicks;
  std::uint8_t* o = outbox_[outBuf_].data();
  timed("klt_pack", [&] {
    packOutputKernel<<<dim3(blocksFor(std::max(options_.capacity, maxPicks), kBlock), K), kBlock, 0,
                       s>>>(view_, reinterpret_cast<const int*>(inbox_.data() + in_.counts),
                            reinterpret_cast<const int*>(inbox_.data() + in_.offsets), checked,
                            picks, maxPicks, reinterpret_cast<int*>(o + out_.selected),
                            reinterpret_cast<int*>(o + out_.appended),
                            reinterpret_cast<TrackRecord*>(o + out_.checked),
                            reinterpret_cast<TrackRecord*>(o + out_.picks));
  });
  // In a graph of the pipelined push the sizes are those of the capacity (a graph's copies
  // have fixed sizes); else those of the staged tracks.
  const std::size_t records = capturing_ ? static_cast<std::size_t>(K) * options_.capacity
                                         : static_cast<std::size_t>(stagedTotal());
  const std::size_t end =
      checked ? out_.checked + 16 * records : (picks ? out_.checked : out_.picks);
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(result_[outBuf_].data(), o, end, cudaMemcpyDeviceToHost, s));
  if (stopTimer) stopTimer->stop(s);
  if (wait && !capturing_) {
    ctx_.synchronize();
    readBuf_ = outBuf_;
    resultPicks_[outBuf_] = picks;
    resultOffsets_[outBuf_] = offsets_;
  }
}

int Engine::selected(int seq) const {
  const std::uint8_t* r = result_[readBuf_].data();
  return resultPicks_[readBuf_] ? reinterpret_cast<const int*>(r + out_.selected)[seq] : 0;
}

int Engine::appended(int seq) const {
  const std::uint8_t* r = result_[readBuf_].data();
  return resultPicks_[readBuf_] ? reinterpret_cast<const int*>(r + out_.appended)[seq] : 0;
}

const TrackRecord* Engine::checked(int seq) const {
  const std::vector<int>& off = resultOffsets_[readBuf_];
  return reinterpret_cast<const TrackRecord*>(result_[readBuf_].data() + out_.checked) +
         (off.empty() ? 0 : off[seq]);
}

const TrackRecord* Engine::picks(int seq) const {
  return reinterpret_cast<const TrackRecord*>(result_[readBuf_].data() + out_.picks) +
         static_cast<std::size_t>(seq) * out_.maxPicks;
}

void Engine::readRecords(int which, int seq, int begin, int count, TrackRecord* out) {
  require(which >= 0 && which < 4, "klt: no record buffer " + std::to_string(which));
  require(begin >= 0 && count >= 0 && begin + count <= options_.capacity,
          "klt: records [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
              ") are outside the capacity " + std::to_string(options_.capacity));
  if (count == 0) return;
  ctx_.makeCurrent();
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(
      out, records_[which].data() + static_cast<std::size_t>(seq) * options_.capacity + begin,
      sizeof(TrackRecord) * count, cudaMemcpyDeviceToHost, ctx_.stream().handle()));
  ctx_.synchronize();
}

void Engine::readLevel(int seq, int slot, int level, float* gray, float* grad) {
  checkSlot(slot);
  require(level >= 0 && level < layout().levels, "klt: no level " + std::to_string(level));
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const std::int64_t n = layout().pixels(level), off = layout().offset[level];
  if (gray)
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(gray, view_.grayOf(seq, slot) + off, sizeof(float) * n,
                                      cudaMemcpyDeviceToHost, s));
  if (grad)
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(grad, view_.gradOf(seq, slot) + 2 * off,
                                      2 * sizeof(float) * n, cudaMemcpyDeviceToHost, s));
  ctx_.synchronize();
}

void Engine::readEigenMap(int seq, float* out) {
  ctx_.makeCurrent();
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(out, eig_.data() + seq * view_.pixels(),
                                    sizeof(float) * view_.pixels(), cudaMemcpyDeviceToHost,
                                    ctx_.stream().handle()));
  ctx_.synchronize();
}

float Engine::eigenMax(int seq) {
  unsigned bits = 0;
  ctx_.makeCurrent();
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(&bits, eigMax_.data() + seq, sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, ctx_.stream().handle()));
  ctx_.synchronize();
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int Engine::aliveCount(int seq) {
  require(seq >= 0 && seq < sequences(), "klt: no sequence " + std::to_string(seq));
  int n = 0;
  ctx_.makeCurrent();
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(&n, alive_.data() + seq, sizeof(int), cudaMemcpyDeviceToHost,
                                    ctx_.stream().handle()));
  ctx_.synchronize();
  return n;
}

void Engine::synchronize() { ctx_.synchronize(); }

// ---------------------------------------------------------------------------------------------
// The batched push

void Engine::queuePush(int prevSlot, int curSlot, bool track, bool selectOnDevice) {
  unpack(curSlot);
  buildPyramid(curSlot);
  queueTrackAndSelect(prevSlot, curSlot, track, selectOnDevice);
}

// What a push queues after its frame's pyramid, for the plain and the pipelined push alike:
// the tracking of every slot, then the selection of new seeds when it runs on the device.
void Engine::queueTrackAndSelect(int prevSlot, int curSlot, bool track, bool selectOnDevice,
                                 bool resident) {
  if (track) {
    const int cap = options_.capacity;
    if (kernel_ == TrackKernel::kLane) {
      this->track(false, prevSlot, curSlot, 0, cap, true);
      this->track(true, prevSlot, curSlot, 0, cap, true);
      check(0, cap, true);
    } else {
      trackFused(prevSlot, curSlot, 0, cap, true);
    }
  }
  // A resident table is compacted every push (the next push's seeds); else only for the
  // selection, whose alive tracks are the survivors.
  if (track && (selectOnDevice || resident)) compactAlive(resident);
  if (selectOnDevice) {
    eigenMap(curSlot);
    select();
  }
}

void Engine::launchGraph(int key, gpu::StreamHandle s, const std::function<void()>& queue) {
  auto& g = graphs_[key];
  if (!g) {
    g = std::make_unique<Graph>();
    cudaGraph_t graph = nullptr;
    VIDMAP_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    capturing_ = true;
    try {
      queue();
    } catch (...) {
      capturing_ = false;
      cudaStreamEndCapture(s, &graph);
      if (graph) cudaGraphDestroy(graph);
      graphs_.erase(key);
      throw;
    }
    capturing_ = false;
    VIDMAP_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    const cudaError_t e = cudaGraphInstantiate(&g->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      graphs_.erase(key);
      VIDMAP_CUDA_CHECK(e);
    }
  }
  VIDMAP_CUDA_CHECK(cudaGraphLaunch(g->exec, s));
}

// Graph keys: slots 2 bits each, then the push's flags; bit 10 a pipelined tracking push,
// bit 11 a pipelined frame.
void Engine::push(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool useGraph) {
  checkSlot(prevSlot);
  checkSlot(curSlot);
  require(stagedFormat_ != FrameFormat::kNone, "klt cuda: push without a staged frame");
  require(!track || (seedsStaged_ && agesStaged_),
          "klt cuda: a push that tracks needs staged seeds with their ages");
  while (inFlight_ > 0) finish();
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  // After a pipelined frame: its conversion reads the inbox and its pyramid a slot.
  for (auto e : slotReady_) VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
  if (pushTimer_) pushTimer_->start(s);
  copyInbox();
  if (kernelTimer_) kernelTimer_->start(s);
  if (!useGraph) {
    queuePush(prevSlot, curSlot, track, selectOnDevice);
  } else {
    const int key = prevSlot | (curSlot << 2) | (track << 4) | (selectOnDevice << 5) |
                    (static_cast<int>(stagedFormat_) << 6) | (seedsStaged_ << 8) |
                    (agesStaged_ << 9);
    launchGraph(key, s, [&] { queuePush(prevSlot, curSlot, track, selectOnDevice); });
  }
  stagedFormat_ = FrameFormat::kNone;
  seedsStaged_ = agesStaged_ = false;
  if (kernelTimer_) kernelTimer_->stop(s);
  for (auto e : slotFree_) VIDMAP_CUDA_CHECK(cudaEventRecord(e, s));
  receive(track, selectOnDevice, pushTimer_.get());
  if (pushTimer_) {
    lastPushMs_ = pushTimer_->elapsedMs();
    lastKernelsMs_ = kernelTimer_->elapsedMs();
  }
}

// ---------------------------------------------------------------------------------------------
// The pipelined push

void Engine::sendFrame(int slot) {
  checkSlot(slot);
  require(stagedFormat_ != FrameFormat::kNone, "klt cuda: sendFrame without a staged frame");
  ctx_.makeCurrent();
  ensurePipeline();
  cudaStream_t fs = frameStream_->handle();
  // The slot's pyramid may still be read by the tracking queued last (2 slots), and the
  // inbox's frame by a conversion of a push(): wait for them on the device, not the host.
  VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(fs, slotFree_[slot], 0));
  copyFrames(fs);
  VIDMAP_CUDA_CHECK(cudaEventRecord(frameUploaded_[frameBuf_], fs));
  frameUploadPending_[frameBuf_] = true;
  frameBuf_ ^= 1;  // the next frame is staged into the other buffer while this one goes up
  const int key = slot | (static_cast<int>(stagedFormat_) << 6) | (1 << 11);
  queueStream_ = fs;
  try {
    launchGraph(key, fs, [&] {
      unpackFrame(slot);
      buildPyramid(slot);
    });
  } catch (...) {
    queueStream_ = nullptr;
    throw;
  }
  queueStream_ = nullptr;
  VIDMAP_CUDA_CHECK(cudaEventRecord(slotReady_[slot], fs));
  stagedFormat_ = FrameFormat::kNone;
}

void Engine::queueTrack(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool resident,
                        bool keepStaged) {
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences();
  if (seedsStaged_) {
    unpackSeeds(resident);
  } else if (resident) {
    residentSeedsKernel<<<dim3(blocksFor(options_.capacity, kBlock), K), kBlock, 0, s>>>(
        view_, reinterpret_cast<int*>(inbox_.data() + in_.counts),
        reinterpret_cast<int*>(inbox_.data() + in_.offsets), tableAge_.data(), ages_.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  queueTrackAndSelect(prevSlot, curSlot, track, selectOnDevice, resident);
  receive(track, selectOnDevice, nullptr, false);
  if (resident && selectOnDevice) {
    if (keepStaged)
      VIDMAP_CUDA_CHECK(cudaMemcpyAsync(keep_.data(),
                                        keepStage_.data() + sizeof(int) * K * (asyncIssued_ % 2),
                                        sizeof(int) * K, cudaMemcpyHostToDevice, s));
    appendPicksKernel<<<K, kBlock, 0, s>>>(view_, keep_.data(), tableAge_.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
}

void Engine::trackAsync(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool resident,
                        const std::vector<bool>* keepPicks) {
  checkSlot(prevSlot);
  checkSlot(curSlot);
  require(frameStream_ != nullptr, "klt cuda: trackAsync before any sendFrame");
  require(stagedFormat_ == FrameFormat::kNone,
          "klt cuda: a staged frame must go with sendFrame before trackAsync");
  require(!track || resident || (seedsStaged_ && agesStaged_),
          "klt cuda: a push that tracks needs staged seeds with their ages");
  require(!resident || !seedsStaged_ || agesStaged_,
          "klt cuda: a resident table starts from seeds with their ages");
  require(!keepPicks || keepPicks->size() == static_cast<std::size_t>(sequences()),
          "klt cuda: keepPicks needs one flag a sequence");
  require(inFlight_ < 2, "klt cuda: a third trackAsync before finish()");
  ctx_.makeCurrent();
  cudaStream_t s = ctx_.stream().handle();
  const int K = sequences(), b = asyncIssued_ % 2;
  if (seedsStaged_) writeSeeds();
  // Which sequences keep their picks: the pinned area of this outbox (the push that used it
  // last has finished, so its copy has run).
  const bool keepStaged = resident && selectOnDevice;
  if (keepStaged) {
    int* keep = reinterpret_cast<int*>(keepStage_.data()) + K * b;
    for (int q = 0; q < K; ++q) keep[q] = !keepPicks || (*keepPicks)[q] ? 1 : 0;
  }
  VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(s, slotReady_[curSlot], 0));
  // One graph launch: the upload of the seeds (the whole inbox past the frames: a graph's
  // copies have fixed sizes) or the resident table's, the tracking, the pack and the read into
  // outbox b. The host's time between the previous push's read and this launch is the GPU's
  // idle time of a steady stream (none when the call queues push k + 1 before it waits for k).
  const int key = prevSlot | (curSlot << 2) | (track << 4) | (selectOnDevice << 5) |
                  (seedsStaged_ << 8) | (agesStaged_ << 9) | (1 << 10) | (resident << 12) |
                  (b << 13);
  outBuf_ = b;
  try {
    launchGraph(key, s, [&] {
      if (seedsStaged_)
        VIDMAP_CUDA_CHECK(cudaMemcpyAsync(inbox_.data() + in_.counts, stage_.data() + in_.counts,
                                          in_.bytes - in_.counts, cudaMemcpyHostToDevice, s));
      queueTrack(prevSlot, curSlot, track, selectOnDevice, resident, keepStaged);
    });
  } catch (...) {
    outBuf_ = 0;
    throw;
  }
  outBuf_ = 0;
  if (seedsStaged_) {
    VIDMAP_CUDA_CHECK(cudaEventRecord(uploadDone_, s));
    uploadPending_ = true;
  }
  resultPicks_[b] = selectOnDevice;
  if (seedsStaged_ || !resident) {
    resultOffsets_[b] = offsets_;
  } else {
    resultOffsets_[b].resize(K);
    for (int q = 0; q < K; ++q) resultOffsets_[b][q] = q * options_.capacity;
  }
  seedsStaged_ = agesStaged_ = false;
  VIDMAP_CUDA_CHECK(cudaEventRecord(slotFree_[prevSlot], s));
  VIDMAP_CUDA_CHECK(cudaEventRecord(slotFree_[curSlot], s));
  // The timing event before the one finish() waits for: both complete when finish() returns.
  timedIndex_[b] = -1;
  if (pushTimer_) {
    for (auto& e : resultTimed_)
      if (!e) VIDMAP_CUDA_CHECK(cudaEventCreate(&e));
    VIDMAP_CUDA_CHECK(cudaEventRecord(resultTimed_[resultTimedCount_ % 3], s));
    timedIndex_[b] = resultTimedCount_++;
  }
  VIDMAP_CUDA_CHECK(cudaEventRecord(resultReady_[b], s));
  ++asyncIssued_;
  ++inFlight_;
}

void Engine::finish() {
  if (inFlight_ == 0) return;
  const int b = (asyncIssued_ - inFlight_) % 2;  // the oldest push in flight
  --inFlight_;
  // The read is the last work of its push; throws a kernel error.
  VIDMAP_CUDA_CHECK(cudaEventSynchronize(resultReady_[b]));
  readBuf_ = b;
  lastPushMs_ = lastKernelsMs_ = 0;
  const int t = timedIndex_[b];
  if (pushTimer_ && t >= 1) {
    // The read before it finished first (one stream); with two in flight the ring of three
    // still holds it.
    float ms = 0;
    VIDMAP_CUDA_CHECK(cudaEventElapsedTime(&ms, resultTimed_[(t - 1) % 3], resultTimed_[t % 3]));
    lastPushMs_ = ms;
  }
}

void Engine::setTiming(bool on) {
  resultTimedCount_ = 0;
  if (on && !pushTimer_) {
    pushTimer_ = std::make_unique<gpu::EventTimer>(ctx_.device());
    kernelTimer_ = std::make_unique<gpu::EventTimer>(ctx_.device());
  } else if (!on) {
    pushTimer_.reset();
    kernelTimer_.reset();
  }
}

}  // namespace vidmap::klt::cuda
