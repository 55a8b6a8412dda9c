#include "vidmap/io/run_record.h"

#include <gtest/gtest.h>

#include <cmath>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "vidmap/core/build_info.h"
#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/gpu/device.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) { return testFolder("run_record_" + name); }

std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunRecord, MachineIsDescribed) {
  MachineInfo m = MachineInfo::current();
  EXPECT_FALSE(m.hostname.empty());
  EXPECT_FALSE(m.cpuModel.empty());
  EXPECT_GE(m.cpuCores, 1);
  EXPECT_GT(m.memoryBytes, std::int64_t(64) << 20);
  EXPECT_GT(hostPeakRssBytes(), 0);
}

TEST(RunRecord, StagesAccumulateInFirstSeenOrder) {
  RunRecord r;
  r.addStage("track", 10.0, 4.0);
  r.addStage("decode", 1.0);
  r.addStage("track", 5.0, 1.0, 2);
  ASSERT_EQ(r.stages().size(), 2u);
  EXPECT_EQ(r.stages()[0].name, "track");
  EXPECT_DOUBLE_EQ(r.stages()[0].wallMs, 15.0);
  EXPECT_DOUBLE_EQ(r.stages()[0].gpuMs, 5.0);
  EXPECT_EQ(r.stages()[0].calls, 3);
  EXPECT_EQ(r.stages()[1].name, "decode");
}

TEST(RunRecord, ScopedStageMeasuresWallTime) {
  RunRecord r;
  for (int i = 0; i < 2; ++i) {
    auto t = r.stage("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(r.stages().size(), 1u);
  EXPECT_EQ(r.stages()[0].calls, 2);
  EXPECT_GE(r.stages()[0].wallMs, 40.0);
  EXPECT_LT(r.stages()[0].wallMs, 5000.0);
  EXPECT_EQ(r.stages()[0].gpuMs, 0.0);
  {
    auto t = r.stage("early");
    t.stop();
    t.stop();  // idempotent: one call
  }
  EXPECT_EQ(r.stages()[1].calls, 1);
}

TEST(RunRecord, BadOptionPathsAreClearErrors) {
  RunRecord r;
  r.setOption("klt.window", 21);
  EXPECT_NE(errorOf([&] { r.setOption("klt", 3); }).find("conflicts with option \"klt.window\""),
            std::string::npos);
  EXPECT_NE(errorOf([&] { r.setOption("klt.window.x", 3); }).find("conflicts"), std::string::npos);
  EXPECT_NE(errorOf([&] { r.setOption("a..b", 1); }).find("empty key"), std::string::npos);
  EXPECT_FALSE(errorOf([&] { r.setOption("", 1); }).empty());
  EXPECT_FALSE(errorOf([&] { r.setOption("x.", 1); }).empty());
  r.setOption("klt.window", 31);  // replacing is fine
  ASSERT_EQ(r.options().size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(r.options()[0].second), 31);
}

TEST(RunRecord, KernelsAndCountsAdd) {
  RunRecord r;
  r.addKernels({{"a", 2, 1.5}, {"b", 1, 0.25}});
  r.addKernels({{"a", 3, 0.5}});
  EXPECT_EQ(r.kernels().at("a").launches, 5);
  EXPECT_DOUBLE_EQ(r.kernels().at("a").gpuMs, 2.0);
  r.addCount("frames");
  r.addCount("frames", 9);
  r.setCount("points", 1234);
  EXPECT_EQ(r.counts().at("frames"), 10);
  r.noteDevicePeakBytes(100);
  r.noteDevicePeakBytes(50);
  EXPECT_EQ(r.devicePeakBytes(), 100);
}

#if defined(VIDMAP_HAVE_JSON)

TEST(RunRecord, WritesSchemaOneJsonThatParsesBack) {
  // Touch 64 MiB so the host peak RSS has a known lower bound.
  std::vector<char> big(std::size_t(64) << 20);
  std::memset(big.data(), 1, big.size());
  volatile char sink = big[big.size() / 2];
  (void)sink;

  RunRecord r;
  r.setCommand("vidmap test --fps 4");
  r.setOption("input", "video.mp4");
  r.setOption("fps", 4.5);
  r.setOption("klt.window", 21);
  r.setOption("klt.levels", std::size_t(4));
  r.setOption("klt.gpu", true);
  r.addStage("decode", 12.5);
  r.addStage("track", 30.0, 20.0, 3);
  r.addKernels({{"klt_track", 3, 19.5}, {"pyramid", 3, 0.5}});
  r.setCount("frames", 42);
  r.setMetric("mean_track_length", 3.25);
  r.setMetric("not_finite", std::nan(""));
  r.addListItem("unjoined_keyframes", {{"keyframe", std::int64_t{13}},
                                       {"name", std::string("0013.jpg")},
                                       {"reason", std::string("pnp")}});
  r.noteDevicePeakBytes(std::int64_t(3) << 30);

  auto dir = freshDir("ok");
  r.write(dir / "record.json");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  std::ifstream f(dir / "record.json");
  nlohmann::json j = nlohmann::json::parse(f);

  EXPECT_EQ(j["schema"], "vidmap.run_record");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["tool"]["name"], "vidmap");
  EXPECT_EQ(j["tool"]["version"], build::kVersion);
  EXPECT_EQ(j["tool"]["git_commit"], build::kGitCommit);
  EXPECT_EQ(j["command"], "vidmap test --fps 4");
  EXPECT_EQ(j["started_at"].get<std::string>().size(), 20u);  // 2026-01-01T00:00:00Z
  EXPECT_GE(j["wall_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["build"]["cuda"], build::kCuda);
  EXPECT_EQ(j["build"]["type"], build::kBuildType);
  EXPECT_EQ(j["build"]["openmp"], build::kOpenMp);
  EXPECT_EQ(j["machine"]["cpu_cores"], MachineInfo::current().cpuCores);
  EXPECT_FALSE(j["machine"]["hostname"].get<std::string>().empty());
  EXPECT_FALSE(j["machine"]["cpu_model"].get<std::string>().empty());
  EXPECT_GT(j["machine"]["memory_bytes"].get<std::int64_t>(), 0);
  ASSERT_TRUE(j["devices"].is_array());
  EXPECT_EQ(int(j["devices"].size()), gpu::deviceCount());
  if (gpu::deviceCount() == 0) {
    EXPECT_FALSE(j["cuda"]["no_device_reason"].get<std::string>().empty());
  } else {
    EXPECT_FALSE(j["devices"][0]["name"].get<std::string>().empty());
    EXPECT_GT(j["devices"][0]["memory_bytes"].get<std::int64_t>(), 0);
  }

  EXPECT_EQ(j["options"]["input"], "video.mp4");
  EXPECT_EQ(j["options"]["fps"], 4.5);
  EXPECT_EQ(j["options"]["klt"]["window"], 21);
  EXPECT_EQ(j["options"]["klt"]["levels"], 4);
  EXPECT_EQ(j["options"]["klt"]["gpu"], true);

  EXPECT_EQ(j["stages"]["decode"]["wall_ms"], 12.5);
  EXPECT_EQ(j["stages"]["decode"]["calls"], 1);
  // A stage that measured no GPU time says so (null), and has no GPU rows.
  EXPECT_TRUE(j["stages"]["decode"]["gpu_ms"].is_null());
  EXPECT_FALSE(j["stages"]["decode"].contains("kernels"));
  EXPECT_FALSE(j["stages"]["decode"].contains("device_bytes"));
  EXPECT_EQ(j["stages"]["track"]["gpu_ms"], 20.0);
  EXPECT_EQ(j["stages"]["track"]["calls"], 3);
  EXPECT_EQ(j["kernels"]["klt_track"]["launches"], 3);
  EXPECT_EQ(j["kernels"]["klt_track"]["gpu_ms"], 19.5);
  EXPECT_EQ(j["kernels"]["pyramid"]["gpu_ms"], 0.5);
  EXPECT_EQ(j["counts"]["frames"], 42);
  EXPECT_EQ(j["metrics"]["mean_track_length"], 3.25);
  EXPECT_TRUE(j["metrics"]["not_finite"].is_null());
  ASSERT_EQ(j["lists"]["unjoined_keyframes"].size(), 1u);
  EXPECT_EQ(j["lists"]["unjoined_keyframes"][0]["keyframe"], 13);
  EXPECT_EQ(j["lists"]["unjoined_keyframes"][0]["name"], "0013.jpg");
  EXPECT_EQ(j["lists"]["unjoined_keyframes"][0]["reason"], "pnp");
  EXPECT_EQ(j["peak_memory"]["device_bytes"], std::int64_t(3) << 30);
  EXPECT_GE(j["peak_memory"]["host_rss_bytes"].get<std::int64_t>(), std::int64_t(64) << 20);

  // Stages keep pipeline order in the text (ordered keys), decode before track.
  std::stringstream text;
  text << std::ifstream(dir / "record.json").rdbuf();
  EXPECT_LT(text.str().find("\"decode\""), text.str().find("\"track\""));
}

TEST(RunRecord, ACpuRunHasNoGpuFiguresThatWereNotMeasured) {
  RunRecord r;
  r.addStage("sift", 7.0);
  r.addStage("sift", 3.0);
  auto j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["stages"]["sift"]["wall_ms"], 10.0);
  EXPECT_EQ(j["stages"]["sift"]["calls"], 2);
  EXPECT_TRUE(j["stages"]["sift"]["gpu_ms"].is_null());
  EXPECT_TRUE(j["kernels"].is_object());
  EXPECT_TRUE(j["kernels"].empty());
  EXPECT_TRUE(j["peak_memory"]["device_bytes"].is_null());
  // A stage timed with zero GPU time that was measured keeps the zero.
  r.addStage("upload", 1.0, 0.0, 1, true);
  j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["stages"]["upload"]["gpu_ms"], 0.0);
}

TEST(RunRecord, KernelRowsAreCappedByGpuTimeAndTheRestSummed) {
  RunRecord r;
  const int n = RunRecord::kMaxRunKernelRows + 6;
  std::vector<gpu::KernelStat> ks;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    ks.push_back({"k" + std::to_string(i), 2, 1.0 + i});
    total += 1.0 + i;
  }
  r.addKernels(ks);
  auto j = nlohmann::json::parse(r.toJson());
  ASSERT_EQ(int(j["kernels"].size()), RunRecord::kMaxRunKernelRows);
  // The slowest kernels keep their rows; the 7 fastest (k0..k6) share one.
  EXPECT_EQ(j["kernels"]["k" + std::to_string(n - 1)]["gpu_ms"], double(n));
  EXPECT_FALSE(j["kernels"].contains("k6"));
  EXPECT_TRUE(j["kernels"].contains("k7"));
  const auto& rest = j["kernels"]["(7 others)"];
  EXPECT_EQ(rest["launches"], 14);
  EXPECT_DOUBLE_EQ(rest["gpu_ms"].get<double>(), 1 + 2 + 3 + 4 + 5 + 6 + 7);
  double sum = 0;
  for (const auto& [name, row] : j["kernels"].items()) sum += row["gpu_ms"].get<double>();
  EXPECT_DOUBLE_EQ(sum, total);
}

TEST(RunRecord, MissingFolderIsAClearErrorAndLeavesNothing) {
  auto dir = freshDir("missing");
  fs::path target = dir / "no_such_folder" / "record.json";
  RunRecord r;
  std::string msg = errorOf([&] { r.write(target); });
  EXPECT_NE(msg.find("cannot write the run record"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no_such_folder"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir / "no_such_folder"));
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(RunRecord, UnwritableTargetLeavesNoTemporary) {
  auto dir = freshDir("isdir");
  fs::create_directory(dir / "record.json");  // a folder where the file should go
  RunRecord r;
  EXPECT_THROW(r.write(dir / "record.json"), Error);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  EXPECT_TRUE(fs::is_directory(dir / "record.json"));
}

#else

TEST(RunRecord, WithoutJsonWritingIsAClearError) {
  RunRecord r;
  EXPECT_NE(errorOf([&] { r.toJson(); }).find("built without nlohmann-json"), std::string::npos);
  auto dir = freshDir("nojson");
  EXPECT_THROW(r.write(dir / "record.json"), Error);
  EXPECT_TRUE(fs::is_empty(dir));
}

#endif

}  // namespace
}  // namespace vidmap::io
