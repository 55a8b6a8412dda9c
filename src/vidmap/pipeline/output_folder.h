// An output folder written as a whole: everything goes into a temporary folder beside the
// destination, which is renamed into place by commit(). A failure (an exception, a crash
// before commit) leaves the destination as it was: no partial model.
#pragma once

#include <filesystem>

namespace vidmap::pipeline {

class OutputFolder {
 public:
  // Throws vidmap::Error when `dir` exists and is not an empty folder (unless overwrite), or
  // when its parent folder cannot be created.
  OutputFolder(const std::filesystem::path& dir, bool overwrite);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& tmp() const { return tmp_; }
  // Replaces `dir` by the temporary folder. Throws vidmap::Error on failure.
  void commit();
  bool committed() const { return committed_; }

 private:
  std::filesystem::path dir_, tmp_;
  bool overwrite_;
  bool committed_ = false;
};

}  // namespace vidmap::pipeline
