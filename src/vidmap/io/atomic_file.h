// Outputs are written to a temporary name in the destination folder and renamed into place,
// so a failure never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace vidmap::io {

// Calls write(tmpPath), then renames tmpPath to path. On any exception the temporary file
// is removed and the exception propagates. Throws vidmap::Error when the folder is missing.
void writeAtomically(const std::filesystem::path& path,
                     const std::function<void(const std::filesystem::path& tmp)>& write);

// Writes text to path atomically.
void writeTextAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace vidmap::io
