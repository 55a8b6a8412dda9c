// Job descriptions for running a batch manifest on a cluster, one task per item, each task
// calling `vidmap batch MANIFEST --index I` (docs/cluster.md):
//   - a Slurm job array script for sbatch (https://slurm.schedmd.com/job_array.html): task I
//     is $SLURM_ARRAY_TASK_ID, GPUs through GRES, one log per task (%A_%a);
//   - a Kubernetes Indexed Job (https://kubernetes.io/docs/concepts/workloads/controllers/job/
//     #completion-mode): task I is $JOB_COMPLETION_INDEX, GPUs through nvidia.com/gpu limits,
//     the data through a hostPath or PersistentVolumeClaim volume.
// Items that are complete are skipped by the task itself, so resubmitting the same job after
// a cancellation or a failure redoes only what is missing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace vidmap::pipeline {

struct SlurmOptions {
  std::filesystem::path manifest;  // absolute
  std::filesystem::path program;   // absolute path of the vidmap binary on the compute nodes
  int items = 0;
  int maxParallel = 0;  // %M of --array; 0: no limit
  int gpusPerTask = 0;  // --gres=gpu:K; 0: no GPU
  int cpusPerTask = 0;  // 0: the partition's default
  std::string mem;      // e.g. "16G"; empty: the default
  std::string time;     // e.g. "02:00:00"; empty: the partition's limit
  std::string partition, account, qos, jobName;
  std::filesystem::path logDir;       // absolute; %x_%A_%a.log in it
  std::vector<std::string> extra;     // more #SBATCH lines, e.g. "--constraint=h100"
  std::vector<std::string> itemArgs;  // more arguments of `vidmap batch` (e.g. --no-deep-check)
  void check() const;
};

// The sbatch script. Throws vidmap::Error (via check()) naming a bad field.
std::string slurmScript(const SlurmOptions& o);

struct KubernetesOptions {
  std::filesystem::path manifest;  // absolute, as seen on the host
  std::string program = "vidmap";  // the binary in the image (on its PATH by default)
  std::string image;               // required
  std::string name;                // the Job's name (DNS-1123); default from the manifest
  std::string nameSpace;           // empty: the current namespace
  int items = 0;
  int parallelism = 0;    // pods at once; 0: min(items, 8)
  int gpusPerTask = 0;    // nvidia.com/gpu limit
  int cpusPerTask = 0;    // cpu request and limit; OMP_NUM_THREADS
  std::string mem;        // memory request and limit, Kubernetes quantity (e.g. "16Gi")
  int backoffLimit = -1;  // failed pods before the Job gives up; -1: items (each may fail once)
  // The data volume: a PersistentVolumeClaim, or a hostPath (default: the manifest's folder).
  std::string pvc;
  std::filesystem::path hostPath;
  std::filesystem::path mountPath;  // default: the hostPath, or the manifest's folder
  std::vector<std::string> itemArgs;
  void check() const;
};

// The Indexed Job manifest (YAML). Throws vidmap::Error naming a bad field.
std::string kubernetesJob(const KubernetesOptions& o);

// A DNS-1123 label made from a name ("My Videos.csv" -> "my-videos-csv"), at most 63 chars.
std::string dnsLabel(const std::string& name);

}  // namespace vidmap::pipeline
