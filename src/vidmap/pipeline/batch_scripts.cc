#include "vidmap/pipeline/batch_scripts.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "vidmap/core/error.h"
#include "vidmap/pipeline/batch_item.h"
#include "vidmap/pipeline/batch_manifest.h"

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

// Slurm reads #SBATCH values up to the end of the line: no line breaks, and no spaces where a
// value is a single word.
void requireWord(const std::string& value, const std::string& field) {
  for (char c : value)
    if (std::isspace(static_cast<unsigned char>(c)))
      throw Error(field + " must be one word, got '" + value + "'");
}

// A YAML double-quoted scalar (JSON's escapes are valid YAML).
std::string yamlString(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        q += "\\\"";
        break;
      case '\\':
        q += "\\\\";
        break;
      case '\n':
        q += "\\n";
        break;
      case '\t':
        q += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          q += buf;
        } else {
          q += c;
        }
    }
  }
  return q + "\"";
}

bool isInside(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin(), o = outer.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

std::string dnsLabel(const std::string& name) {
  std::string s;
  for (char c : name) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)))
      s += l;
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  if (s.size() > 63) s.resize(63);
  while (!s.empty() && s.back() == '-') s.pop_back();
  if (s.empty()) s = "vidmap";
  return s;
}

void SlurmOptions::check() const {
  require(manifest.is_absolute(), "the manifest path must be absolute, got " + manifest.string());
  require(program.is_absolute(), "the vidmap path must be absolute, got " + program.string());
  require(items >= 1, "the manifest has no items");
  require(maxParallel >= 0,
          "--max-parallel must be 0 (no limit) or more, got " + std::to_string(maxParallel));
  require(gpusPerTask >= 0 && gpusPerTask <= 64,
          "--gpus-per-task must be in [0, 64], got " + std::to_string(gpusPerTask));
  require(cpusPerTask >= 0 && cpusPerTask <= 4096,
          "--cpus-per-task must be in [0, 4096], got " + std::to_string(cpusPerTask));
  require(logDir.is_absolute(), "the log folder must be absolute, got " + logDir.string());
  requireWord(mem, "--mem");
  requireWord(time, "--time");
  requireWord(partition, "--partition");
  requireWord(account, "--account");
  requireWord(qos, "--qos");
  requireWord(jobName, "the job name");
  for (const std::string& e : extra) {
    require(e.rfind("--", 0) == 0 || (e.size() > 1 && e[0] == '-'),
            "an extra sbatch option must start with '-', got '" + e + "'");
    require(e.find('\n') == std::string::npos, "an extra sbatch option has a line break");
  }
  for (const fs::path& p : {manifest, program, logDir})
    require(p.string().find('\n') == std::string::npos, "a path has a line break: " + p.string());
}

std::string slurmScript(const SlurmOptions& o) {
  o.check();
  const std::string name =
      o.jobName.empty() ? dnsLabel("vidmap-" + o.manifest.stem().string()) : o.jobName;
  std::string array = o.items == 1 ? "0" : "0-" + std::to_string(o.items - 1);
  if (o.maxParallel > 0) array += "%" + std::to_string(o.maxParallel);
  std::string s;
  s += "#!/bin/bash\n";
  s += "# Written by `vidmap batch --slurm` on " + utcNowIso() + ": one array task per item of\n";
  s += "#   " + o.manifest.string() + " (" + std::to_string(o.items) + " items).\n";
  s += "# Submit with `sbatch` (again after a cancellation or a failure: complete items are\n";
  s += "# skipped); follow with `vidmap batch-summary " + shellQuote(o.manifest.string()) + "`.\n";
  if (o.items > 1000)
    s += "# Note: the array is larger than Slurm's default MaxArraySize (1001); ask the\n"
         "# administrator, or split the manifest.\n";
  s += "#SBATCH --job-name=" + name + "\n";
  s += "#SBATCH --array=" + array + "\n";
  s += "#SBATCH --ntasks=1\n";
  s += "#SBATCH --output=" + (o.logDir / "%x_%A_%a.log").string() + "\n";
  if (o.cpusPerTask > 0) s += "#SBATCH --cpus-per-task=" + std::to_string(o.cpusPerTask) + "\n";
  if (o.gpusPerTask > 0) s += "#SBATCH --gres=gpu:" + std::to_string(o.gpusPerTask) + "\n";
  if (!o.mem.empty()) s += "#SBATCH --mem=" + o.mem + "\n";
  if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty()) s += "#SBATCH --account=" + o.account + "\n";
  if (!o.qos.empty()) s += "#SBATCH --qos=" + o.qos + "\n";
  for (const std::string& e : o.extra) s += "#SBATCH " + e + "\n";
  s += "set -u\n";
  s += "# OpenMP threads: the CPUs Slurm gave the task.\n";
  s += "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-$(nproc)}\"\n";
  s += "export OMP_WAIT_POLICY=\"${OMP_WAIT_POLICY:-passive}\"\n";
  std::string cmd = "exec " + shellQuote(o.program.string()) + " batch " +
                    shellQuote(o.manifest.string()) + " --index \"$SLURM_ARRAY_TASK_ID\"";
  for (const std::string& a : o.itemArgs) cmd += " " + shellQuote(a);
  s += cmd + "\n";
  return s;
}

void KubernetesOptions::check() const {
  require(manifest.is_absolute(), "the manifest path must be absolute, got " + manifest.string());
  require(!image.empty(), "--image (the container image holding vidmap) is required");
  require(!program.empty(), "the vidmap program in the image is empty");
  require(items >= 1, "the manifest has no items");
  require(parallelism >= 0,
          "--max-parallel must be 0 (default) or more, got " + std::to_string(parallelism));
  require(gpusPerTask >= 0 && gpusPerTask <= 64,
          "--gpus-per-task must be in [0, 64], got " + std::to_string(gpusPerTask));
  require(cpusPerTask >= 0, "--cpus-per-task must be 0 or more");
  require(backoffLimit >= -1, "--backoff-limit must be -1 (default) or more");
  require(pvc.empty() || hostPath.empty(), "give --pvc or --host-path, not both");
  require(name.empty() || name == dnsLabel(name),
          "the Job name must be a DNS-1123 label (lower-case letters, digits, '-'), got '" + name +
              "'");
  requireWord(mem, "--mem");
}

std::string kubernetesJob(const KubernetesOptions& o) {
  o.check();
  const fs::path manifestDir = o.manifest.parent_path();
  const fs::path hostRoot =
      o.pvc.empty() ? (o.hostPath.empty() ? manifestDir : o.hostPath) : fs::path();
  const fs::path mount =
      !o.mountPath.empty() ? o.mountPath : (!hostRoot.empty() ? hostRoot : manifestDir);
  require(mount.is_absolute(), "--mount-path must be absolute, got " + mount.string());
  // The manifest as the container sees it.
  fs::path inPod;
  if (!hostRoot.empty()) {
    require(isInside(o.manifest, hostRoot), "the manifest " + o.manifest.string() +
                                                " is not inside the volume " + hostRoot.string());
    inPod = mount / o.manifest.lexically_relative(hostRoot);
  } else {
    inPod = mount / o.manifest.filename();
  }
  const std::string name =
      o.name.empty() ? dnsLabel("vidmap-" + o.manifest.stem().string()) : o.name;
  const int parallelism = o.parallelism > 0 ? o.parallelism : std::min(o.items, 8);
  const int backoff = o.backoffLimit >= 0 ? o.backoffLimit : o.items;

  std::string y;
  y += "# Written by `vidmap batch --kubernetes` on " + utcNowIso() + ": an Indexed Job, one\n";
  y += "# pod per item of " + o.manifest.string() + " (" + std::to_string(o.items) +
       " items). Apply with\n# `kubectl apply -f`; complete items are skipped, so a Job re-created "
       "after a failure\n# redoes only what is missing.\n";
  y += "apiVersion: batch/v1\nkind: Job\nmetadata:\n";
  y += "  name: " + yamlString(name) + "\n";
  if (!o.nameSpace.empty()) y += "  namespace: " + yamlString(o.nameSpace) + "\n";
  y += "  labels:\n    app.kubernetes.io/name: vidmap-batch\n";
  y += "spec:\n";
  y += "  completionMode: Indexed\n";
  y += "  completions: " + std::to_string(o.items) + "\n";
  y += "  parallelism: " + std::to_string(parallelism) + "\n";
  y += "  backoffLimit: " + std::to_string(backoff) + "\n";
  y += "  template:\n";
  y += "    metadata:\n      labels:\n        app.kubernetes.io/name: vidmap-batch\n";
  y += "    spec:\n";
  y += "      restartPolicy: Never\n";
  y += "      containers:\n";
  y += "        - name: vidmap\n";
  y += "          image: " + yamlString(o.image) + "\n";
  y += "          command:\n";
  std::vector<std::string> cmd{o.program, "batch", inPod.string(), "--index",
                               "$(JOB_COMPLETION_INDEX)"};
  cmd.insert(cmd.end(), o.itemArgs.begin(), o.itemArgs.end());
  for (const std::string& c : cmd) y += "            - " + yamlString(c) + "\n";
  y += "          env:\n";
  // The Job controller sets JOB_COMPLETION_INDEX too; declaring it from the annotation makes
  // the $(...) expansion in `command` independent of that.
  y += "            - name: JOB_COMPLETION_INDEX\n";
  y += "              valueFrom:\n                fieldRef:\n";
  y += "                  fieldPath: \"metadata.annotations['batch.kubernetes.io/"
       "job-completion-index']\"\n";
  y += "            - name: OMP_NUM_THREADS\n";
  y += "              value: " + yamlString(std::to_string(o.cpusPerTask > 0 ? o.cpusPerTask : 1)) +
       "\n";
  y += "            - name: OMP_WAIT_POLICY\n              value: \"passive\"\n";
  const bool limits = o.gpusPerTask > 0 || o.cpusPerTask > 0 || !o.mem.empty();
  if (limits) {
    y += "          resources:\n";
    if (o.cpusPerTask > 0 || !o.mem.empty()) {
      y += "            requests:\n";
      if (o.cpusPerTask > 0)
        y += "              cpu: " + yamlString(std::to_string(o.cpusPerTask)) + "\n";
      if (!o.mem.empty()) y += "              memory: " + yamlString(o.mem) + "\n";
    }
    y += "            limits:\n";
    if (o.cpusPerTask > 0)
      y += "              cpu: " + yamlString(std::to_string(o.cpusPerTask)) + "\n";
    if (!o.mem.empty()) y += "              memory: " + yamlString(o.mem) + "\n";
    if (o.gpusPerTask > 0)
      y += "              nvidia.com/gpu: " + std::to_string(o.gpusPerTask) + "\n";
  }
  y += "          volumeMounts:\n";
  y += "            - name: data\n              mountPath: " + yamlString(mount.string()) + "\n";
  y += "      volumes:\n";
  y += "        - name: data\n";
  if (!o.pvc.empty()) {
    y += "          persistentVolumeClaim:\n            claimName: " + yamlString(o.pvc) + "\n";
  } else {
    y += "          hostPath:\n            path: " + yamlString(hostRoot.string()) +
         "\n            type: Directory\n";
  }
  return y;
}

}  // namespace vidmap::pipeline
