#include "vacc/support/file.h"

#include <fstream>
#include <sstream>

#include "vacc/support/error.h"

namespace vacc {

std::string read_file(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open {}", path, what);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool path_exists(const std::filesystem::path &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !ec;
}

}  // namespace vacc
