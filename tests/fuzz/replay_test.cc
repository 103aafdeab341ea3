// Replays every input kept under tests/fuzz/<target>/ (each a crash, hang, leak or undefined
// behaviour a fuzzer once found, or a seed worth keeping) through the same entry point the
// fuzzer calls: each must end cleanly (a vacc::Error counts as clean) and quickly.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz_targets.h"

namespace vacc::fuzz {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string target, path;
};

std::vector<Case> kept_inputs() {
  std::vector<Case> out;
  for (const Target &t : targets()) {
    const fs::path dir = fs::path(VACC_FUZZ_CASES) / t.name;
    if (!fs::is_directory(dir)) continue;
    for (const auto &entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) out.push_back({t.name, entry.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const Case &a, const Case &b) { return a.path < b.path; });
  return out;
}

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.path;
}

class FuzzReplay : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { set_up(); }
};

TEST_P(FuzzReplay, EndsCleanlyAndQuickly) {
  const Case &c = GetParam();
  std::ifstream in(c.path, std::ios::binary);
  ASSERT_TRUE(in) << c.path;
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const Target *target = find_target(c.target);
  ASSERT_NE(target, nullptr);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(run_input(*target, reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()))
      << c.path;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The fuzzers report a run over 1 s as a hang; leave room for a loaded test machine.
  EXPECT_LT(seconds, 10.0) << c.path << " took " << seconds << " s";
}

TEST(FuzzTargets, EveryTargetHasKeptInputs) {
  for (const Target &t : targets())
    EXPECT_TRUE(fs::is_directory(fs::path(VACC_FUZZ_CASES) / t.name))
        << "tests/fuzz/" << t.name << "/ is missing";
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  std::string name = info.param.target + "_" + fs::path(info.param.path).stem().string();
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kept, FuzzReplay, ::testing::ValuesIn(kept_inputs()), case_name);

}  // namespace
}  // namespace vacc::fuzz
