// One case per user-facing diagnostic: each file under tests/error/{config,asm,sim,sweep}
// starts with `# expect: TEXT` lines, and loading (config), assembling (asm), running on fsim
// and on perf (sim) or reading as a sweep spec (sweep) the file must fail with a vacc::Error
// whose message contains every TEXT. For asm, TEXT begins with LINE:COLUMN and the message
// must carry FILE:LINE:COLUMN; an asm or sim case assembles for the default config, or for the
// bundled config its `# config: NAME` line names, with the keys its `# set: KEY=VALUE` lines set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "vacc/driver/device.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/config.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/sweep/spec.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> cases(const std::string &kind) {
  std::vector<std::string> out;
  for (const auto &entry : fs::directory_iterator(fs::path(VACC_ERROR_CASES) / kind))
    if (entry.path().extension() == ".yaml" || entry.path().extension() == ".s")
      out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> expectations(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# expect: ", 0) == 0) out.push_back(line.substr(10));
  return out;
}

std::string error_of(const std::function<void()> &action) {
  try {
    action();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// The bundled config a case names on a `# config: NAME` line, else default, with the keys its
// `# set: KEY=VALUE` lines set.
isa::HwConfig config_of(const std::string &path) {
  std::ifstream in(path);
  std::string name = "default";
  std::vector<std::pair<std::string, std::string>> keys;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# config: ", 0) == 0) name = line.substr(10);
    if (line.rfind("# set: ", 0) == 0) {
      const std::string kv = line.substr(7);
      keys.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
    }
  }
  const std::string file = std::string(VACC_CONFIG_DIR_FOR_TESTS) + "/" + name + ".yaml";
  if (keys.empty()) return isa::load_config(file);
  // (the bundled file's `name` key names it)
  return isa::parse_config(isa::set_config_keys(read_file(file, "config"), keys, file), file);
}

class ErrorCase : public ::testing::TestWithParam<std::string> {};

void check(const std::string &path, const std::string &message, const std::string &prefix = "") {
  const auto expected = expectations(path);
  ASSERT_FALSE(expected.empty()) << path << " has no '# expect:' line";
  ASSERT_FALSE(message.empty()) << path << ": no error was raised";
  for (const auto &text : expected)
    EXPECT_NE(message.find(prefix + text), std::string::npos)
        << "expected: " << prefix + text << "\nactual:   " << message;
}

using ConfigError = ErrorCase;
TEST_P(ConfigError, NamesKeyAndRule) {
  const std::string path = GetParam();
  const std::string message = error_of([&] { isa::load_config(path); });
  EXPECT_EQ(message.rfind(path + ":", 0), 0u) << "the message must start with the file: " << message;
  check(path, message);
}

using AsmError = ErrorCase;
TEST_P(AsmError, NamesFileLineColumn) {
  const std::string path = GetParam();
  check(path, error_of([&] { isa::assemble_file(config_of(path), path); }), path + ":");
}

// Every program error reads the same on fsim and on perf (which runs fsim's checks first).
using SimError = ErrorCase;
TEST_P(SimError, NamesInstructionAndField) {
  const std::string path = GetParam();
  const isa::HwConfig config = config_of(path);
  const isa::Program program = isa::assemble_file(config, path);
  for (const char *engine : {"fsim", "perf"}) {
    SCOPED_TRACE(engine);
    check(path, error_of([&] {
            auto device = driver::open_device(engine, config);
            driver::run_program(*device, program);
          }));
  }
}

// A sweep spec is read by a pure function from text: the message names the file and key.
using SweepSpecError = ErrorCase;
TEST_P(SweepSpecError, NamesKey) {
  const std::string path = GetParam();
  const std::string message =
      error_of([&] { sweep::parse_spec(read_file(path, "sweep spec"), path); });
  EXPECT_EQ(message.rfind(path + ":", 0), 0u) << "the message must start with the file: " << message;
  check(path, message);
}

std::string case_name(const ::testing::TestParamInfo<std::string> &info) {
  return fs::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Config, ConfigError, ::testing::ValuesIn(cases("config")), case_name);
INSTANTIATE_TEST_SUITE_P(Asm, AsmError, ::testing::ValuesIn(cases("asm")), case_name);
INSTANTIATE_TEST_SUITE_P(Sweep, SweepSpecError, ::testing::ValuesIn(cases("sweep")), case_name);
INSTANTIATE_TEST_SUITE_P(Sim, SimError, ::testing::ValuesIn(cases("sim")), case_name);

}  // namespace
}  // namespace vacc
