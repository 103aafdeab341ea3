// The CPU backend's kernel cache on disk (codegen/cpu/kernel_cache.h): keys follow the
// kernel's structure (not its names) and the code generator; a fresh JIT (as in another
// process) links the stored object code instead of compiling, with the same results; a damaged
// entry is reported, compiled again and replaced. Each test uses its own temporary directory.
#include "vacc/codegen/cpu/kernel_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/schedule/schedule.h"
#include "vacc/schedule/to_loop_ir.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;
using codegen::cpu::Jit;
using codegen::cpu::KernelCache;

// y = x * scale + 1 over n floats, vectorized by 8, with the given names.
tir::Func scale_kernel(int64_t n, double scale, const std::string &xname = "x",
                       const std::string &yname = "y") {
  te::Tensor x = te::placeholder(xname, {n}, tir::float32());
  te::Tensor y = te::compute(yname, {n}, [&](const auto &i) {
    return (*x)({i[0]}) * tir::FloatImm::make(tir::float32(), scale) +
           tir::FloatImm::make(tir::float32(), 1.0);
  });
  schedule::Schedule s({y});
  auto [o, in] = s[y].split(s[y].axis()[0], 8);
  s[y].vectorize(in);
  return schedule::to_loop_ir(s, "scale", {x, y});
}

std::string temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "vacc-kcache-XXXXXX").string();
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// Runs the kernel on 0, 1, ..., n-1 and checks y = x * scale + 1.
void expect_scaled(const codegen::cpu::Kernel &k, int64_t n, float scale) {
  std::vector<float> x(n), y(n, -1);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  k.run({x.data(), y.data()});
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], x[i] * scale + 1) << i;
}

TEST(KernelCache, KeyFollowsStructureNotNames) {
  const std::string gen = Jit::global().generator();
  const std::string k = KernelCache::key(scale_kernel(64, 2.0), gen);
  EXPECT_EQ(k, KernelCache::key(scale_kernel(64, 2.0, "input", "output"), gen));
  EXPECT_NE(k, KernelCache::key(scale_kernel(128, 2.0), gen));  // another shape
  EXPECT_NE(k, KernelCache::key(scale_kernel(64, 3.0), gen));   // another constant
  EXPECT_NE(k, KernelCache::key(scale_kernel(64, 2.0), gen + " other-cpu"));
  // The generator names the target and this build of vacc.
  EXPECT_NE(gen.find(codegen::cpu::build_id()), std::string::npos) << gen;
  EXPECT_NE(codegen::cpu::build_id(), "unknown");
}

TEST(KernelCache, FreshJitLinksStoredObjectCode) {
  const std::string dir = temp_dir();
  const tir::Func f = scale_kernel(200, 2.5);
  {
    Jit first;
    first.use_disk_cache(dir);
    expect_scaled(*first.compile(f), 200, 2.5f);
    EXPECT_EQ(first.stats().compiled, 1);
    EXPECT_EQ(first.stats().disk_hits, 0);
  }
  const std::string entry = KernelCache(dir).path(KernelCache::key(f, Jit::global().generator()));
  ASSERT_TRUE(fs::exists(entry)) << entry;
  Jit second;  // no kernels of its own, as in a new process
  second.use_disk_cache(dir);
  expect_scaled(*second.compile(scale_kernel(200, 2.5, "a", "b")), 200, 2.5f);
  EXPECT_EQ(second.stats().compiled, 0);
  EXPECT_EQ(second.stats().disk_hits, 1);
  // Another kernel is not answered by the first one's entry.
  expect_scaled(*second.compile(scale_kernel(200, 4.0)), 200, 4.0f);
  EXPECT_EQ(second.stats().compiled, 1);
  fs::remove_all(dir);
}

TEST(KernelCache, DamagedEntryIsReportedCompiledAgainAndReplaced) {
  const std::string dir = temp_dir();
  const tir::Func f = scale_kernel(96, -1.5);
  const std::string entry = KernelCache(dir).path(KernelCache::key(f, Jit::global().generator()));
  {
    Jit first;
    first.use_disk_cache(dir);
    first.compile(f);
  }
  for (const char *damage : {"truncate", "flip"}) {
    SCOPED_TRACE(damage);
    std::string bytes;
    {
      std::ifstream in(entry, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_GT(bytes.size(), 100u);
    if (std::string(damage) == "truncate")
      bytes.resize(bytes.size() - 7);
    else
      bytes[bytes.size() - 20] ^= 0x5a;  // inside the object code: only the checksum tells
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;

    std::vector<std::string> notes;
    Jit again;
    again.use_disk_cache(dir, [&](const std::string &m) { notes.push_back(m); });
    expect_scaled(*again.compile(f), 96, -1.5f);
    EXPECT_EQ(again.stats().disk_damaged, 1);
    EXPECT_EQ(again.stats().compiled, 1);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("is damaged"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find(entry), std::string::npos) << notes[0];

    Jit after;  // the entry was replaced by a sound one
    after.use_disk_cache(dir);
    expect_scaled(*after.compile(f), 96, -1.5f);
    EXPECT_EQ(after.stats().disk_hits, 1);
    EXPECT_EQ(after.stats().disk_damaged, 0);
  }
  fs::remove_all(dir);
}

TEST(KernelCache, UnwritableDirectoryIsReportedOnceAndKernelsStillRun) {
  const std::string file = temp_dir() + "/not-a-directory";
  std::ofstream(file) << "x";
  std::vector<std::string> notes;
  Jit jit;
  jit.use_disk_cache(file + "/cpu", [&](const std::string &m) { notes.push_back(m); });
  expect_scaled(*jit.compile(scale_kernel(32, 2.0)), 32, 2.0f);
  expect_scaled(*jit.compile(scale_kernel(48, 2.0)), 48, 2.0f);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("VACC_CACHE_DIR"), std::string::npos) << notes[0];
  fs::remove_all(fs::path(file).parent_path());
}

}  // namespace
}  // namespace vacc
