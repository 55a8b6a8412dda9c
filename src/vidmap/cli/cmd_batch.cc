// `vidmap batch MANIFEST`: many reconstructions from a manifest (vidmap/pipeline/
// batch_manifest.h) -- one item (--index I, a cluster task), all of them on this machine
// (--all: one worker per GPU, or --jobs CPU workers), or a Slurm job array script / a
// Kubernetes Indexed Job that runs one item per task (--slurm, --kubernetes).
// `vidmap batch-summary MANIFEST`: the state of every item in one table. See docs/cluster.md.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/device.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/pipeline/batch_item.h"
#include "vidmap/pipeline/batch_manifest.h"
#include "vidmap/pipeline/batch_runner.h"
#include "vidmap/pipeline/batch_scripts.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/sfm/camera.h"

namespace vidmap::cli {

namespace fs = std::filesystem;
using namespace vidmap::pipeline;

namespace {

// An item's options, parsed by the reconstruct command's own parser (without running it),
// then the values the parser cannot check (camera, device, ranges).
void validateItem(const BatchItem& item) {
  CLI::App app;
  addReconstructCommand(app);
  CLI::App* cmd = app.get_subcommand("reconstruct");
  cmd->callback([] {});
  std::vector<std::string> argv{"reconstruct", item.input.string(), "-o", item.output.string()};
  argv.insert(argv.end(), item.args.begin(), item.args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    throw Error(std::string("options: ") + e.what());
  }
  pipeline::ReconstructOptions o;
  auto given = [&](const char* name) { return cmd->get_option(name)->count() > 0; };
  if (given("--camera"))
    o.camera = sfm::CameraSpec::parse(cmd->get_option("--camera")->as<std::string>());
  if (given("--device")) o.device = parseDevice(cmd->get_option("--device")->as<std::string>());
  if (given("--fps")) o.fps = cmd->get_option("--fps")->as<double>();
  if (given("--width")) o.width = cmd->get_option("--width")->as<int>();
  if (given("--max-features"))
    o.frontend.sift.maxFeatures = cmd->get_option("--max-features")->as<int>();
  try {
    o.check();
  } catch (const Error& e) {
    throw Error(std::string("options: ") + e.what());
  }
}

BatchManifest loadManifest(const std::string& path, bool checkInputs, bool checkOptions = true) {
  ManifestOptions mo;
  mo.requireInputs = checkInputs;
  if (checkOptions) mo.validate = validateItem;
  return readManifest(path, mo);
}

fs::path selfExe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the vidmap executable: " + ec.message());
  return p;
}

void onStopSignal(int sig) { requestStop(sig); }

void installStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

void writeOrPrint(const std::string& text, const std::string& out, bool executable,
                  const std::string& what) {
  if (out.empty() || out == "-") {
    std::fputs(text.c_str(), stdout);
    return;
  }
  io::writeTextAtomically(out, text);
  if (executable) ::chmod(out.c_str(), 0755);
  std::fprintf(stderr, "wrote %s: %s\n", out.c_str(), what.c_str());
}

std::string fixed(double v, int d) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", d, v);
  return b;
}

std::string summaryTable(const std::vector<SummaryRow>& rows) {
  std::string s = "index  status   seconds  posed/frames  models  output  (message)\n";
  for (const SummaryRow& r : rows) {
    const ItemStatus& st = r.status;
    char line[512];
    const bool done = st.state == ItemState::kDone;
    const double secs = done ? st.wallSeconds : st.failure ? st.failure->seconds : 0;
    std::snprintf(
        line, sizeof line, "%5d  %-7s  %7s  %12s  %6s  ", r.item->index, toString(st.state),
        secs > 0 ? fixed(secs, 1).c_str() : "-",
        done ? (std::to_string(st.framesPosed) + "/" + std::to_string(st.frames)).c_str() : "-",
        done ? std::to_string(st.models).c_str() : "-");
    std::string msg = st.detail;
    for (const std::string& w : st.warnings) msg += (msg.empty() ? "" : "; ") + w;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    s += line + r.item->output.string() + (msg.empty() ? "" : "  (" + msg + ")") + "\n";
  }
  return s;
}

}  // namespace

void addBatchCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "batch",
      "Reconstruct the items of a manifest: one (--index), all here (--all), or write a Slurm "
      "array script (--slurm) / Kubernetes Indexed Job (--kubernetes)");
  struct Args {
    std::string manifest, out;
    std::optional<int> index;
    bool all = false, slurm = false, kube = false, noGpu = false, shallow = false;
    bool noCheckInputs = false;
    int jobs = 0;
    std::string vidmap;
    int gpusPerTask = -1, cpusPerTask = 0, maxParallel = 0, backoffLimit = -1;
    std::string mem, time, partition, account, qos, jobName, logDir;
    std::vector<std::string> sbatchArgs;
    std::string image, pvc, hostPath, mountPath, nameSpace;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("MANIFEST", a->manifest, "CSV (input,output[,options...]) or JSON lines")
      ->required();
  auto* modes = cmd->add_option_group("mode", "What to do (one of them)");
  modes->add_option("--index", a->index, "Run item I (0-based; a cluster task's index)");
  modes->add_flag("--all", a->all,
                  "Run every item here: one worker per visible GPU, or --jobs CPU workers");
  modes->add_flag("--slurm", a->slurm, "Write an sbatch job array script (one task per item)");
  modes->add_flag("--kubernetes", a->kube, "Write a Kubernetes Indexed Job (one pod per item)");
  modes->require_option(1);
  cmd->add_option("--jobs", a->jobs,
                  "--all: items at once (default: the visible GPUs, or 1 without a GPU)");
  cmd->add_flag("--no-gpu", a->noGpu, "--all: hide the GPUs from the items (CPU workers)");
  cmd->add_flag("--shallow-check", a->shallow,
                "Call an output complete from its files and run.json, without reading the "
                "models back");
  cmd->add_flag("--no-check-inputs", a->noCheckInputs,
                "Do not require the inputs to exist here (scripts written on a login node)");
  cmd->add_option("-o,--output", a->out,
                  "--slurm/--kubernetes: the file to write (default: stdout)");
  cmd->add_option("--vidmap", a->vidmap,
                  "The vidmap binary the tasks run (default: this one's absolute path for "
                  "Slurm, 'vidmap' on the image's PATH for Kubernetes)");
  cmd->add_option("--gpus-per-task", a->gpusPerTask,
                  "GPUs of each task (Slurm --gres=gpu:K, Kubernetes nvidia.com/gpu; default 1)");
  cmd->add_option("--cpus-per-task", a->cpusPerTask, "CPUs of each task (also OMP_NUM_THREADS)");
  cmd->add_option("--mem", a->mem, "Memory of each task (Slurm: 16G; Kubernetes: 16Gi)");
  cmd->add_option("--time", a->time, "Slurm: time limit of each task (e.g. 02:00:00)");
  cmd->add_option("--partition", a->partition, "Slurm: partition");
  cmd->add_option("--account", a->account, "Slurm: account");
  cmd->add_option("--qos", a->qos, "Slurm: quality of service");
  cmd->add_option("--max-parallel", a->maxParallel,
                  "Tasks running at once (Slurm --array=...%M; Kubernetes parallelism)");
  cmd->add_option("--job-name", a->jobName, "Job name (default: vidmap-<manifest name>)");
  cmd->add_option("--log-dir", a->logDir,
                  "Slurm: folder of the per-task logs (default: logs/ beside the manifest)");
  cmd->add_option("--sbatch-arg", a->sbatchArgs,
                  "Slurm: another #SBATCH option, e.g. --sbatch-arg=--constraint=h100 "
                  "(repeatable)");
  cmd->add_option("--image", a->image, "Kubernetes: the container image holding vidmap");
  cmd->add_option("--pvc", a->pvc, "Kubernetes: a PersistentVolumeClaim holding the data");
  cmd->add_option("--host-path", a->hostPath,
                  "Kubernetes: a host folder holding the data (default: the manifest's folder)");
  cmd->add_option("--mount-path", a->mountPath,
                  "Kubernetes: where the data volume is mounted (default: the same path)");
  cmd->add_option("--namespace", a->nameSpace, "Kubernetes: namespace");
  cmd->add_option("--backoff-limit", a->backoffLimit,
                  "Kubernetes: failed pods before the Job stops (default: the item count)");

  cmd->callback([a] {
    const bool deep = !a->shallow;
    std::vector<std::string> itemArgs;
    if (a->shallow) itemArgs.push_back("--shallow-check");
    if (a->slurm || a->kube) {
      const BatchManifest m = loadManifest(a->manifest, !a->noCheckInputs);
      if (a->slurm) {
        SlurmOptions o;
        o.manifest = m.path;
        o.program = a->vidmap.empty() ? selfExe() : fs::absolute(a->vidmap).lexically_normal();
        o.items = static_cast<int>(m.items.size());
        o.maxParallel = a->maxParallel;
        o.gpusPerTask = a->gpusPerTask < 0 ? 1 : a->gpusPerTask;
        o.cpusPerTask = a->cpusPerTask;
        o.mem = a->mem;
        o.time = a->time;
        o.partition = a->partition;
        o.account = a->account;
        o.qos = a->qos;
        o.jobName = a->jobName;
        o.logDir = a->logDir.empty() ? m.path.parent_path() / "logs"
                                     : fs::absolute(a->logDir).lexically_normal();
        o.extra = a->sbatchArgs;
        o.itemArgs = itemArgs;
        const std::string script = slurmScript(o);
        // sbatch does not create the log folder; a task whose log cannot be opened fails
        // without a word.
        std::error_code ec;
        fs::create_directories(o.logDir, ec);
        if (ec)
          throw Error("cannot create the log folder " + o.logDir.string() + ": " + ec.message());
        writeOrPrint(script, a->out, true, "submit with: sbatch " + a->out);
      } else {
        KubernetesOptions o;
        o.manifest = m.path;
        if (!a->vidmap.empty()) o.program = a->vidmap;
        o.image = a->image;
        o.name = a->jobName;
        o.nameSpace = a->nameSpace;
        o.items = static_cast<int>(m.items.size());
        o.parallelism = a->maxParallel;
        o.gpusPerTask = a->gpusPerTask < 0 ? 1 : a->gpusPerTask;
        o.cpusPerTask = a->cpusPerTask;
        o.mem = a->mem;
        o.backoffLimit = a->backoffLimit;
        o.pvc = a->pvc;
        if (!a->hostPath.empty()) o.hostPath = fs::absolute(a->hostPath).lexically_normal();
        if (!a->mountPath.empty()) o.mountPath = a->mountPath;
        o.itemArgs = itemArgs;
        writeOrPrint(kubernetesJob(o), a->out, false, "apply with: kubectl apply -f " + a->out);
      }
      return;
    }

    installStopHandlers();
    if (a->index) {
      // A task checks its own item's input when it runs it; the others need not be mounted.
      const BatchManifest m = loadManifest(a->manifest, false);
      const int n = static_cast<int>(m.items.size());
      if (*a->index < 0 || *a->index >= n)
        throw Error("--index " + std::to_string(*a->index) + ": the manifest has " +
                    std::to_string(n) + " items (0.." + std::to_string(n - 1) + ")");
      const BatchItem& item = m.items[*a->index];
      RunnerOptions ro;
      ro.deepCheck = deep;
      std::fprintf(stderr, "batch: item %d of %s (line %d): %s -> %s\n", item.index, m.path.c_str(),
                   item.line, item.input.c_str(), item.output.c_str());
      std::fflush(stderr);
      const ItemResult r = runItem(item, ro);
      std::fprintf(stderr, "batch: item %d %s%s%s\n", item.index, toString(r.outcome),
                   r.seconds > 0 ? (" in " + fixed(r.seconds, 1) + " s").c_str() : "",
                   r.message.empty() ? "" : (": " + r.message).c_str());
      switch (r.outcome) {
        case ItemOutcome::kDone:
        case ItemOutcome::kSkipped:
          return;
        case ItemOutcome::kFailed:
          std::exit(1);
        case ItemOutcome::kBusy:
          std::exit(75);  // EX_TEMPFAIL: try again later
        case ItemOutcome::kInterrupted:
          std::exit(143);
      }
      return;
    }

    // --all
    const BatchManifest m = loadManifest(a->manifest, true);
    RunAllOptions o;
    o.runner.deepCheck = deep;
    const int devices = a->noGpu ? 0 : gpu::deviceCount();
    if (!a->noGpu) o.gpus = visibleGpus(devices);
    o.hideGpus = a->noGpu && gpu::deviceCount() > 0;
    o.jobs = a->jobs > 0 ? a->jobs : std::max<int>(1, static_cast<int>(o.gpus.size()));
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    o.runner.ompThreads = std::max(1, cores / o.jobs);
    std::string plan = std::to_string(o.jobs) + " worker" + (o.jobs > 1 ? "s" : "");
    if (!o.gpus.empty()) {
      plan += " on GPU";
      for (std::size_t i = 0; i < o.gpus.size(); ++i) plan += (i ? "," : " ") + o.gpus[i];
    } else {
      plan += " on the CPU (" + std::to_string(o.runner.ompThreads) + " threads each)";
    }
    std::fprintf(stderr, "batch: %zu items of %s, %s\n", m.items.size(), m.path.c_str(),
                 plan.c_str());
    std::fflush(stderr);
    int finished = 0;
    const RunAllResult r = runAll(m, o, [&](const BatchItem& item, const ItemResult& res) {
      ++finished;
      std::printf("[%d/%zu] %-11s item %d %s%s%s\n", finished, m.items.size(),
                  toString(res.outcome), item.index, item.output.c_str(),
                  res.seconds > 0 ? (" (" + fixed(res.seconds, 1) + " s)").c_str() : "",
                  res.outcome == ItemOutcome::kFailed ? (": " + res.message).c_str() : "");
      std::fflush(stdout);
    });
    const int ran = r.done + r.failed;
    std::printf(
        "batch: %zu items: %d done, %d skipped (complete), %d failed, %d busy, %d interrupted "
        "in %.1f s%s\n",
        m.items.size(), r.done, r.skipped, r.failed, r.busy, r.interrupted, r.seconds,
        ran > 0 ? (", " + fixed(ran / (r.seconds / 60), 2) + " items/min").c_str() : "");
    if (r.interrupted > 0) std::exit(143);
    if (r.failed > 0 || r.busy > 0) std::exit(1);
  });

  auto* sum = app.add_subcommand("batch-summary",
                                 "The state of every item of a batch manifest: done, failed, "
                                 "running, pending, with times, frames posed and warnings");
  struct SumArgs {
    std::string manifest, format = "table", out;
    bool deep = false;
  };
  auto s = std::make_shared<SumArgs>();
  sum->add_option("MANIFEST", s->manifest, "The manifest given to vidmap batch")->required();
  sum->add_option("--format", s->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sum->add_option("-o,--output", s->out, "Write to this file (default: stdout)");
  sum->add_flag("--deep", s->deep, "Read every model back before calling an item done");
  sum->callback([s] {
    const BatchManifest m = loadManifest(s->manifest, false, false);
    const std::vector<SummaryRow> rows = summarize(m, s->deep);
    std::string text = s->format == "csv"    ? summaryCsv(rows)
                       : s->format == "json" ? summaryJson(rows)
                                             : summaryTable(rows);
    int counts[4] = {0, 0, 0, 0};
    for (const SummaryRow& r : rows) ++counts[static_cast<int>(r.status.state)];
    if (s->out.empty() || s->out == "-")
      std::fputs(text.c_str(), stdout);
    else
      io::writeTextAtomically(s->out, text);
    std::fflush(stdout);
    std::fprintf(stderr, "batch-summary: %zu items: %d done, %d failed, %d running, %d pending\n",
                 rows.size(), counts[static_cast<int>(ItemState::kDone)],
                 counts[static_cast<int>(ItemState::kFailed)],
                 counts[static_cast<int>(ItemState::kRunning)],
                 counts[static_cast<int>(ItemState::kPending)]);
  });
}

}  // namespace vidmap::cli
