// A batch manifest: the list of reconstructions `vidmap batch` runs, one item per video, each
// with its own output folder and its own reconstruct options. Two formats (docs/cluster.md):
//
//   CSV with a header (RFC 4180 quoting):
//     input,output,fps,camera,options
//     videos/a.mp4,models/a,2,,--all-frames
//     videos/b.mp4,models/b,,"PINHOLE 500,500,320,240",
//   JSON lines (one object a line):
//     {"input": "videos/a.mp4", "output": "models/a", "options": {"fps": 2, "all-frames": true}}
//     {"input": "videos/b.mp4", "output": "models/b", "args": ["--camera", "PINHOLE 500,..."]}
//
// Columns (keys) other than input and output are reconstruct options: a column `fps` with the
// value 2 becomes `--fps 2`, `true` a bare flag (`--all-frames`), `false` or an empty cell
// nothing. A column `options` (or `args`) holds arguments split as a shell would (quotes,
// backslashes). Blank lines and lines starting with '#' are skipped. Relative paths are taken
// from the manifest's folder, so a manifest means the same files wherever the job starts.
//
// Every item is validated when the manifest is read; an error names the file, the line and the
// field. The reconstruct options themselves are checked by a caller-given validator (the CLI
// parses them with the reconstruct command's own parser).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace vidmap::pipeline {

struct BatchItem {
  int index = 0;                        // 0-based position in the manifest ($SLURM_ARRAY_TASK_ID)
  int line = 0;                         // 1-based line of the manifest where the item starts
  std::filesystem::path input, output;  // absolute, lexically normal
  std::vector<std::string> args;        // reconstruct options, e.g. {"--fps", "2"}
};

struct BatchManifest {
  std::filesystem::path path;  // absolute
  std::vector<BatchItem> items;
};

enum class ManifestFormat { kAuto, kCsv, kJsonLines };

// Called for each item after its fields are read; throws vidmap::Error naming what is wrong
// (the manifest reader prefixes the file and line).
using ItemValidator = std::function<void(const BatchItem&)>;

struct ManifestOptions {
  ManifestFormat format = ManifestFormat::kAuto;  // auto: .jsonl/.ndjson/.json or a leading '{'
  bool requireInputs = true;                      // every input must exist
  ItemValidator validate;                         // optional
};

// Reads and validates a manifest. Throws vidmap::Error ("manifest.csv line 4: field 'input':
// ...") on the first bad item, a duplicate output, or an empty manifest.
BatchManifest readManifest(const std::filesystem::path& path, const ManifestOptions& options = {});

// The same from text; relative paths are taken from `baseDir`, errors name `sourceName`.
BatchManifest parseManifest(const std::string& text, const std::filesystem::path& baseDir,
                            const std::string& sourceName, const ManifestOptions& options = {});

// Splits a command line as a POSIX shell would: whitespace separates words; single quotes keep
// everything; double quotes keep everything but \" and \\; a backslash outside quotes escapes
// the next character. Throws vidmap::Error on an unterminated quote.
std::vector<std::string> splitShellWords(const std::string& text);

// Quotes a word for a POSIX shell (single quotes when needed).
std::string shellQuote(const std::string& word);
// The words quoted and joined by spaces: a command line that splitShellWords reads back.
std::string shellJoin(const std::vector<std::string>& words);

}  // namespace vidmap::pipeline
