// Batch items: what counts as complete, the failure record, the item lock across processes
// (held, then taken over from a killed holder), and the runner's protocol -- driven with a
// stand-in for `vidmap` (a shell script that copies a complete model, fails with vidmap's
// error line, or crashes on a signal), so each outcome is known before the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/batch_item.h"
#include "vidmap/pipeline/batch_runner.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int lineCount(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

// A small valid COLMAP model (two images seeing two points) and the run record of a
// reconstruct run that wrote `models` of them.
void writeCompleteOutput(const fs::path& out, int models) {
  io::ColmapModel m;
  io::ColmapCamera cam;
  cam.id = 1;
  cam.model = io::CameraModelId::kPinhole;
  cam.width = 64;
  cam.height = 48;
  cam.params = {60, 60, 32, 24};
  m.cameras[1] = cam;
  for (std::uint32_t i = 1; i <= 2; ++i) {
    io::ColmapImage im;
    im.id = i;
    im.camera_id = 1;
    im.name = "frame" + std::to_string(i) + ".png";
    im.tvec = {0.1 * i, 0, 0};
    for (int k = 0; k < 2; ++k) {
      io::ColmapPoint2D p;
      p.x = 10 + 20 * k;
      p.y = 20;
      p.point3d_id = static_cast<std::uint64_t>(k + 1);
      im.points2d.push_back(p);
    }
    m.images[i] = im;
  }
  for (std::uint64_t k = 1; k <= 2; ++k) {
    io::ColmapPoint3D p;
    p.id = k;
    p.xyz = {0.2 * static_cast<double>(k), 0, 3};
    p.track = {{1, static_cast<std::uint32_t>(k - 1)}, {2, static_cast<std::uint32_t>(k - 1)}};
    m.points3d[k] = p;
  }
  for (int i = 0; i < models; ++i)
    io::writeColmapModel(m, out / "sparse" / std::to_string(i), io::ColmapFormat::kBinary);
  io::RunRecord r;
  r.setCommand("vidmap reconstruct in -o " + out.string());
  r.setOption("camera", "SIMPLE_RADIAL");
  r.setCount("frames", 10);
  r.setCount("registered_keyframes", 2);
  r.setCount("localized_frames", 1);
  r.setCount("models", models);
  r.setCount("landmarks", 2);
  r.setMetric("self_calibrated_focal_px", 61.5);
  r.write(out / "run.json");
}

class BatchRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(VIDMAP_HAVE_JSON)
    GTEST_SKIP() << "built without nlohmann-json (run.json cannot be read)";
#endif
    clearStop();
    dir_ = testFolder("batch_runner");
    fs::create_directories(dir_ / "in");
    writeCompleteOutput(dir_ / "template", 1);
    // The stand-in for vidmap: `fake reconstruct INPUT -o OUTPUT ARGS...`. It counts its runs
    // per input (INPUT.runs), records CUDA_VISIBLE_DEVICES, and acts by the input's name.
    fake_ = dir_ / "fake-vidmap";
    std::ofstream(fake_)
        << "#!/bin/sh\n"
           "[ \"$1\" = reconstruct ] && [ \"$3\" = -o ] || exit 99\n"
           "echo run >> \"$2.runs\"\n"
           "echo $$ > \"$2.pid\"\n"
           "echo \"${CUDA_VISIBLE_DEVICES-unset}\" > \"$2.gpu\"\n"
           "case \"$2\" in\n"
           "  *good*|*fixed*) echo 'progress...'; mkdir -p \"$4\"\n"
           "    cp -r " +
               (dir_ / "template").string() +
               "/. \"$4\"/ ;;\n"
               "  *bad*) echo 'decoding' ; echo \"vidmap: error: cannot decode $2\" >&2\n"
               "    [ -e \"$2.fixme\" ] && mv \"$2\" \"$2.fixed\"; exit 1 ;;\n"
               "  *crash*) kill -SEGV $$ ;;\n"
               "  *slow*) exec sleep 30 ;;\n"
               "  *liar*) exit 0 ;;\n"
               "esac\n";
    fs::permissions(fake_, fs::perms::owner_all);
  }
  void TearDown() override {
    clearStop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  BatchItem item(const std::string& name, int index = 0) {
    BatchItem it;
    it.index = index;
    it.line = index + 2;
    it.input = dir_ / "in" / name;
    std::ofstream(it.input) << "video";
    it.output = dir_ / "out" / name;
    it.args = {"--fps", "2"};
    return it;
  }
  RunnerOptions options() const {
    RunnerOptions o;
    o.program = fake_;
    return o;
  }
  fs::path dir_, fake_;
};

TEST_F(BatchRunnerTest, CompleteMeansAValidRecordAndEveryModel) {
  std::string why;
  const fs::path out = dir_ / "c";
  EXPECT_FALSE(isCompleteOutput(out, true, &why));
  EXPECT_EQ(why, "no output folder");
  writeCompleteOutput(out, 2);
  EXPECT_TRUE(isCompleteOutput(out, true, &why)) << why;
  // A model folder fewer than the record says.
  fs::remove_all(out / "sparse" / "1");
  EXPECT_FALSE(isCompleteOutput(out, false, &why));
  EXPECT_EQ(why, "run.json records 2 models, sparse/ holds 1");
  // A truncated model file passes the shallow check and fails the deep one.
  writeCompleteOutput(out, 1);
  fs::resize_file(out / "sparse/0/images.bin", fs::file_size(out / "sparse/0/images.bin") / 2);
  EXPECT_TRUE(isCompleteOutput(out, false, &why)) << why;
  EXPECT_FALSE(isCompleteOutput(out, true, &why));
  EXPECT_NE(why.find("unreadable"), std::string::npos) << why;
  // A missing file, a damaged or foreign run record.
  writeCompleteOutput(out, 1);
  fs::remove(out / "sparse/0/points3D.bin");
  EXPECT_FALSE(isCompleteOutput(out, false, &why));
  writeCompleteOutput(out, 1);
  std::ofstream(out / "run.json") << "{\"schema\": \"vidmap.run_record\", \"counts\": {";
  EXPECT_FALSE(isCompleteOutput(out, false, &why));
  EXPECT_NE(why.find("not valid JSON"), std::string::npos) << why;
  std::ofstream(out / "run.json") << "{\"schema\": \"vidmap.run_record\", \"command\": "
                                     "\"vidmap track x\", \"counts\": {\"models\": 1}}";
  EXPECT_FALSE(isCompleteOutput(out, false, &why));
  EXPECT_EQ(why, "run.json is not the record of a vidmap reconstruct run");
}

TEST_F(BatchRunnerTest, FailureRecordRoundTrips) {
  FailureRecord f;
  f.command = "vidmap reconstruct 'a b' -o out";
  f.exitCode = 139;
  f.message = "killed by signal 11\nlast \"line\"";
  f.time = "2026-12-01T00:00:00Z";
  f.seconds = 1.25;
  f.attempts = 3;
  f.host = "node1";
  writeFailure(dir_ / "f", f);
  const auto back = readFailure(dir_ / "f");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->command, f.command);
  EXPECT_EQ(back->exitCode, 139);
  EXPECT_EQ(back->message, f.message);
  EXPECT_EQ(back->time, f.time);
  EXPECT_DOUBLE_EQ(back->seconds, 1.25);
  EXPECT_EQ(back->attempts, 3);
  EXPECT_EQ(back->host, "node1");
  EXPECT_FALSE(readFailure(dir_ / "nothing"));
}

// The lock is held by another process: refused, with its pid; once that process is killed
// (no clean-up), the next one takes it over.
TEST_F(BatchRunnerTest, LockIsExclusiveAndTakenOverFromADeadHolder) {
  const fs::path out = dir_ / "out" / "locked";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ItemLock lock(out);
    const char c = lock.held() ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  {
    ItemLock second(out);
    EXPECT_FALSE(second.held());
    EXPECT_EQ(second.holderPid(), child);
    EXPECT_EQ(second.holder().substr(0, second.holder().find(' ')), std::to_string(child));
    EXPECT_EQ(ItemLock::probe(out), child);
    const ItemResult r = runItem(item("locked"), options());
    EXPECT_EQ(r.outcome, ItemOutcome::kBusy);
    EXPECT_NE(r.message.find(std::to_string(child)), std::string::npos) << r.message;
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(fs::exists(lockPath(out)));  // the dead holder left its file
  EXPECT_EQ(ItemLock::probe(out), 0);
  {
    ItemLock third(out);
    EXPECT_TRUE(third.held());
    EXPECT_EQ(readText(lockPath(out)).substr(0, readText(lockPath(out)).find(' ')),
              std::to_string(getpid()));
  }
  EXPECT_FALSE(fs::exists(lockPath(out)));  // released and removed
  close(ready[0]);
  close(ready[1]);
}

TEST_F(BatchRunnerTest, DoneOnceThenSkipped) {
  const BatchItem it = item("good.mp4");
  ItemResult r = runItem(it, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kDone) << r.message;
  EXPECT_TRUE(isCompleteOutput(it.output, true));
  const auto mtime = fs::last_write_time(it.output / "run.json");
  r = runItem(it, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kSkipped);
  EXPECT_EQ(lineCount(it.input.string() + ".runs"), 1);
  EXPECT_EQ(fs::last_write_time(it.output / "run.json"), mtime);
  EXPECT_FALSE(fs::exists(lockPath(it.output)));
  EXPECT_EQ(inspectItem(it).state, ItemState::kDone);
  EXPECT_EQ(inspectItem(it).framesPosed, 3);
}

TEST_F(BatchRunnerTest, FailureIsRecordedRetriedAndClearedOnSuccess) {
  BatchItem it = item("bad.mp4");
  ItemResult r = runItem(it, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kFailed);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.message, "error: cannot decode " + it.input.string());
  auto f = readFailure(it.output);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->exitCode, 1);
  EXPECT_EQ(f->message, r.message);
  EXPECT_EQ(f->attempts, 1);
  EXPECT_NE(f->command.find("reconstruct " + it.input.string() + " -o " + it.output.string() +
                            " --fps 2"),
            std::string::npos)
      << f->command;
  // Only failed.json: no model, nothing else.
  EXPECT_EQ(std::distance(fs::directory_iterator(it.output), fs::directory_iterator()), 1);
  EXPECT_EQ(inspectItem(it).state, ItemState::kFailed);
  r = runItem(it, options());
  EXPECT_EQ(readFailure(it.output)->attempts, 2);
  // The input is repaired (the stand-in renames it on this run): the next retry succeeds and
  // the stale failure record is gone.
  std::ofstream(it.input.string() + ".fixme") << "";
  runItem(it, options());
  it.input = it.input.string() + ".fixed";
  r = runItem(it, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kDone) << r.message;
  EXPECT_FALSE(fs::exists(failurePath(it.output)));
  EXPECT_EQ(inspectItem(it).state, ItemState::kDone);
}

TEST_F(BatchRunnerTest, CrashAndFalseSuccessAreFailures) {
  const BatchItem crash = item("crash.mp4");
  ItemResult r = runItem(crash, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kFailed);
  EXPECT_EQ(r.exitCode, 128 + SIGSEGV);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
  EXPECT_EQ(readFailure(crash.output)->exitCode, 128 + SIGSEGV);
  // A temporary folder left by a killed reconstruct is removed on the next attempt.
  fs::create_directories(crash.output.parent_path() / ".crash.mp4.tmp-123-0");
  runItem(crash, options());
  EXPECT_FALSE(fs::exists(crash.output.parent_path() / ".crash.mp4.tmp-123-0"));
  const BatchItem liar = item("liar.mp4");
  r = runItem(liar, options());
  EXPECT_EQ(r.outcome, ItemOutcome::kFailed);
  EXPECT_NE(r.message.find("not a complete model: no output folder"), std::string::npos);
}

TEST_F(BatchRunnerTest, StopInterruptsWithoutRecordingAFailure) {
  const BatchItem slow = item("slow.mp4");
  std::thread stopper([&] {
    // Wait until the child has started (it writes its run counter first).
    for (int i = 0; i < 500 && !fs::exists(slow.input.string() + ".gpu"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    requestStop(SIGTERM);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const ItemResult r = runItem(slow, options());
  stopper.join();
  EXPECT_EQ(r.outcome, ItemOutcome::kInterrupted) << r.message;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  EXPECT_FALSE(fs::exists(failurePath(slow.output)));
  EXPECT_EQ(inspectItem(slow).state, ItemState::kPending);
  // Once stopped, nothing new starts.
  EXPECT_EQ(runItem(item("good.mp4"), options()).outcome, ItemOutcome::kInterrupted);
  EXPECT_FALSE(fs::exists(dir_ / "in" / "good.mp4.runs"));
}

// A batch process killed without a chance to clean up (SIGKILL) takes its reconstruct child
// with it, so no item keeps running without its lock.
TEST_F(BatchRunnerTest, ChildDoesNotOutliveTheBatchProcess) {
  const BatchItem slow = item("slow.mp4");
  const pid_t batch = fork();
  ASSERT_GE(batch, 0);
  if (batch == 0) {
    runItem(slow, options());
    _exit(0);
  }
  const fs::path pidFile = slow.input.string() + ".gpu";  // written after the pid
  for (int i = 0; i < 500 && !fs::exists(pidFile); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int child = std::stoi(readText(slow.input.string() + ".pid"));
  auto alive = [](int pid) {
    if (kill(pid, 0) != 0) return false;
    // A zombie waiting for a reaper is not alive.
    const std::string stat = readText("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t paren = stat.rfind(')');
    return paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] != 'Z';
  };
  EXPECT_TRUE(alive(child));
  kill(batch, SIGKILL);
  waitpid(batch, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = !alive(child);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the reconstruct child " << child << " outlived its batch process";
  if (!gone) kill(child, SIGKILL);
  EXPECT_EQ(ItemLock::probe(slow.output), 0);
}

TEST_F(BatchRunnerTest, RunAllSpreadsItemsOverTheGpusAndSummarises) {
  BatchManifest m;
  for (const char* name : {"good1.mp4", "bad.mp4", "good2.mp4", "crash.mp4", "good3.mp4"})
    m.items.push_back(item(name, static_cast<int>(m.items.size())));
  RunAllOptions o;
  o.runner = options();
  o.jobs = 2;
  o.gpus = {"3", "5"};
  std::vector<int> seen;
  RunAllResult r =
      runAll(m, o, [&](const BatchItem& it, const ItemResult&) { seen.push_back(it.index); });
  EXPECT_EQ(r.done, 3);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_EQ(seen.size(), 5u);
  std::set<std::string> gpus;
  for (const BatchItem& it : m.items) gpus.insert(readText(it.input.string() + ".gpu"));
  EXPECT_TRUE(gpus.count("3\n") || gpus.count("5\n"));
  for (const std::string& g : gpus) EXPECT_TRUE(g == "3\n" || g == "5\n") << g;

  // The summary reads the same states back.
  const std::vector<SummaryRow> rows = summarize(m);
  ASSERT_EQ(rows.size(), 5u);
  const char* expected[] = {"done", "failed", "done", "failed", "done"};
  for (int i = 0; i < 5; ++i) EXPECT_STREQ(toString(rows[i].status.state), expected[i]);
  const std::string csv = summaryCsv(rows);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  EXPECT_NE(csv.find(",done,"), std::string::npos);
  EXPECT_NE(csv.find("error: cannot decode"), std::string::npos);
  const std::string json = summaryJson(rows);
  EXPECT_NE(json.find("\"done\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"failed\": 2"), std::string::npos) << json;

  // Again: the complete items are skipped, the failed ones retried; CPU workers see no GPU.
  o.gpus.clear();
  o.hideGpus = true;
  r = runAll(m, o);
  EXPECT_EQ(r.skipped, 3);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(lineCount(m.items[0].input.string() + ".runs"), 1);
  EXPECT_EQ(lineCount(m.items[1].input.string() + ".runs"), 2);
  EXPECT_EQ(readText(m.items[1].input.string() + ".gpu"), "\n");
  EXPECT_EQ(readFailure(m.items[1].output)->attempts, 2);
}

TEST(BatchGpus, VisibleGpusFollowCudaVisibleDevices) {
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string keep = saved ? saved : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(visibleGpus(2), (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(visibleGpus(0).empty());
  setenv("CUDA_VISIBLE_DEVICES", "2,5", 1);
  EXPECT_EQ(visibleGpus(2), (std::vector<std::string>{"2", "5"}));
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_TRUE(visibleGpus(0).empty());
  if (saved)
    setenv("CUDA_VISIBLE_DEVICES", keep.c_str(), 1);
  else
    unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
}  // namespace vidmap::pipeline
