#include "vidmap/io/text_fields.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::io {

std::vector<std::pair<int, std::vector<std::string>>> dataLines(const std::string& text) {
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream ls(line);
    std::vector<std::string> fields;
    for (std::string f; ls >> f;) fields.push_back(f);
    if (fields.empty() || fields[0][0] == '#') continue;
    out.emplace_back(number, std::move(fields));
  }
  return out;
}

double parseFiniteDouble(const std::string& s, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v))
    throw Error(where + ": '" + s + "' is not a finite number");
  return v;
}

}  // namespace vidmap::io
