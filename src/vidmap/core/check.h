// Checks for option structs: each names the bad field and its allowed range, so that
// Options::check() reads as a list of rules (after COLMAP's Check() on option structs).
#pragma once

#include <cmath>
#include <sstream>
#include <string>

#include "vidmap/core/error.h"

namespace vidmap {

// Requires lo <= value <= hi and a finite value; the message names the field.
template <class T>
void checkRange(const std::string& field, T value, T lo, T hi) {
  bool ok = value >= lo && value <= hi;
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
  if (!ok) {
    std::ostringstream s;
    s << "option " << field << " = " << value << " is out of range [" << lo << ", " << hi << "]";
    throw Error(s.str());
  }
}

}  // namespace vidmap
