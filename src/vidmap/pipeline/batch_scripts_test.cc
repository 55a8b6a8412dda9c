// Cluster job descriptions: the Slurm script is run by bash with the array variables a task
// gets and must call `vidmap batch MANIFEST --index I` with I = $SLURM_ARRAY_TASK_ID; the
// Kubernetes Job is parsed by a YAML parser (PyYAML, when python3 has it) and its fields
// checked against what an Indexed Job needs.
#include "vidmap/pipeline/batch_scripts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) out = "FAILED: " + out;
  return out;
}

class BatchScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testFolder("batch_scripts");
    fs::create_directories(dir_ / "data dir");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

bool hasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

TEST_F(BatchScriptsTest, SlurmArrayRunsItemOfTheTaskId) {
  // A stand-in for vidmap that prints its arguments one a line.
  const fs::path fake = dir_ / "bin dir" / "vidmap";
  fs::create_directories(fake.parent_path());
  std::ofstream(fake) << "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\necho "
                         "\"OMP=$OMP_NUM_THREADS\"\n";
  fs::permissions(fake, fs::perms::owner_all);
  SlurmOptions o;
  o.manifest = dir_ / "data dir" / "site videos.csv";
  o.program = fake;
  o.items = 4;
  o.maxParallel = 2;
  o.gpusPerTask = 1;
  o.cpusPerTask = 6;
  o.mem = "16G";
  o.time = "01:30:00";
  o.partition = "gpu";
  o.account = "proj1";
  o.logDir = dir_ / "logs";
  o.extra = {"--constraint=h200"};
  const std::string s = slurmScript(o);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --job-name=vidmap-site-videos", "#SBATCH --array=0-3%2",
        "#SBATCH --cpus-per-task=6", "#SBATCH --gres=gpu:1", "#SBATCH --mem=16G",
        "#SBATCH --time=01:30:00", "#SBATCH --partition=gpu", "#SBATCH --account=proj1",
        "#SBATCH --constraint=h200", "#SBATCH --ntasks=1"})
    EXPECT_TRUE(hasLine(s, line)) << line << "\n" << s;
  EXPECT_TRUE(hasLine(s, "#SBATCH --output=" + (dir_ / "logs" / "%x_%A_%a.log").string())) << s;
  // sbatch stops reading #SBATCH lines at the first command.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("\nset -u"));

  const fs::path script = dir_ / "job.sbatch";
  std::ofstream(script) << s;
  const std::string out = run(
      "env -u OMP_NUM_THREADS SLURM_ARRAY_TASK_ID=2 SLURM_CPUS_PER_TASK=6 bash " + script.string());
  EXPECT_EQ(out,
            fake.string().substr(0, 0) + "batch\n" + o.manifest.string() + "\n--index\n2\nOMP=6\n");

  // One item: no range; no limit: no %.
  o.items = 1;
  o.maxParallel = 0;
  o.gpusPerTask = 0;
  const std::string one = slurmScript(o);
  EXPECT_TRUE(hasLine(one, "#SBATCH --array=0")) << one;
  EXPECT_EQ(one.find("--gres"), std::string::npos);

  o.mem = "16 G";
  EXPECT_THROW(slurmScript(o), Error);
  o.mem = "";
  o.manifest = "relative.csv";
  EXPECT_THROW(slurmScript(o), Error);
}

TEST(BatchScripts, DnsLabel) {
  EXPECT_EQ(dnsLabel("vidmap-My Videos.csv"), "vidmap-my-videos-csv");
  EXPECT_EQ(dnsLabel("__"), "vidmap");
  EXPECT_LE(dnsLabel(std::string(100, 'a')).size(), 63u);
}

#if defined(VIDMAP_HAVE_JSON)
// The YAML as JSON through PyYAML; null when python3 or PyYAML is missing.
nlohmann::json parseYaml(const fs::path& file) {
  if (run("python3 -c 'import yaml' 2>/dev/null").rfind("FAILED", 0) == 0) return nullptr;
  const std::string json =
      run("python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "
          "'" +
          file.string() + "'");
  return nlohmann::json::parse(json);
}
#endif

TEST_F(BatchScriptsTest, KubernetesIndexedJobParsesWithItsFields) {
#if !defined(VIDMAP_HAVE_JSON)
  GTEST_SKIP() << "built without nlohmann-json";
#else
  KubernetesOptions o;
  o.manifest = dir_ / "data dir" / "sub" / "m.csv";
  o.image = "registry.example/vidmap:1.0";
  o.items = 5;
  o.parallelism = 2;
  o.gpusPerTask = 1;
  o.cpusPerTask = 8;
  o.mem = "24Gi";
  o.hostPath = dir_ / "data dir";
  o.mountPath = "/data";
  o.itemArgs = {"--shallow-check"};
  const fs::path file = dir_ / "job.yaml";
  std::ofstream(file) << kubernetesJob(o);
  const nlohmann::json j = parseYaml(file);
  if (j.is_null()) GTEST_SKIP() << "python3 with PyYAML is not installed (apt python3-yaml)";
  EXPECT_EQ(j["apiVersion"], "batch/v1");
  EXPECT_EQ(j["kind"], "Job");
  EXPECT_EQ(j["metadata"]["name"], "vidmap-m");
  const nlohmann::json& spec = j["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["completions"], 5);
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["backoffLimit"], 5);
  const nlohmann::json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  ASSERT_EQ(pod["containers"].size(), 1u);
  const nlohmann::json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], o.image);
  const nlohmann::json command = {
      "vidmap",         "batch", "/data/sub/m.csv", "--index", "$(JOB_COMPLETION_INDEX)",
      "--shallow-check"};
  EXPECT_EQ(c["command"], command);
  bool indexEnv = false;
  for (const nlohmann::json& e : c["env"]) {
    if (e["name"] == "JOB_COMPLETION_INDEX") {
      indexEnv = true;
      EXPECT_EQ(e["valueFrom"]["fieldRef"]["fieldPath"],
                "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    }
    if (e["name"] == "OMP_NUM_THREADS") {
      EXPECT_EQ(e["value"], "8");
    }
  }
  EXPECT_TRUE(indexEnv);
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_EQ(c["resources"]["limits"]["memory"], "24Gi");
  EXPECT_EQ(c["resources"]["requests"]["cpu"], "8");
  EXPECT_EQ(c["volumeMounts"][0]["name"], "data");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/data");
  EXPECT_EQ(pod["volumes"][0]["name"], "data");
  EXPECT_EQ(pod["volumes"][0]["hostPath"]["path"], (dir_ / "data dir").string());

  // A PVC, mounted at the manifest's folder by default; no GPU: no limits at all.
  o.hostPath.clear();
  o.mountPath.clear();
  o.pvc = "videos";
  o.gpusPerTask = 0;
  o.cpusPerTask = 0;
  o.mem.clear();
  o.parallelism = 0;
  std::ofstream(file) << kubernetesJob(o);
  const nlohmann::json k = parseYaml(file);
  EXPECT_EQ(k["spec"]["parallelism"], 5);
  const nlohmann::json& kc = k["spec"]["template"]["spec"]["containers"][0];
  EXPECT_FALSE(kc.contains("resources"));
  EXPECT_EQ(kc["command"][2], o.manifest.string());
  EXPECT_EQ(kc["volumeMounts"][0]["mountPath"], o.manifest.parent_path().string());
  EXPECT_EQ(k["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "videos");

  o.image.clear();
  EXPECT_THROW(kubernetesJob(o), Error);
  o.image = "x";
  o.name = "Bad_Name";
  EXPECT_THROW(kubernetesJob(o), Error);
  o.name.clear();
  o.hostPath = "/elsewhere";
  EXPECT_THROW(kubernetesJob(o), Error);  // both a PVC and a host path
#endif
}

}  // namespace
}  // namespace vidmap::pipeline
