// The recurrent operators' sequence_lens and LSTM's peepholes (recurrent_import.h), against the
// operators without sequence_lens: every batch row of a run with sequence_lens equals the same
// model run on that row alone, cut to its length (the whole-length path, which ONNX's node tests
// check), with zeros past its length in Y; Y_h and Y_c are the state after the row's last step
// (its initial state for a length of 0). LSTM, GRU and RNN, every direction, the lengths as a
// constant and as a graph input, on the reference executor and the LLVM CPU backend.
// (Peepholes themselves: ONNX's test_lstm_with_peepholes in the conformance tests.)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <random>

#include "onnx_model_builder.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/ops/cpu/executor.h"

namespace vacc::graph::test {
namespace {

constexpr int64_t kT = 5, kI = 3, kH = 4;

struct Case {
  std::string op, direction;
  bool runtime_lens = false, peepholes = false;
};

int64_t gates(const std::string &op) {
  return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}
int64_t directions(const Case &c) {
  return c.direction == "bidirectional" ? 2 : 1;
}

// The model over x [t, batch, I] with initial_h (and initial_c) as graph inputs; with `lens`
// (given: its values as a constant, or empty: a graph input "lens").
onnx::ModelProto recurrent(const Case &c, int64_t t, int64_t batch, bool with_lens,
                           const std::vector<int64_t> &lens) {
  const int64_t D = directions(c), G = gates(c.op);
  auto m = model_with_input(14, onnx::TensorProto::FLOAT, {t, batch, kI});
  add_random_initializer(m, "w", {D, G * kH, kI}, 1, 0.8f);
  add_random_initializer(m, "r", {D, G * kH, kH}, 2, 0.8f);
  add_random_initializer(m, "b", {D, 2 * G * kH}, 3, 0.8f);
  if (with_lens) {
    if (c.runtime_lens) {
      add_graph_input(m, "lens", onnx::TensorProto::INT32, {batch});
    } else {
      auto *l = m.mutable_graph()->add_initializer();
      l->set_name("lens");
      l->set_data_type(onnx::TensorProto::INT32);
      l->add_dims(batch);
      for (int64_t v : lens) l->add_int32_data(static_cast<int32_t>(v));
    }
  }
  add_graph_input(m, "h0", onnx::TensorProto::FLOAT, {D, batch, kH});
  if (c.op == "LSTM") add_graph_input(m, "c0", onnx::TensorProto::FLOAT, {D, batch, kH});
  if (c.peepholes) add_random_initializer(m, "p", {D, 3 * kH}, 4, 0.8f);
  auto *n = m.mutable_graph()->add_node();
  n->set_op_type(c.op);
  n->set_name("cell");
  for (const char *in : {"x", "w", "r", "b"}) n->add_input(in);
  n->add_input(with_lens ? "lens" : "");
  n->add_input("h0");
  if (c.op == "LSTM") {
    n->add_input("c0");
    if (c.peepholes) n->add_input("p");
  }
  std::vector<std::string> outs = {"y", "y_h"};
  if (c.op == "LSTM") outs.push_back("y_c");
  for (const auto &o : outs) {
    n->add_output(o);
    m.mutable_graph()->add_output()->set_name(o);
  }
  add_int(n, "hidden_size", kH);
  add_string(n, "direction", c.direction);
  return m;
}

Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Row b of [..., batch, ...] at axis `axis` (1 for x and the states).
Tensor row(const Tensor &t, int64_t b, int64_t length = -1) {
  Shape s = t.shape();
  const int64_t outer = length >= 0 ? length : s[0], batch = s[1];
  int64_t inner = 1;
  for (size_t i = 2; i < s.size(); ++i) inner *= s[i];
  s[0] = outer;
  s[1] = 1;
  Tensor r(DType::kFloat32, s);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      r.data<float>()[o * inner + i] = t.data<float>()[(o * batch + b) * inner + i];
  return r;
}

using Run = std::vector<Tensor> (*)(const Graph &, const std::vector<Tensor> &);
std::vector<Tensor> on_reference(const Graph &g, const std::vector<Tensor> &in) {
  return ReferenceExecutor(g).run(in);
}
std::vector<Tensor> on_cpu(const Graph &g, const std::vector<Tensor> &in) {
  return ops::cpu::CpuExecutor(g).run(in);
}

void check(const Case &c, Run run, const char *executor) {
  SCOPED_TRACE(fmt::format("{} {} lens {} peepholes {} on {}", c.op, c.direction,
                           c.runtime_lens ? "at run time" : "constant", c.peepholes, executor));
  const std::vector<int64_t> lens = {5, 2, 0, 3};
  const int64_t B = static_cast<int64_t>(lens.size()), D = directions(c);
  const bool lstm = c.op == "LSTM";
  const Tensor x = random_tensor({kT, B, kI}, 10), h0 = random_tensor({D, B, kH}, 11),
               c0 = random_tensor({D, B, kH}, 12);
  Tensor lens_t(DType::kInt32, {B});
  for (int64_t b = 0; b < B; ++b) lens_t.data<int32_t>()[b] = static_cast<int32_t>(lens[b]);

  const Graph g = import_onnx_bytes(recurrent(c, kT, B, true, lens).SerializeAsString(), "m");
  std::vector<Tensor> in = {x};
  if (c.runtime_lens) in.push_back(lens_t);
  in.push_back(h0);
  if (lstm) in.push_back(c0);
  const std::vector<Tensor> got = run(g, in);
  ASSERT_EQ(got.size(), lstm ? 3u : 2u);
  const Tensor &y = got[0];  // [T, D, B, H]
  ASSERT_EQ(y.shape(), (Shape{kT, D, B, kH}));

  for (int64_t b = 0; b < B; ++b) {
    const int64_t L = lens[b];
    // The row alone, cut to its length, without sequence_lens.
    std::vector<Tensor> want;
    if (L > 0) {
      Case whole = c;
      whole.runtime_lens = false;
      const Graph gb =
          import_onnx_bytes(recurrent(whole, L, 1, false, {}).SerializeAsString(), "row");
      std::vector<Tensor> rin = {row(x, b, L), row(h0, b)};
      if (lstm) rin.push_back(row(c0, b));
      want = ReferenceExecutor(gb).run(rin);
    }
    for (int64_t t = 0; t < kT; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t k = 0; k < kH; ++k) {
          const float v = y.data<float>()[((t * D + d) * B + b) * kH + k];
          const float w = t < L ? want[0].data<float>()[(t * D + d) * kH + k] : 0.0f;
          EXPECT_NEAR(v, w, 1e-5) << "Y at t " << t << " d " << d << " row " << b;
        }
    for (size_t s = 1; s < got.size(); ++s)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t k = 0; k < kH; ++k) {
          const float v = got[s].data<float>()[(d * B + b) * kH + k];
          const Tensor &initial = s == 1 ? h0 : c0;
          const float w = L > 0 ? want[s].data<float>()[d * kH + k]
                                : initial.data<float>()[(d * B + b) * kH + k];
          EXPECT_NEAR(v, w, 1e-5) << (s == 1 ? "Y_h" : "Y_c") << " d " << d << " row " << b;
        }
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char *op : {"LSTM", "GRU", "RNN"})
    for (const char *direction : {"forward", "reverse", "bidirectional"})
      for (bool runtime : {false, true})
        all.push_back({op, direction, runtime, std::string(op) == "LSTM" && runtime});
  return all;
}

TEST(RecurrentSequenceLens, EachRowIsItsOwnSequenceOnTheReferenceExecutor) {
  for (const Case &c : cases()) check(c, on_reference, "the reference executor");
}

TEST(RecurrentSequenceLens, EachRowIsItsOwnSequenceOnTheCpuBackend) {
  for (const Case &c : cases()) check(c, on_cpu, "the LLVM CPU backend");
}

}  // namespace
}  // namespace vacc::graph::test
