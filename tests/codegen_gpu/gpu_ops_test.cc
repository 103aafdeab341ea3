// Every GPU operator (ops/gpu) on seeded random data: its loop IR run sequentially by the CPU
// backend against plain C++ (the sequential meaning is the GPU's, so this checks the schedule,
// bounds, guards and reductions without a GPU); its PTX generated and, where ptxas exists,
// assembled for sm_80 and sm_90; run on the GPU and compared with the CPU where a GPU exists.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>

#include "gpu_test_util.h"
#include "vacc/host/gpu_kernels.h"
#include "vacc/codegen/cpu/jit.h"
#include "vacc/codegen/gpu/ptx.h"
#include "vacc/ops/gpu/ops.h"

namespace vacc {
namespace {

using Buffers = std::vector<std::vector<float>>;

struct OpCase {
  std::string name;
  std::function<tir::Func()> make;
  // Computes the last buffer (the output) from the others.
  std::function<void(Buffers &)> reference;
  double tolerance = 1e-5;
};

Buffers random_buffers(const tir::Func &f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  Buffers b;
  for (const tir::Buffer &p : f.params) {
    b.emplace_back(static_cast<size_t>(p->elems()));
    for (float &x : b.back()) x = d(rng);
  }
  std::fill(b.back().begin(), b.back().end(), 0.0f);
  return b;
}

std::vector<void *> pointers(Buffers &b) {
  std::vector<void *> p;
  for (auto &v : b) p.push_back(v.data());
  return p;
}

void expect_near(const std::vector<float> &got, const std::vector<float> &want, double tol,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > tol * std::max(1.0f, std::abs(want[i]))) {
      if (++bad <= 5)
        ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

// ------------------------------------------------------------------------ references

void dense_ref(Buffers &b, int64_t m, int64_t n, int64_t k, bool tb, bool bias) {
  const auto &A = b[0], &B = b[1];
  auto &Y = b.back();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? b[2][j] : 0;
      for (int64_t r = 0; r < k; ++r)
        s += double(A[i * k + r]) * (tb ? B[j * k + r] : B[r * n + j]);
      Y[i * n + j] = float(s);
    }
}

void conv_ref(Buffers &b, const ops::gpu::Conv2dShape &c, bool bias) {
  const int64_t oh = c.out_h(), ow = c.out_w(), cg = c.c / c.groups, mg = c.m / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double s = bias ? b[2][m] : 0;
          for (int64_t rc = 0; rc < cg; ++rc)
            for (int64_t kh = 0; kh < c.kh; ++kh)
              for (int64_t kw = 0; kw < c.kw; ++kw) {
                int64_t iy = y * c.stride_h + kh * c.dilation_h - c.pad_top;
                int64_t ix = x * c.stride_w + kw * c.dilation_w - c.pad_left;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                int64_t ch = (m / mg) * cg + rc;
                s += double(b[0][((n * c.c + ch) * c.h + iy) * c.w + ix]) *
                     b[1][((m * cg + rc) * c.kh + kh) * c.kw + kw];
              }
          b.back()[((n * c.m + m) * oh + y) * ow + x] = float(s);
        }
}

void pool_ref(Buffers &b, const ops::gpu::Pool2dShape &p, int kind /*0 max, 1 avg, 2 avg+pad*/) {
  const int64_t oh = p.out_h(), ow = p.out_w();
  for (int64_t nc = 0; nc < p.n * p.c; ++nc)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        double acc = kind == 0 ? -INFINITY : 0;
        int cells = 0;
        for (int64_t kh = 0; kh < p.kh; ++kh)
          for (int64_t kw = 0; kw < p.kw; ++kw) {
            int64_t iy = y * p.stride_h + kh - p.pad_top, ix = x * p.stride_w + kw - p.pad_left;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
            float v = b[0][(nc * p.h + iy) * p.w + ix];
            acc = kind == 0 ? std::max(acc, double(v)) : acc + v;
            ++cells;
          }
        if (kind == 1) acc /= cells;
        if (kind == 2) acc /= double(p.kh * p.kw);
        b.back()[(nc * oh + y) * ow + x] = float(acc);
      }
}

void softmax_ref(Buffers &b, int64_t outer, int64_t len, int64_t inner, bool log = false) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t l) { return (o * len + l) * inner + i; };
      double mx = -INFINITY, sum = 0;
      for (int64_t l = 0; l < len; ++l) mx = std::max(mx, double(b[0][at(l)]));
      for (int64_t l = 0; l < len; ++l) sum += std::exp(b[0][at(l)] - mx);
      for (int64_t l = 0; l < len; ++l)
        b.back()[at(l)] =
            float(log ? b[0][at(l)] - mx - std::log(sum) : std::exp(b[0][at(l)] - mx) / sum);
    }
}

void layer_norm_ref(Buffers &b, int64_t rows, int64_t cols, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += b[0][r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += std::pow(b[0][r * cols + c] - mean, 2);
    var /= cols;
    for (int64_t c = 0; c < cols; ++c)
      b.back()[r * cols + c] =
          float((b[0][r * cols + c] - mean) / std::sqrt(var + eps) * b[1][c] + b[2][c]);
  }
}

double unary_ref(ops::gpu::Unary op, double x) {
  switch (op) {
    case ops::gpu::Unary::kRelu:
      return std::max(x, 0.0);
    case ops::gpu::Unary::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case ops::gpu::Unary::kTanh:
      return std::tanh(x);
    case ops::gpu::Unary::kExp:
      return std::exp(x);
    case ops::gpu::Unary::kGelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ops::gpu::Unary::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ops::gpu::Unary::kSoftplus:
      return std::log(1 + std::exp(x));
    case ops::gpu::Unary::kSoftsign:
      return x / (1 + std::abs(x));
  }
  return 0;
}

std::vector<OpCase> cases() {
  using namespace ops::gpu;
  std::vector<OpCase> v;
  auto dense_case = [&](std::string name, int64_t m, int64_t n, int64_t k, bool tb, bool bias) {
    v.push_back({name, [=] { return dense(m, n, k, tb, bias); },
                 [=](Buffers &b) { dense_ref(b, m, n, k, tb, bias); }, 1e-4});
  };
  dense_case("dense_tiled", 128, 128, 64, false, false);
  dense_case("dense_ragged_bias", 130, 70, 50, false, true);
  dense_case("dense_batch1_transb", 1, 100, 300, true, true);
  auto conv_case = [&](std::string name, Conv2dShape c, bool bias) {
    v.push_back(
        {name, [=] { return conv2d(c, bias); }, [=](Buffers &b) { conv_ref(b, c, bias); }, 1e-4});
  };
  conv_case("conv3x3_pad", {2, 5, 13, 11, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, true);
  conv_case("conv_stride2_64ch", {1, 16, 16, 16, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, false);
  conv_case("conv_groups_dilated", {1, 6, 10, 10, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3}, true);
  Pool2dShape p{2, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1};
  v.push_back({"max_pool", [=] { return max_pool2d(p); }, [=](Buffers &b) { pool_ref(b, p, 0); }});
  v.push_back(
      {"avg_pool", [=] { return avg_pool2d(p, false); }, [=](Buffers &b) { pool_ref(b, p, 1); }});
  v.push_back({"avg_pool_include_pad", [=] { return avg_pool2d(p, true); },
               [=](Buffers &b) { pool_ref(b, p, 2); }});
  v.push_back({"global_avg_pool", [] { return global_avg_pool(2, 3, 49); },
               [](Buffers &b) {
                 for (int r = 0; r < 6; ++r) {
                   double s = 0;
                   for (int i = 0; i < 49; ++i) s += b[0][r * 49 + i];
                   b.back()[r] = float(s / 49);
                 }
               }});
  v.push_back({"softmax_rows", [] { return softmax(3, 1000, 1); },
               [](Buffers &b) { softmax_ref(b, 3, 1000, 1); }});
  v.push_back({"softmax_inner_axis", [] { return softmax(2, 10, 3); },
               [](Buffers &b) { softmax_ref(b, 2, 10, 3); }});
  v.push_back({"log_softmax_rows", [] { return softmax(3, 1000, 1, true); },
               [](Buffers &b) { softmax_ref(b, 3, 1000, 1, true); }});
  v.push_back({"layer_norm", [] { return layer_norm(4, 300, 1e-5); },
               [](Buffers &b) { layer_norm_ref(b, 4, 300, 1e-5); }, 1e-4});
  for (auto [name, op] :
       std::vector<std::pair<std::string, Unary>>{{"relu", Unary::kRelu},
                                                  {"sigmoid", Unary::kSigmoid},
                                                  {"tanh", Unary::kTanh},
                                                  {"gelu", Unary::kGelu},
                                                  {"gelu_tanh", Unary::kGeluTanh},
                                                  {"softplus", Unary::kSoftplus},
                                                  {"softsign", Unary::kSoftsign}}) {
    v.push_back({name, [op = op] { return unary(op, 1000); },
                 [op = op](Buffers &b) {
                   for (size_t i = 0; i < b[0].size(); ++i) b[1][i] = float(unary_ref(op, b[0][i]));
                 },
                 2e-6});
  }
  v.push_back({"add_channel_bias", [] { return binary(Binary::kAdd, 2, 3, 25); },
               [](Buffers &b) {
                 for (int i = 0; i < 150; ++i) b[2][i] = b[0][i] + b[1][(i / 25) % 3];
               }});
  v.push_back({"div_same_shape", [] { return binary(Binary::kDiv, 1, 300, 1); },
               [](Buffers &b) {
                 for (int i = 0; i < 300; ++i) b[2][i] = b[0][i] / b[1][i];
               }});
  return v;
}

class GpuOp : public ::testing::TestWithParam<OpCase> {};

// The loop IR, run sequentially on the CPU, equals plain C++.
TEST_P(GpuOp, SequentialMeaningMatchesReference) {
  const OpCase &c = GetParam();
  tir::Func f = c.make();
  Buffers ref = random_buffers(f, 7), got = ref;
  c.reference(ref);
  codegen::cpu::Jit::global().compile(f)->run(pointers(got));
  expect_near(got.back(), ref.back(), c.tolerance, c.name + " (CPU backend)");
}

// PTX for sm_80 with one entry per kernel, assembled by ptxas for sm_80 and sm_90.
TEST_P(GpuOp, PtxAssemblesForSm80AndSm90) {
  const OpCase &c = GetParam();
  codegen::gpu::Module m = codegen::gpu::compile(c.make());
  ASSERT_FALSE(m.kernels.empty());
  EXPECT_NE(m.ptx.find(".target sm_80"), std::string::npos) << m.ptx;
  for (const auto &k : m.kernels) {
    EXPECT_NE(m.ptx.find(".entry " + k.name), std::string::npos) << k.name << "\n" << m.ptx;
  }
  std::string ptxas = test::find_ptxas();
  if (ptxas.empty()) GTEST_SKIP() << test::kNoPtxas;
  char dir[] = "/tmp/vacc_ptx_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string file = std::string(dir) + "/" + c.name + ".ptx";
  std::ofstream(file) << m.ptx;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string cmd = ptxas + " -arch=" + arch + " " + file + " -o " + dir + "/out.cubin 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    EXPECT_EQ(pclose(p), 0) << cmd << "\n" << out;
  }
  std::filesystem::remove_all(dir);
}

// On the GPU, the outputs equal the CPU backend's (to float tolerance: the GPU's exp is an
// approximation and its sums run in another order).
TEST_P(GpuOp, GpuMatchesCpuBackend) {
  const OpCase &c = GetParam();
  std::string why;
  runtime::GpuDevice *device = test::gpu(&why);
  if (!device) GTEST_SKIP() << why;
  tir::Func f = c.make();
  Buffers cpu = random_buffers(f, 11), gpu = cpu;
  codegen::cpu::Jit::global().compile(f)->run(pointers(cpu));
  host::GpuFunction(*device, f).run(pointers(gpu));
  expect_near(gpu.back(), cpu.back(), std::max(c.tolerance, 1e-4), c.name + " (GPU)");
}

// compile() caches modules by structure: a second Func of the same structure gets the first's
// kernels, whose bodies store to the first Func's buffers. Its output must still be copied back
// from the GPU (it once was not: every node after the first of its shape read zeros).
TEST(GpuProgram, OutputCopiedBackForEveryFuncSharingACachedModule) {
  for (int round = 0; round < 3; ++round) {
    tir::Func f = ops::gpu::unary(ops::gpu::Unary::kRelu, 1000);
    codegen::gpu::Module m = codegen::gpu::compile(f);
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels[0].func.params.back(), f.params.back())
        << "round " << round << ": the kernel names this Func's output";
    runtime::GpuProgram p = host::gpu_program(m);
    ASSERT_EQ(p.written.size(), f.params.size());
    EXPECT_FALSE(p.written.front()) << "round " << round << ": the input is only read";
    EXPECT_TRUE(p.written.back()) << "round " << round << ": the output is written";
  }
}

// A resident buffer (a weight) is copied to the GPU once: later runs use that copy, whatever
// the host buffer holds by then, and give the CPU backend's result on the original data.
TEST(GpuFunction, ResidentBufferIsCopiedOnce) {
  std::string why;
  runtime::GpuDevice *device = test::gpu(&why);
  if (!device) GTEST_SKIP() << why;
  tir::Func f = ops::gpu::dense(70, 40, 33, false, false);
  Buffers cpu = random_buffers(f, 5), gpu = cpu;
  codegen::cpu::Jit::global().compile(f)->run(pointers(cpu));
  host::GpuFunction fn(*device, f);
  fn.keep_resident(1, gpu[1].data());
  std::fill(gpu[1].begin(), gpu[1].end(), 0.0f);
  fn.run(pointers(gpu));
  expect_near(gpu.back(), cpu.back(), 1e-4, "first run");
  std::fill(gpu.back().begin(), gpu.back().end(), 0.0f);
  fn.run(pointers(gpu));
  expect_near(gpu.back(), cpu.back(), 1e-4, "second run");
}

INSTANTIATE_TEST_SUITE_P(Ops, GpuOp, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace vacc
