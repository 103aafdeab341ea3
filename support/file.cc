#include "vacc/support/file.h"

#include <cctype>
#include <fstream>

#include "vacc/support/error.h"

namespace vacc {

std::string read_file(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open {}", path, what);
  // A file of known size in one read into its string: packages and models run to hundreds of
  // MB, and a string stream copied them several times over as it grew (8 % of a ResNet-18
  // `vacc run` on perf). What is not a regular file (a pipe), or grew since, is read in chunks.
  std::string data;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec) {
      data.resize(static_cast<size_t>(size));
      in.read(data.data(), static_cast<std::streamsize>(size));
      data.resize(static_cast<size_t>(in.gcount()));
    }
  }
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0)
    data.append(chunk, static_cast<size_t>(in.gcount()));
  return data;
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
