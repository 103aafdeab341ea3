// support/file.h's read_file: every byte of a file, whether its size is known up front (a
// regular file, read in one go) or not (a pipe, read in chunks), and an error naming a file it
// cannot open.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "../expect_error.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("vacc-read-file-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// 300 000 bytes, zeros among them: more than one chunk of the pipe path.
std::string random_bytes() {
  std::mt19937 rng(7);
  std::string bytes(300'000, '\0');
  for (char &c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng());
  return bytes;
}

TEST(ReadFile, RegularFilesWhole) {
  TempDir dir;
  const std::string bytes = random_bytes();
  const std::string path = (dir.path / "data.bin").string();
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
  EXPECT_EQ(read_file(path, "data"), bytes);
  const std::string empty = (dir.path / "empty.bin").string();
  std::ofstream(empty, std::ios::binary).flush();
  EXPECT_EQ(read_file(empty, "data"), "");
}

TEST(ReadFile, PipesInChunks) {
  TempDir dir;
  const std::string bytes = random_bytes();
  const std::string path = (dir.path / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<long>(bytes.size()));
  });
  const std::string got = read_file(path, "data");
  writer.join();
  EXPECT_EQ(got, bytes);
}

TEST(ReadFile, MissingFileIsAnErrorNamingIt) {
  EXPECT_ERROR(read_file("/nonexistent/vacc.bin", "the package"),
               "/nonexistent/vacc.bin: cannot open the package");
}

}  // namespace
}  // namespace vacc
