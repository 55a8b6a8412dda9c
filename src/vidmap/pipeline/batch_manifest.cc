#include "vidmap/pipeline/batch_manifest.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "vidmap/core/error.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// "--all_frames", "all-frames" -> "--all-frames".
std::string optionName(std::string key) {
  key = trim(key);
  while (!key.empty() && key.front() == '-') key.erase(key.begin());
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

bool isArgsKey(const std::string& key) {
  const std::string k = lower(trim(key));
  return k == "options" || k == "args";
}

// A named option's value as arguments: "true" a bare flag, "false" or "" nothing.
void appendOption(std::vector<std::string>& args, const std::string& key,
                  const std::string& value) {
  const std::string v = trim(value);
  const std::string lv = lower(v);
  if (v.empty() || lv == "false") return;
  args.push_back(optionName(key));
  if (lv != "true") args.push_back(v);
}

fs::path resolve(const fs::path& base, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = base / path;
  path = path.lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path;
}

struct RawItem {
  int line = 0;
  std::string input, output;
  std::vector<std::string> args;
};

// RFC 4180 records with the line each starts on; comment and blank lines are skipped.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> fields;
};

std::vector<CsvRecord> parseCsv(const std::string& text, const std::string& source) {
  std::vector<CsvRecord> records;
  std::size_t i = 0;
  int line = 1;
  const std::size_t n = text.size();
  while (i < n) {
    // Skip blank and comment lines at the start of a record.
    std::size_t eol = text.find('\n', i);
    if (eol == std::string::npos) eol = n;
    const std::string whole = trim(text.substr(i, eol - i));
    if (whole.empty() || whole[0] == '#') {
      i = eol + 1;
      ++line;
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool quoted = false, wasQuoted = false, done = false;
    while (!done) {
      if (i >= n) {
        if (quoted)
          throw Error(source + " line " + std::to_string(rec.line) + ": unterminated quote");
        done = true;
        break;
      }
      const char c = text[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field += '"';
            i += 2;
          } else {
            quoted = false;
            ++i;
          }
        } else {
          if (c == '\n') ++line;
          field += c;
          ++i;
        }
        continue;
      }
      if (c == '"' && trim(field).empty() && !wasQuoted) {
        field.clear();
        quoted = wasQuoted = true;
        ++i;
      } else if (c == ',') {
        rec.fields.push_back(wasQuoted ? field : trim(field));
        field.clear();
        wasQuoted = false;
        ++i;
      } else if (c == '\n' || c == '\r') {
        if (c == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        done = true;
      } else {
        if (wasQuoted && !std::isspace(static_cast<unsigned char>(c)))
          throw Error(source + " line " + std::to_string(line) +
                      ": text after a closing quote (a quote inside a quoted field is "
                      "written \"\")");
        if (!wasQuoted) field += c;
        ++i;
      }
    }
    rec.fields.push_back(wasQuoted ? field : trim(field));
    records.push_back(std::move(rec));
  }
  return records;
}

std::vector<RawItem> readCsvItems(const std::string& text, const std::string& source) {
  std::vector<CsvRecord> records = parseCsv(text, source);
  if (records.empty()) throw Error(source + ": the manifest is empty (no header, no items)");
  const CsvRecord& header = records[0];
  int inputCol = -1, outputCol = -1;
  std::map<std::string, int> seen;
  for (std::size_t c = 0; c < header.fields.size(); ++c) {
    const std::string name = lower(trim(header.fields[c]));
    const std::string where = source + " line " + std::to_string(header.line) + ": header";
    if (name.empty()) throw Error(where + ": column " + std::to_string(c + 1) + " has no name");
    if (!seen.emplace(name, static_cast<int>(c)).second)
      throw Error(where + ": column '" + name + "' appears twice");
    if (name == "input") inputCol = static_cast<int>(c);
    if (name == "output") outputCol = static_cast<int>(c);
  }
  if (inputCol < 0 || outputCol < 0)
    throw Error(source + " line " + std::to_string(header.line) +
                ": the header must name the columns 'input' and 'output' (then any reconstruct "
                "options, e.g. input,output,fps,camera,options); got '" +
                [&] {
                  std::string s;
                  for (std::size_t c = 0; c < header.fields.size(); ++c)
                    s += (c ? "," : "") + header.fields[c];
                  return s;
                }() +
                "'");
  std::vector<RawItem> items;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.fields.size() != header.fields.size())
      throw Error(source + " line " + std::to_string(rec.line) + ": " +
                  std::to_string(rec.fields.size()) + " fields, the header has " +
                  std::to_string(header.fields.size()));
    RawItem item;
    item.line = rec.line;
    item.input = rec.fields[inputCol];
    item.output = rec.fields[outputCol];
    for (std::size_t c = 0; c < rec.fields.size(); ++c) {
      if (static_cast<int>(c) == inputCol || static_cast<int>(c) == outputCol) continue;
      const std::string& key = header.fields[c];
      try {
        if (isArgsKey(key)) {
          for (std::string& w : splitShellWords(rec.fields[c])) item.args.push_back(std::move(w));
        } else {
          appendOption(item.args, key, rec.fields[c]);
        }
      } catch (const Error& e) {
        throw Error(source + " line " + std::to_string(rec.line) + ": field '" + trim(key) +
                    "': " + e.what());
      }
    }
    items.push_back(std::move(item));
  }
  return items;
}

#if defined(VIDMAP_HAVE_JSON)
std::string scalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  if (v.is_number()) return v.dump();
  throw Error("expected a string, a number, true/false or null, got " + std::string(v.type_name()));
}
#endif

std::vector<RawItem> readJsonLines(const std::string& text, const std::string& source) {
#if defined(VIDMAP_HAVE_JSON)
  std::vector<RawItem> items;
  std::istringstream in(text);
  std::string lineText;
  int line = 0;
  while (std::getline(in, lineText)) {
    ++line;
    const std::string t = trim(lineText);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = source + " line " + std::to_string(line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(t);
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + ": not JSON: " + e.what());
    }
    if (!j.is_object())
      throw Error(where + ": expected a JSON object {\"input\": ..., \"output\": ...}");
    RawItem item;
    item.line = line;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      const nlohmann::json& v = it.value();
      try {
        if (key == "input" || key == "output") {
          if (!v.is_string()) throw Error("expected a string, got " + std::string(v.type_name()));
          (key == "input" ? item.input : item.output) = v.get<std::string>();
        } else if (key == "options") {
          if (!v.is_object())
            throw Error("expected an object of reconstruct options, e.g. {\"fps\": 2}");
          for (auto o = v.begin(); o != v.end(); ++o) {
            try {
              appendOption(item.args, o.key(), scalarText(o.value()));
            } catch (const Error& e) {
              throw Error("option '" + o.key() + "': " + e.what());
            }
          }
        } else if (key == "args") {
          if (v.is_string()) {
            for (std::string& w : splitShellWords(v.get<std::string>()))
              item.args.push_back(std::move(w));
          } else if (v.is_array()) {
            for (const nlohmann::json& a : v) {
              if (!a.is_string() && !a.is_number())
                throw Error("expected an array of strings, e.g. [\"--fps\", \"2\"]");
              item.args.push_back(scalarText(a));
            }
          } else {
            throw Error("expected an array of strings or a string");
          }
        } else {
          throw Error("unknown key (input, output, options, args)");
        }
      } catch (const Error& e) {
        throw Error(where + ": field '" + key + "': " + e.what());
      }
    }
    items.push_back(std::move(item));
  }
  return items;
#else
  (void)text;
  throw Error(source +
              ": JSON lines manifests need nlohmann-json, which this build lacks; "
              "write the manifest as CSV");
#endif
}

bool looksLikeJsonLines(const fs::path& path, const std::string& text) {
  const std::string ext = lower(path.extension().string());
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return true;
  if (ext == ".csv") return false;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

bool isInside(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin(), o = outer.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

std::vector<std::string> splitShellWords(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  bool inWord = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (inWord) words.push_back(std::move(w));
      w.clear();
      inWord = false;
    } else if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) throw Error("unterminated ' in: " + text);
      w += text.substr(i + 1, end - i - 1);
      i = end;
      inWord = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            (text[j + 1] == '"' || text[j + 1] == '\\' || text[j + 1] == '$' || text[j + 1] == '`'))
          ++j;
        w += text[j];
      }
      if (j >= text.size()) throw Error("unterminated \" in: " + text);
      i = j;
      inWord = true;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) throw Error("a trailing backslash in: " + text);
      w += text[++i];
      inWord = true;
    } else {
      w += c;
      inWord = true;
    }
  }
  if (inWord) words.push_back(std::move(w));
  return words;
}

std::string shellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string("@%+=:,./-_").find(c) != std::string::npos;
  });
  if (plain) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shellJoin(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + shellQuote(w);
  return s;
}

BatchManifest parseManifest(const std::string& text, const fs::path& baseDir,
                            const std::string& sourceName, const ManifestOptions& options) {
  bool json = options.format == ManifestFormat::kJsonLines;
  if (options.format == ManifestFormat::kAuto) json = looksLikeJsonLines(sourceName, text);
  std::vector<RawItem> raw =
      json ? readJsonLines(text, sourceName) : readCsvItems(text, sourceName);
  if (raw.empty()) throw Error(sourceName + ": the manifest has no items");

  BatchManifest m;
  const fs::path base = fs::absolute(baseDir).lexically_normal();
  std::map<fs::path, int> outputs;  // output -> line
  for (RawItem& r : raw) {
    const std::string where = sourceName + " line " + std::to_string(r.line);
    if (trim(r.input).empty()) throw Error(where + ": field 'input' is missing or empty");
    if (trim(r.output).empty()) throw Error(where + ": field 'output' is missing or empty");
    BatchItem item;
    item.index = static_cast<int>(m.items.size());
    item.line = r.line;
    item.input = resolve(base, r.input);
    item.output = resolve(base, r.output);
    item.args = std::move(r.args);
    std::error_code ec;
    if (options.requireInputs && !fs::exists(item.input, ec))
      throw Error(where + ": field 'input': " + item.input.string() + " does not exist");
    if (item.output == item.input || isInside(item.input, item.output))
      throw Error(where + ": field 'output': " + item.output.string() +
                  " would hold or replace the input");
    if (fs::exists(item.output, ec) && !fs::is_directory(item.output, ec))
      throw Error(where + ": field 'output': " + item.output.string() +
                  " exists and is not a folder");
    for (const auto& [other, otherLine] : outputs) {
      if (other == item.output)
        throw Error(where + ": field 'output': " + item.output.string() +
                    " is also the output of line " + std::to_string(otherLine));
      if (isInside(item.output, other) || isInside(other, item.output))
        throw Error(where + ": field 'output': " + item.output.string() +
                    " and the output of line " + std::to_string(otherLine) + " (" + other.string() +
                    ") are nested");
    }
    outputs.emplace(item.output, r.line);
    for (const std::string& a : item.args)
      if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0 || a == "-h" ||
          a == "--help")
        throw Error(where + ": option " + a +
                    " is not an item option (the output is the field 'output')");
    if (options.validate) {
      try {
        options.validate(item);
      } catch (const Error& e) {
        throw Error(where + ": " + e.what());
      }
    }
    m.items.push_back(std::move(item));
  }
  return m;
}

BatchManifest readManifest(const fs::path& path, const ManifestOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read the manifest " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  const fs::path abs = fs::absolute(path).lexically_normal();
  BatchManifest m = parseManifest(ss.str(), abs.parent_path(), path.string(), options);
  m.path = abs;
  return m;
}

}  // namespace vidmap::pipeline
