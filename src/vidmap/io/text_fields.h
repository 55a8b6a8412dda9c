// Whitespace-separated text formats (TUM trajectories, the synthetic truth's info files): the
// data lines split into fields, and numbers that must be finite, with errors naming the place.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vidmap::io {

// The lines that are neither blank nor '#' comments, as (1-based line number, fields).
std::vector<std::pair<int, std::vector<std::string>>> dataLines(const std::string& text);

// The whole field as a finite number; otherwise a vidmap::Error "<where>: '<s>' is not a
// finite number".
double parseFiniteDouble(const std::string& s, const std::string& where);

}  // namespace vidmap::io
