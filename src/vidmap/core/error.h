// vidmap::Error: the one exception type of the library. Its message names what is wrong
// (the file, the option, the value) so a user can fix the input without a debugger.
#pragma once

#include <stdexcept>
#include <string>

namespace vidmap {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Throws Error(message) when cond is false.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw Error(message);
}

}  // namespace vidmap
