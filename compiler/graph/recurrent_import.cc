#include "recurrent_import.h"

#include <fmt/format.h>

#include <algorithm>

#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::graph {
namespace {

// Appends nodes of one recurrent node's expansion, each inferred as it is added.
class Builder {
 public:
  Builder(Graph &g, std::string prefix) : g_(g), prefix_(std::move(prefix)) {}

  // One operator's first output; `name` names it (default: the expansion's next name).
  Value *op(OpKind kind, std::vector<Value *> in, Attributes attrs = {},
            const std::string &name = "") {
    Value *out = g_.add_value(name.empty() ? next() : name, DType::kFloat32, {});
    Node *node = g_.add_node(kind, next(), std::move(in), {out}, std::move(attrs));
    infer_node(*node);
    return out;
  }
  Value *constant(Tensor t) { return g_.add_constant(next(), std::move(t)); }

  Value *gemm(Value *a, Value *b_transposed, Value *bias) {
    Attributes at;
    at.set("transB", int64_t{1});
    std::vector<Value *> in = {a, b_transposed};
    if (bias) in.push_back(bias);
    return op(OpKind::kGemm, in, at);
  }
  Value *gather(Value *x, Tensor indices, int64_t axis) {
    Attributes at;
    at.set("axis", axis);
    return op(OpKind::kGather, {x, constant(std::move(indices))}, at);
  }
  // Columns [k * h, (k + 1) * h) of a [batch, n] value: gate k.
  Value *gate(Value *x, int64_t k, int64_t h) {
    std::vector<int64_t> idx(h);
    for (int64_t i = 0; i < h; ++i) idx[i] = k * h + i;
    return gather(x, Tensor::from_vector<int64_t>({h}, idx), 1);
  }
  Value *reshape(Value *x, std::vector<int64_t> shape, const std::string &name = "") {
    const int64_t n = static_cast<int64_t>(shape.size());
    return op(OpKind::kReshape, {x, constant(Tensor::from_vector<int64_t>({n}, shape))}, {},
              name);
  }
  Value *concat(std::vector<Value *> parts, int64_t axis, const std::string &name = "") {
    Attributes at;
    at.set("axis", axis);
    return op(OpKind::kConcat, std::move(parts), at, name);
  }

 private:
  std::string next() { return fmt::format("{}/{}", prefix_, count_++); }
  Graph &g_;
  std::string prefix_;
  int count_ = 0;
};

enum class Cell { kLstm, kGru, kRnn };

struct Spec {
  Cell cell;
  int gates;                               // LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1
  std::vector<std::string> activations;    // per direction: LSTM f, g, h; GRU f, g; RNN f
};

// Input i, float32 (the weights may be initializers or computed: constant folding folds the
// slicing below where they are constants).
Value *float_input(const std::vector<Value *> &inputs, size_t i, const char *role) {
  if (i >= inputs.size() || !inputs[i]) fail("input {} ({}) is missing", i, role);
  if (inputs[i]->dtype != DType::kFloat32)
    fail("input {} ({}) '{}' is {}, not f32", i, role, inputs[i]->name,
         dtype_name(inputs[i]->dtype));
  return inputs[i];
}

std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

OpKind activation(const std::string &name) {
  if (name == "Sigmoid") return OpKind::kSigmoid;
  if (name == "Tanh") return OpKind::kTanh;
  if (name == "Relu") return OpKind::kRelu;
  fail("activation '{}' is not supported (Sigmoid, Tanh and Relu are)", name);
}

}  // namespace

bool is_recurrent_op(const std::string &op_type) {
  return op_type == "LSTM" || op_type == "GRU" || op_type == "RNN";
}

std::vector<Value *> import_recurrent(Graph &graph, const onnx::NodeProto &node,
                                      const std::vector<Value *> &inputs) {
  const std::string &type = node.op_type();
  Spec spec;
  if (type == "LSTM") spec = {Cell::kLstm, 4, {"Sigmoid", "Tanh", "Tanh"}};
  else if (type == "GRU") spec = {Cell::kGru, 3, {"Sigmoid", "Tanh"}};
  else spec = {Cell::kRnn, 1, {"Tanh"}};
  // The attributes (activations is a list of strings).
  std::string direction = "forward";
  int64_t hidden = 0, linear_before_reset = 0;
  std::vector<std::string> activations;
  for (const auto &a : node.attribute()) {
    const std::string &n = a.name();
    if (n == "direction") direction = a.s();
    else if (n == "hidden_size") hidden = a.i();
    else if (n == "linear_before_reset") linear_before_reset = a.i();
    else if (n == "activations") activations.assign(a.strings().begin(), a.strings().end());
    else if (n == "layout" && a.i() != 0)
      fail("layout = {} (batch first) is not supported: export with the sequence first", a.i());
    else if (n == "input_forget" && a.i() != 0)
      fail("input_forget = {} (coupled input and forget gates) is not supported", a.i());
    else if (n == "layout" || n == "input_forget")
      continue;
    else
      fail("attribute '{}' is not supported (direction, hidden_size, activations{} are)", n,
           spec.cell == Cell::kGru ? ", linear_before_reset" : "");
  }
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    fail("direction '{}' must be forward, reverse or bidirectional", direction);
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const size_t per_direction = spec.activations.size();
  if (activations.empty())
    for (int64_t d = 0; d < D; ++d)
      activations.insert(activations.end(), spec.activations.begin(), spec.activations.end());
  if (activations.size() != per_direction * D)
    fail("activations has {} names; {} takes {} per direction, {} here", activations.size(), type,
         per_direction, per_direction * D);

  // Shapes: X [T, B, I], W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H].
  Value *x = inputs.at(0);
  if (!x || x->rank() != 3) fail("input X must be [sequence, batch, features]");
  const int64_t T = x->shape[0], B = x->shape[1], I = x->shape[2], G = spec.gates;
  Value *w = float_input(inputs, 1, "W");
  Value *r = float_input(inputs, 2, "R");
  if (hidden <= 0) hidden = r->rank() == 3 ? r->shape[2] : 0;
  const int64_t H = hidden;
  if (w->shape != Shape{D, G * H, I} || r->shape != Shape{D, G * H, H})
    fail("W is {} and R {}; with {} direction(s), hidden_size {} and {} features they must be "
         "{} and {}",
         shape_str(w->shape), shape_str(r->shape), D, H, I, shape_str({D, G * H, I}),
         shape_str({D, G * H, H}));
  Value *bias = inputs.size() > 3 && inputs[3] ? float_input(inputs, 3, "B") : nullptr;
  if (bias && bias->shape != Shape{D, 2 * G * H})
    fail("B is {}; it must be {}", shape_str(bias->shape), shape_str({D, 2 * G * H}));
  Value *h0 = inputs.size() > 5 ? inputs[5] : nullptr;
  Value *c0 = spec.cell == Cell::kLstm && inputs.size() > 6 ? inputs[6] : nullptr;
  for (Value *s : {h0, c0})
    if (s && s->shape != Shape{D, B, H})
      fail("initial state '{}' is {}; it must be {}", s->name, shape_str(s->shape),
           shape_str({D, B, H}));
  // Peepholes (LSTM): P [D, 3*H], the cell state's weights in the i, o and f gates.
  Value *peep = spec.cell == Cell::kLstm && inputs.size() > 7 && inputs[7]
                    ? float_input(inputs, 7, "P")
                    : nullptr;
  if (peep && peep->shape != Shape{D, 3 * H})
    fail("P is {}; it must be {}", shape_str(peep->shape), shape_str({D, 3 * H}));
  // sequence_lens [B]: each batch row's own length; a constant one is checked here, one given
  // at run time is taken as T where longer (a negative one as 0).
  Value *lens = inputs.size() > 4 ? inputs[4] : nullptr;
  if (lens) {
    if (lens->rank() != 1 || lens->shape[0] != B ||
        (lens->dtype != DType::kInt32 && lens->dtype != DType::kInt64))
      fail("input 4 (sequence_lens) is {} {}; it must be int32 [batch] ({})",
           dtype_name(lens->dtype), shape_str(lens->shape), B);
    if (lens->constant)
      for (int64_t i = 0; i < B; ++i)
        if (lens->constant->as_int(i) < 0 || lens->constant->as_int(i) > T)
          fail("sequence_lens[{}] is {}; a length is between 0 and the sequence's {}", i,
               lens->constant->as_int(i), T);
  }

  // Names of the expansion's values: the node's name (or its type and position, unnamed).
  Builder b(graph, node.name().empty() ? fmt::format("{}#{}", type, graph.nodes().size())
                                       : node.name());
  Value *sequence = b.reshape(x, {T * B, I});
  std::vector<std::vector<Value *>> ys(D, std::vector<Value *>(T));
  // With sequence_lens, per step s: whether each batch row is still inside its sequence
  // ([B, 1] bool), and the rows of a [T*B, n] value that hold each row's time L_b - 1 - s, where
  // a reversed row runs its own L_b steps backwards (row b's time is t*B + b; a row past its
  // length reads time 0, masked).
  Value *lens_col = nullptr, *batch_rows = nullptr;
  if (lens) {
    Attributes to_int64;
    to_int64.set("to", int64_t{onnx::TensorProto::INT64});
    Value *given = b.reshape(b.op(OpKind::kCast, {lens}, to_int64), {B, 1});
    Value *whole = b.constant(Tensor::scalar<int64_t>(T));
    lens_col = b.op(OpKind::kWhere, {b.op(OpKind::kLess, {whole, given}), whole, given});
    batch_rows = b.constant(Tensor::from_vector<int64_t>({B, 1}, range(0, B)));
  }
  // Each made once per step and shared by the directions.
  std::vector<Value *> inside_at(T, nullptr), reversed_at(T, nullptr);
  auto inside = [&](int64_t s) {
    if (!inside_at[s])
      inside_at[s] = b.op(OpKind::kLess, {b.constant(Tensor::scalar<int64_t>(s)), lens_col});
    return inside_at[s];
  };
  auto reversed_rows = [&](int64_t s) {
    if (reversed_at[s]) return reversed_at[s];
    Value *t =
        b.op(OpKind::kWhere,
             {inside(s), b.op(OpKind::kSub, {lens_col, b.constant(Tensor::scalar<int64_t>(s + 1))}),
              b.constant(Tensor::scalar<int64_t>(0))});
    Value *flat =
        b.op(OpKind::kAdd,
             {b.op(OpKind::kMul, {t, b.constant(Tensor::scalar<int64_t>(B))}), batch_rows});
    return reversed_at[s] = b.reshape(flat, {B});
  };
  Value *zeros = lens ? b.constant(Tensor(DType::kFloat32, {B, H})) : nullptr;
  std::vector<Value *> final_h(D), final_c(D);
  for (int64_t d = 0; d < D; ++d) {
    auto act = [&](size_t k) { return activation(activations[d * per_direction + k]); };
    const bool gru = spec.cell == Cell::kGru;
    // Rows [begin, end) of a weight or bias (its gates' share).
    auto rows = [&](Value *v, int64_t begin, int64_t end) {
      return b.gather(v, Tensor::from_vector<int64_t>({end - begin}, range(begin, end)), 0);
    };
    Value *w_d = b.gather(w, Tensor::scalar<int64_t>(d), 0);  // [G*H, I]
    Value *r_d = b.gather(r, Tensor::scalar<int64_t>(d), 0);  // [G*H, H]
    // Biases: W's and R's summed into the input product, except GRU's R bias of its h gate
    // with linear_before_reset, which the reset gate multiplies (it stays in R's product).
    Value *x_bias = nullptr, *r_bias = nullptr;
    if (bias) {
      Value *b_d = b.gather(bias, Tensor::scalar<int64_t>(d), 0);
      Value *wb = rows(b_d, 0, G * H), *rb = rows(b_d, G * H, 2 * G * H);
      if (gru && linear_before_reset) {
        std::vector<float> in_x(G * H, 1.0f), in_r(G * H, 0.0f);
        std::fill(in_x.begin() + 2 * H, in_x.end(), 0.0f);
        std::fill(in_r.begin() + 2 * H, in_r.end(), 1.0f);
        auto masked = [&](const std::vector<float> &mask) {
          return b.op(OpKind::kMul, {rb, b.constant(Tensor::from_vector<float>({G * H}, mask))});
        };
        x_bias = b.op(OpKind::kAdd, {wb, masked(in_x)});
        r_bias = masked(in_r);
      } else {
        x_bias = b.op(OpKind::kAdd, {wb, rb});
      }
    }
    Value *gx_all = b.reshape(b.gemm(sequence, w_d, x_bias), {T, B, G * H});
    // R's product: all gates at once, except GRU without linear_before_reset, whose h gate
    // multiplies r * H (its own Gemm below).
    Value *r_all = gru && !linear_before_reset ? rows(r_d, 0, 2 * H) : r_d;
    Value *rh = gru && !linear_before_reset ? rows(r_d, 2 * H, 3 * H) : nullptr;

    auto state = [&](Value *given) {
      if (given) return b.gather(given, Tensor::scalar<int64_t>(d), 0);
      return b.constant(Tensor(DType::kFloat32, {B, H}));
    };
    Value *h = state(h0);
    Value *c = spec.cell == Cell::kLstm ? state(c0) : nullptr;
    // The peepholes of this direction: P_i, P_o, P_f, each [H].
    Value *p_d = peep ? b.gather(peep, Tensor::scalar<int64_t>(d), 0) : nullptr;
    auto peephole = [&](Value *gate, int64_t k, Value *cell) {
      if (!p_d) return gate;
      return b.op(OpKind::kAdd, {gate, b.op(OpKind::kMul, {rows(p_d, k * H, (k + 1) * H), cell})});
    };
    const bool backwards = d == 1 || direction == "reverse";
    Value *gx_rows = lens && backwards ? b.reshape(gx_all, {T * B, G * H}) : nullptr;
    std::vector<Value *> outs_by_step(T);
    for (int64_t step = 0; step < T; ++step) {
      const int64_t t = backwards ? T - 1 - step : step;
      Value *gx = gx_rows ? b.op(OpKind::kGather, {gx_rows, reversed_rows(step)})
                          : b.gather(gx_all, Tensor::scalar<int64_t>(t), 0);
      Value *gh = b.gemm(h, r_all, r_bias);
      Value *h_before = h, *c_before = c;
      if (spec.cell == Cell::kLstm) {
        Value *g = b.op(OpKind::kAdd, {gx, gh});
        Value *i = b.op(act(0), {peephole(b.gate(g, 0, H), 0, c)});
        // The output gate's peephole reads the new cell state.
        Value *o = p_d ? nullptr : b.op(act(0), {b.gate(g, 1, H)});
        Value *f = b.op(act(0), {peephole(b.gate(g, 2, H), 2, c)});
        Value *cand = b.op(act(1), {b.gate(g, 3, H)});
        c = b.op(OpKind::kAdd, {b.op(OpKind::kMul, {f, c}), b.op(OpKind::kMul, {i, cand})});
        if (p_d) o = b.op(act(0), {peephole(b.gate(g, 1, H), 1, c)});
        h = b.op(OpKind::kMul, {o, b.op(act(2), {c})});
      } else if (gru) {
        Value *z = b.op(act(0), {b.op(OpKind::kAdd, {b.gate(gx, 0, H), b.gate(gh, 0, H)})});
        Value *rg = b.op(act(0), {b.op(OpKind::kAdd, {b.gate(gx, 1, H), b.gate(gh, 1, H)})});
        Value *hh_in = linear_before_reset
                           ? b.op(OpKind::kMul, {rg, b.gate(gh, 2, H)})
                           : b.gemm(b.op(OpKind::kMul, {rg, h}), rh, nullptr);
        Value *hh = b.op(act(1), {b.op(OpKind::kAdd, {b.gate(gx, 2, H), hh_in})});
        // (1 - z) * hh + z * h, as hh + z * (h - hh).
        h = b.op(OpKind::kAdd, {hh, b.op(OpKind::kMul, {z, b.op(OpKind::kSub, {h, hh})})});
      } else {
        h = b.op(act(0), {b.op(OpKind::kAdd, {gx, gh})});
      }
      if (lens) {
        // A row past its length keeps its state and outputs zeros.
        Value *in = inside(step);
        h = b.op(OpKind::kWhere, {in, h, h_before});
        if (c) c = b.op(OpKind::kWhere, {in, c, c_before});
        outs_by_step[step] = b.op(OpKind::kWhere, {in, h, zeros});
      }
      ys[d][t] = h;
    }
    if (lens) {
      if (!backwards) {
        ys[d] = outs_by_step;
      } else {
        // Row b's output at time t is its step L_b - 1 - t (zeros past its length).
        Value *by_step = b.concat(outs_by_step, 0);  // [T*B, H], step-major
        for (int64_t t = 0; t < T; ++t)
          ys[d][t] = b.op(OpKind::kWhere,
                          {inside(t), b.op(OpKind::kGather, {by_step, reversed_rows(t)}), zeros});
      }
    }
    final_h[d] = h;
    final_c[d] = c;
  }
  // The outputs: Y [T, D, B, H], Y_h and Y_c [D, B, H].
  auto out_name = [&](int k) { return k < node.output_size() ? node.output(k) : std::string(); };
  std::vector<Value *> outs(node.output_size(), nullptr);
  if (!out_name(0).empty()) {
    std::vector<Value *> steps;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<Value *> dirs;
      for (int64_t d = 0; d < D; ++d) dirs.push_back(b.reshape(ys[d][t], {1, 1, B, H}));
      steps.push_back(D == 1 ? dirs[0] : b.concat(dirs, 1));
    }
    outs[0] = b.concat(steps, 0, out_name(0));
  }
  auto stack = [&](const std::vector<Value *> &per_direction, const std::string &name) {
    std::vector<Value *> parts;
    for (Value *v : per_direction) parts.push_back(b.reshape(v, {1, B, H}));
    return b.concat(parts, 0, name);
  };
  if (!out_name(1).empty()) outs[1] = stack(final_h, out_name(1));
  if (spec.cell == Cell::kLstm && !out_name(2).empty()) outs[2] = stack(final_c, out_name(2));
  return outs;
}

}  // namespace vacc::graph
