// Batch manifests: both formats read to the same items, relative paths taken from the
// manifest's folder, and every malformed item rejected with its file, line and field.
#include "vidmap/pipeline/batch_manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

class BatchManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testFolder("batch_manifest");
    fs::create_directories(dir_ / "videos");
    for (const char* v : {"a.mp4", "b.mp4", "c d.mp4"}) std::ofstream(dir_ / "videos" / v) << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  // The error message of reading `text` as `name`; "" when it reads.
  std::string errorOf(const std::string& name, const std::string& text,
                      const ManifestOptions& o = {}) {
    try {
      readManifest(write(name, text), o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(BatchManifestTest, CsvColumnsBecomeReconstructArguments) {
  const fs::path p = write("m.csv",
                           "# videos of the site\n"
                           "input,output,fps,all_frames,camera,options\n"
                           "videos/a.mp4,models/a,2,,,--verbose\n"
                           "\n"
                           "videos/b.mp4, models/b ,,true,\"PINHOLE 500,500,320,240\",\n"
                           "\"videos/c d.mp4\",/abs/out/c,0.5,false,,\"--max-features 4000 "
                           "--camera 'OPENCV 1,2,3,4,0,0,0,0'\"\n");
  const BatchManifest m = readManifest(p);
  ASSERT_EQ(m.items.size(), 3u);
  EXPECT_EQ(m.path, p);
  EXPECT_EQ(m.items[0].index, 0);
  EXPECT_EQ(m.items[0].line, 3);
  EXPECT_EQ(m.items[0].input, dir_ / "videos/a.mp4");
  EXPECT_EQ(m.items[0].output, dir_ / "models/a");
  EXPECT_EQ(m.items[0].args, (std::vector<std::string>{"--fps", "2", "--verbose"}));
  EXPECT_EQ(m.items[1].line, 5);                    // the blank line counts
  EXPECT_EQ(m.items[1].output, dir_ / "models/b");  // spaces around a bare field trimmed
  EXPECT_EQ(m.items[1].args,
            (std::vector<std::string>{"--all-frames", "--camera", "PINHOLE 500,500,320,240"}));
  EXPECT_EQ(m.items[2].input, dir_ / "videos/c d.mp4");
  EXPECT_EQ(m.items[2].output, fs::path("/abs/out/c"));
  EXPECT_EQ(m.items[2].args, (std::vector<std::string>{"--fps", "0.5", "--max-features", "4000",
                                                       "--camera", "OPENCV 1,2,3,4,0,0,0,0"}));
}

TEST_F(BatchManifestTest, JsonLinesReadToTheSameItems) {
#if !defined(VIDMAP_HAVE_JSON)
  GTEST_SKIP() << "built without nlohmann-json";
#endif
  const fs::path p = write(
      "m.jsonl",
      "{\"input\": \"videos/a.mp4\", \"output\": \"models/a\", \"options\": {\"fps\": 2, "
      "\"verbose\": true, \"all-frames\": false, \"camera\": null}}\n"
      "# a comment\n"
      "{\"input\": \"videos/b.mp4\", \"output\": \"models/b\", \"args\": [\"--all-frames\", "
      "\"--camera\", \"PINHOLE 500,500,320,240\"]}\n"
      "{\"input\": \"videos/c d.mp4\", \"output\": \"models/c\", \"args\": \"--width 320\"}\n");
  const BatchManifest m = readManifest(p);
  ASSERT_EQ(m.items.size(), 3u);
  EXPECT_EQ(m.items[0].args, (std::vector<std::string>{"--fps", "2", "--verbose"}));
  EXPECT_EQ(m.items[1].line, 3);
  EXPECT_EQ(m.items[1].args,
            (std::vector<std::string>{"--all-frames", "--camera", "PINHOLE 500,500,320,240"}));
  EXPECT_EQ(m.items[2].args, (std::vector<std::string>{"--width", "320"}));
  EXPECT_EQ(m.items[2].output, dir_ / "models/c");
  // A manifest without a telling extension is recognised by its first character.
  EXPECT_EQ(readManifest(write("m.txt", "{\"input\": \"videos/a.mp4\", \"output\": \"o\"}\n"))
                .items.size(),
            1u);
}

TEST_F(BatchManifestTest, ErrorsNameTheLineAndTheField) {
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  std::string e = errorOf("m.csv", "input,out\nvideos/a.mp4,x\n");
  EXPECT_TRUE(has(e, "m.csv line 1") && has(e, "'input' and 'output'")) << e;
  e = errorOf("m.csv", "input,output,fps\nvideos/a.mp4,o1,2\nvideos/b.mp4,o2\n");
  EXPECT_TRUE(has(e, "line 3: 2 fields, the header has 3")) << e;
  e = errorOf("m.csv", "input,output\nvideos/a.mp4,o1\nvideos/missing.mp4,o2\n");
  EXPECT_TRUE(has(e, "line 3: field 'input'") && has(e, "missing.mp4 does not exist")) << e;
  e = errorOf("m.csv", "input,output\nvideos/a.mp4,o1\nvideos/b.mp4,./o1/\n");
  EXPECT_TRUE(has(e, "line 3: field 'output'") && has(e, "also the output of line 2")) << e;
  e = errorOf("m.csv", "input,output\nvideos/a.mp4,o1\nvideos/b.mp4,o1/inner\n");
  EXPECT_TRUE(has(e, "line 3") && has(e, "nested")) << e;
  e = errorOf("m.csv", "input,output\nvideos/a.mp4,\n");
  EXPECT_TRUE(has(e, "line 2: field 'output' is missing")) << e;
  e = errorOf("m.csv", "input,output,options\nvideos/a.mp4,o1,\"--fps '2\"\n");
  EXPECT_TRUE(has(e, "line 2: field 'options'") && has(e, "unterminated")) << e;
  e = errorOf("m.csv", "input,output,options\nvideos/a.mp4,o1,-o elsewhere\n");
  EXPECT_TRUE(has(e, "line 2: option -o is not an item option")) << e;
  e = errorOf("m.csv", "input,output\nvideos/a.mp4,\"o1\n");
  EXPECT_TRUE(has(e, "line 2: unterminated quote")) << e;
  e = errorOf("m.csv", "input,output\n");
  EXPECT_TRUE(has(e, "no items")) << e;
  e = errorOf("m.csv", "input,output,Input\nvideos/a.mp4,o,x\n");
  EXPECT_TRUE(has(e, "'input' appears twice")) << e;
#if defined(VIDMAP_HAVE_JSON)
  e = errorOf("m.jsonl", "{\"input\": \"videos/a.mp4\", \"output\": \"o\"}\n{\"input\": 3}\n");
  EXPECT_TRUE(has(e, "m.jsonl line 2: field 'input': expected a string")) << e;
  e = errorOf("m.jsonl", "{\"input\": \"videos/a.mp4\", \"output\": \"o\", \"fps\": 2}\n");
  EXPECT_TRUE(has(e, "line 1: field 'fps': unknown key")) << e;
  e = errorOf("m.jsonl",
              "{\"input\": \"videos/a.mp4\", \"output\": \"o\", \"options\": "
              "{\"fps\": [1]}}\n");
  EXPECT_TRUE(has(e, "field 'options': option 'fps'")) << e;
  e = errorOf("m.jsonl", "{\"input\": \"videos/a.mp4\"\n");
  EXPECT_TRUE(has(e, "line 1: not JSON")) << e;
#endif
  // The validator's message gets the line.
  ManifestOptions o;
  o.validate = [](const BatchItem& item) {
    if (!item.args.empty()) throw Error("options: bad " + item.args[0]);
  };
  e = errorOf("m.csv", "input,output,fps\nvideos/a.mp4,o1,\nvideos/b.mp4,o2,3\n", o);
  EXPECT_EQ(e, (dir_ / "m.csv").string() + " line 3: options: bad --fps");
  // Inputs are not required when asked so.
  o = {};
  o.requireInputs = false;
  EXPECT_EQ(errorOf("m.csv", "input,output\nnot/here.mp4,o\n", o), "");
}

TEST(BatchShellWords, SplitsAsAShellDoes) {
  EXPECT_EQ(splitShellWords("  --fps 2\t--camera 'PINHOLE 1,2,3,4' "),
            (std::vector<std::string>{"--fps", "2", "--camera", "PINHOLE 1,2,3,4"}));
  EXPECT_EQ(splitShellWords(R"(a"b c"d e\ f "x\"y" '')"),
            (std::vector<std::string>{"ab cd", "e f", "x\"y", ""}));
  EXPECT_TRUE(splitShellWords("").empty());
  EXPECT_THROW(splitShellWords("'open"), Error);
  EXPECT_THROW(splitShellWords("\"open"), Error);
  for (const std::string w : {"plain", "with space", "it's", "", "$(rm -rf)", "a\"b\\c"}) {
    const std::vector<std::string> back = splitShellWords(shellQuote(w));
    ASSERT_EQ(back.size(), 1u) << w;
    EXPECT_EQ(back[0], w);
  }
}

}  // namespace
}  // namespace vidmap::pipeline
