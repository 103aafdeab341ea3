#include "vacc/support/file.h"

#include <cctype>
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

std::string dump_name(size_t index, const std::string &name) {
  std::string safe;
  for (char c : name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
  while (!safe.empty() && (safe[0] == '_' || safe[0] == '.')) safe.erase(0, 1);
  return fmt::format("{:03}_{}", index, safe);
}

}  // namespace vacc
