// The rtl engine on configs that are not built into vacc: the model of tests/rtl/configs/
// tiny.yaml is built on demand into a private cache (VACC_CACHE_DIR under a fresh temporary
// directory) once for the whole process, then held to fsim on random programs and perf held to
// it. Other processes (`vacc sim`, run as a user would) build concurrently, meet damaged cache
// entries, a broken or missing Verilator and an unusable cache. One ctest test runs them all
// in one process so they share the one build.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

namespace fs = std::filesystem;

fs::path &temp_root() {
  static fs::path root;
  return root;
}

// A fresh temporary directory for the process; VACC_CACHE_DIR points inside it.
class TempCache : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "vacc-on-demand-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    temp_root() = pattern;
    ::setenv("VACC_CACHE_DIR", (temp_root() / "cache").c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(temp_root(), ec);
  }
};
const auto *const kEnvironment = ::testing::AddGlobalTestEnvironment(new TempCache);

isa::HwConfig config(const std::string &name) {
  return isa::load_config(std::string(VACC_ON_DEMAND_CONFIGS) + "/" + name + ".yaml");
}

fs::path model_dir() {
  return temp_root() / "cache" / "rtl";
}

// Progress lines of every build this process ran.
std::vector<std::string> &progress() {
  static std::vector<std::string> lines;
  return lines;
}

RtlOptions options(bool build = true) {
  RtlOptions o;
  o.build_model = build;
  o.cycle_limit = 2'000'000;
  o.progress = [](const std::string &line) { progress().push_back(line); };
  return o;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

size_t count_containing(const std::vector<std::string> &lines, const std::string &part) {
  size_t n = 0;
  for (const std::string &l : lines) n += contains(l, part);
  return n;
}

// The entries (directories) of a model cache; anything else there is a lock or a log.
std::vector<fs::path> entries(const fs::path &dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.is_directory()) out.push_back(e.path());
  return out;
}

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Shell {
  int status = -1;
  std::string output;
};

// Runs a shell command line; stdout and stderr together.
Shell sh(const std::string &command) {
  Shell r;
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A random program for tiny, saved for `vacc sim` (once).
std::string tiny_program() {
  const fs::path path = temp_root() / "tiny-seed-7.vprog";
  if (!fs::exists(path)) isa::save_program(progen::generate_program(config("tiny"), 7), path);
  return path.string();
}

// `vacc sim` of tiny_program() on rtl, with `env` (NAME=VALUE ...) before it.
std::string vacc_sim(const std::string &env, const std::string &config_name = "tiny") {
  return fmt::format("{} {} sim {} --engine rtl --config {}", env, quote(VACC_BIN),
                     quote(tiny_program()),
                     quote(std::string(VACC_ON_DEMAND_CONFIGS) + "/" + config_name + ".yaml"));
}

TEST(RtlOnDemand, BuildsAModelForAConfigThatIsNotBuiltIn) {
  const isa::HwConfig tiny = config("tiny");
  ASSERT_FALSE(rtl_model_available(tiny)) << "tiny must not be built into vacc for this test";
  RtlSim rtl(tiny, options());
  // The build (here or in an earlier test of this process) said what it did, step by step.
  for (const char *step : {"[1/4] generate the package (", "[2/4] verilate vacc_top (",
                           "[3/4] compile and link the model (", "[4/4] load the model"})
    EXPECT_EQ(count_containing(progress(), step), 1u) << step;
  EXPECT_EQ(count_containing(progress(), "ready in"), 1u);
  const std::vector<fs::path> cached = entries(model_dir());
  ASSERT_EQ(cached.size(), 1u) << "one entry and no build directory left behind";
  const nlohmann::json m = nlohmann::json::parse(std::ifstream(cached[0] / "manifest.json"));
  EXPECT_EQ(m.at("key").get<std::string>(), cached[0].filename().string());
  EXPECT_EQ(m.at("config").get<std::string>(), "tiny");
  EXPECT_TRUE(fs::exists(cached[0] / m.at("library").get<std::string>()));

  // A second board of the same config in this process loads nothing again.
  const size_t lines = progress().size();
  RtlSim again(tiny, options());
  EXPECT_EQ(progress().size(), lines);
}

TEST(RtlOnDemand, FsimEqualsRtlOnRandomPrograms) {
  const isa::HwConfig tiny = config("tiny");
  RtlSim rtl(tiny, options());
  uint64_t cycles = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const CosimOutcome o = cosim_seed(tiny, rtl, seed);
    ASSERT_TRUE(o.ok) << o.message;
    cycles += o.rtl_cycles;
  }
  EXPECT_GT(cycles, 0u);
}

TEST(RtlOnDemand, PerfWithinItsBoundsOnTheBuiltModel) {
  const isa::HwConfig tiny = config("tiny");
  RtlSim rtl(tiny, options());
  PerfSim perf(tiny, {});
  const uint64_t seeds = 100;
  uint64_t within = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const isa::Program p = progen::generate_program(tiny, seed);
    std::vector<uint8_t> a = p.dram, b = p.dram;
    rtl.run(a, p.insn_offset, p.insn_count);
    perf.run(b, p.insn_offset, p.insn_count);
    const double rc = static_cast<double>(rtl.counters().at("cycles"));
    const double pc = static_cast<double>(perf.counters().at("cycles"));
    within += std::abs(pc - rc) <= 0.05 * rc;
    EXPECT_EQ(a, b) << "seed " << seed << ": perf's device memory differs from rtl's";
  }
  EXPECT_GE(within, seeds * 95 / 100);
}

TEST(RtlOnDemand, MemoryTimingAndClockReuseTheModel) {
  const isa::HwConfig tiny = config("tiny"), slow = config("tiny_slow_memory");
  RtlSim fast_board(tiny, options());
  const size_t lines = progress().size();
  RtlSim slow_board(slow, options());
  EXPECT_EQ(progress().size(), lines) << "the same hardware must not be built again";
  EXPECT_EQ(entries(model_dir()).size(), 1u);
  // The DRAM timing is the config's, applied at run time.
  const isa::Program p = progen::generate_program(tiny, 3);
  std::vector<uint8_t> a = p.dram, b = p.dram;
  fast_board.run(a, p.insn_offset, p.insn_count);
  slow_board.run(b, p.insn_offset, p.insn_count);
  EXPECT_EQ(a, b);
  EXPECT_GT(slow_board.counters().at("cycles"), fast_board.counters().at("cycles"));
}

TEST(RtlOnDemand, BuiltInAndLoadedModelsRunSideBySide) {
  const isa::HwConfig small = isa::load_config(isa::resolve_config_path("small"));
  const isa::HwConfig tiny = config("tiny");
  if (!rtl_model_available(small)) GTEST_SKIP() << "small is not built into this binary";
  RtlSim built_in(small, options()), loaded(tiny, options());
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const CosimOutcome a = cosim_seed(small, built_in, seed);
    const CosimOutcome b = cosim_seed(tiny, loaded, seed);
    EXPECT_TRUE(a.ok) << a.message;
    EXPECT_TRUE(b.ok) << b.message;
  }
}

TEST(RtlOnDemand, NoBuildUsesTheCacheButBuildsNothing) {
  RtlSim cached(config("tiny"), options(/*build=*/false));  // built by the tests above
  const size_t lines = progress().size();
  try {
    RtlSim refused(config("tiny_wide_out"), options(/*build=*/false));
    FAIL() << "a config with no model built or cached must be refused under --no-build";
  } catch (const Error &e) {
    EXPECT_TRUE(contains(e.what(), "no RTL model for config 'tiny_wide_out'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--no-build forbids building one")) << e.what();
  }
  EXPECT_EQ(progress().size(), lines);
  EXPECT_EQ(entries(model_dir()).size(), 1u);
}

// Two `vacc sim` processes on an empty cache at once: one builds, the other waits for it.
TEST(RtlOnDemand, ConcurrentBuildersBuildOnce) {
  const fs::path cache = temp_root() / "concurrent";
  const fs::path out = temp_root() / "concurrent-out";
  fs::create_directories(out);
  const std::string env = "VACC_CACHE_DIR=" + quote(cache.string());
  const Shell both =
      sh(fmt::format("({0} > {1}/a 2>&1; echo $? > {1}/a.status) & "
                     "({0} > {1}/b 2>&1; echo $? > {1}/b.status) & wait",
                     vacc_sim(env), quote(out.string())));
  ASSERT_EQ(both.status, 0) << both.output;
  std::vector<std::string> outputs;
  for (const char *name : {"a", "b"}) {
    std::ifstream status(out / (std::string(name) + ".status")), text(out / name);
    int code = -1;
    status >> code;
    outputs.emplace_back(std::istreambuf_iterator<char>(text), std::istreambuf_iterator<char>());
    EXPECT_EQ(code, 0) << outputs.back();
  }
  EXPECT_EQ(count_containing(outputs, "[2/4] verilate"), 1u) << outputs[0] << outputs[1];
  EXPECT_EQ(count_containing(outputs, "another process is building this model"), 1u)
      << outputs[0] << outputs[1];
  // Both ran the program to the same cycle count on the one model.
  const std::regex cycles(R"(cycles +(\d+))");
  std::smatch ma, mb;
  ASSERT_TRUE(std::regex_search(outputs[0], ma, cycles)) << outputs[0];
  ASSERT_TRUE(std::regex_search(outputs[1], mb, cycles)) << outputs[1];
  EXPECT_EQ(ma[1], mb[1]);
  EXPECT_EQ(entries(cache / "rtl").size(), 1u) << "one entry, no build directory left";
}

// The process's built entry, copied into a cache of its own, with `damage` applied.
fs::path damaged_copy(const std::string &name,
                      const std::function<void(const fs::path &entry)> &damage) {
  RtlSim built(config("tiny"), options());  // make sure the process's entry exists
  const std::vector<fs::path> cached = entries(model_dir());
  EXPECT_EQ(cached.size(), 1u);
  const fs::path cache = temp_root() / name;
  const fs::path entry = cache / "rtl" / cached.at(0).filename();
  fs::create_directories(entry.parent_path());
  fs::copy(cached.at(0), entry, fs::copy_options::recursive);
  damage(entry);
  return cache;
}

std::string library_of(const fs::path &entry) {
  return nlohmann::json::parse(std::ifstream(entry / "manifest.json")).at("library");
}

TEST(RtlOnDemand, ADamagedLibraryIsRebuilt) {
  const fs::path cache = damaged_copy("damaged", [](const fs::path &entry) {
    std::fstream so(entry / library_of(entry), std::ios::in | std::ios::out | std::ios::binary);
    so.seekp(4096);
    so.write("vacc", 4);  // a few flipped bytes in the code: the checksum no longer matches
  });
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote(cache.string())));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "is damaged")) << r.output;
  EXPECT_TRUE(contains(r.output, "does not match its size and checksum")) << r.output;
  EXPECT_TRUE(contains(r.output, "ready in")) << r.output;
  EXPECT_EQ(entries(cache / "rtl").size(), 1u);
}

TEST(RtlOnDemand, ALibraryWithAnotherInterfaceIsRebuilt) {
  // Another valid shared library in place of the model, with a manifest that matches it: only
  // the interface check (the versioned entry symbol) can tell.
  const fs::path cache = damaged_copy("foreign", [](const fs::path &entry) {
    const fs::path so = entry / library_of(entry);
    fs::copy_file(VACC_FOREIGN_LIBRARY, so, fs::copy_options::overwrite_existing);
    std::ifstream in(so, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nlohmann::json m = nlohmann::json::parse(std::ifstream(entry / "manifest.json"));
    m["bytes"] = bytes.size();
    m["crc32"] = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef *>(bytes.data()), static_cast<uInt>(bytes.size())));
    std::ofstream(entry / "manifest.json") << m.dump(2);
  });
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote(cache.string())));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "exports no vacc_rtl_model_v1")) << r.output;
  EXPECT_TRUE(contains(r.output, "ready in")) << r.output;
}

// A failed build exits non-zero naming the step and its log, and leaves no entry behind.
void expect_failed_build(const Shell &r, const fs::path &cache, const std::string &step,
                         const std::string &in_log) {
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "step '" + step + "' failed")) << r.output;
  std::smatch m;
  const std::regex log("log: (\\S+\\.log)");
  ASSERT_TRUE(std::regex_search(r.output, m, log)) << r.output;
  std::ifstream in(m[1].str());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(text, in_log)) << m[1].str() << ":\n" << text;
  EXPECT_TRUE(entries(cache / "rtl").empty()) << "nothing half-written may stay in the cache";
}

// A directory holding one executable script `name`, placed first on $PATH.
std::string path_with(const std::string &dir_name, const std::string &name,
                      const std::string &script) {
  const fs::path dir = temp_root() / dir_name;
  fs::create_directories(dir);
  std::ofstream(dir / name) << "#!/bin/sh\n" << script;
  fs::permissions(dir / name, fs::perms::owner_all);
  return "PATH=" + quote(dir.string()) + ":\"$PATH\"";
}

TEST(RtlOnDemand, AFailingVerilatorNamesTheStepAndTheLog) {
  // A stand-in that answers the version queries like Verilator (with the real runtime
  // directory) and fails to verilate.
  const Shell root = sh("verilator --getenv VERILATOR_ROOT");
  ASSERT_EQ(root.status, 0) << root.output;
  const std::string path =
      path_with("broken-verilator", "verilator",
                fmt::format(R"sh(
case "$1" in
  --version) echo "Verilator 5.006 (a broken stand-in)";;
  --getenv) echo {};;
  *) echo "%Error: the broken Verilator of the test refuses to verilate" >&2; exit 1;;
esac
)sh",
                            quote(root.output.substr(0, root.output.find('\n')))));
  const fs::path cache = temp_root() / "broken-verilator-cache";
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote(cache.string()) + " " + path));
  expect_failed_build(r, cache, "verilate", "refuses to verilate");
}

TEST(RtlOnDemand, AFailingCompileNamesTheStepAndTheLog) {
  const std::string path = path_with("broken-make", "make",
                                     "echo 'make: *** the broken make of the test' >&2\nexit 2\n");
  const fs::path cache = temp_root() / "broken-make-cache";
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote(cache.string()) + " " + path));
  expect_failed_build(r, cache, "compile", "the broken make of the test");
}

TEST(RtlOnDemand, AMissingVerilatorIsNamed) {
  const fs::path empty = temp_root() / "empty-bin";
  fs::create_directories(empty);
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote((temp_root() / "unused").string()) +
                              " PATH=" + quote(empty.string())));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "step 'find the tools' failed: Verilator is not installed"))
      << r.output;
}

TEST(RtlOnDemand, AnUnusableCacheIsNamed) {
  const fs::path file = temp_root() / "a-file";
  std::ofstream(file) << "not a directory\n";
  const Shell r = sh(vacc_sim("VACC_CACHE_DIR=" + quote((file / "cache").string())));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "step 'prepare the cache' failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "set VACC_CACHE_DIR to a writable directory")) << r.output;
}

}  // namespace
}  // namespace vacc::sim
