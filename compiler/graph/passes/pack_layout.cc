#include "vacc/graph/passes/pack_layout.h"

#include <map>
#include <unordered_map>

#include "graph/registry/families.h"
#include "vacc/graph/macs.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::graph {

namespace {

class Packer {
 public:
  Packer(Graph &g, const isa::HwConfig &config) : g_(g), config_(config) {}

  int run() {
    std::vector<Node *> nodes = g_.nodes();
    for (Node *node : nodes) {
      // Utilization counts the model's MACs, not the padded channels: record them first.
      if (!node->model_macs) node->model_macs = count_macs(*node);
      if (node->target == Target::kAccel) pack_node(node);
    }
    // Unpack at the borders: accelerator results read by the CPU or returned.
    for (Node *node : nodes) {
      if (node->target != Target::kAccel) {
        for (Value *&in : node->inputs) {
          if (in && in->layout.blocked) in = unpacked(in);
        }
      }
    }
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      Value *out = g_.outputs()[i];
      if (out->layout.blocked) g_.set_output(i, unpacked(out));
    }
    g_.sort_topologically();
    g_.verify();
    return transforms_;
  }

 private:
  Value *transform(OpKind op, Value *x, Attributes attrs, const std::string &suffix) {
    Value *out = g_.add_value(g_.unique_name(x->name + suffix), x->dtype, {});
    out->frac_bits = x->frac_bits;
    out->zero_point = x->zero_point;
    Node *node = g_.add_node(op, out->name, {x}, {out}, std::move(attrs));
    infer_node(*node);
    ++transforms_;
    return out;
  }

  Value *unpacked(Value *x) {
    auto it = unpacked_.find(x);
    if (it != unpacked_.end()) return it->second;
    Attributes attrs;
    attrs.set("block_n", int64_t{x->layout.block_n});
    attrs.set("block_c", int64_t{x->layout.block_c});
    attrs.set("shape", plain_.at(x));
    return unpacked_[x] = transform(OpKind::kUnpackNCHWnc, x, attrs, ".unpack");
  }

  // x in the blocked layout (bn, bc), converting as needed.
  Value *packed(Value *x, int bn, int bc) {
    Layout want{true, bn, bc};
    if (x->layout == want) return x;
    Value *plain = x->layout.blocked ? unpacked(x) : x;
    auto key = std::make_tuple(plain, bn, bc);
    auto it = packed_.find(key);
    if (it != packed_.end()) return it->second;
    Attributes attrs;
    attrs.set("block_n", int64_t{bn});
    attrs.set("block_c", int64_t{bc});
    Value *p = transform(OpKind::kPackNCHWnc, plain, attrs, ".pack");
    plain_[p] = plain->shape;
    return packed_[key] = p;
  }

  Value *padded_vector(Value *v, int64_t multiple) {
    const Tensor &t = *v->constant;
    int64_t n = (t.size() + multiple - 1) / multiple * multiple;
    Tensor out(t.dtype(), {n});
    std::memcpy(out.raw(), t.raw(), t.nbytes());
    return g_.add_constant(g_.unique_name(v->name + ".padded"), std::move(out));
  }

  void pack_node(Node *node) {
    int batch = config_.batch, bi = config_.block_in, bo = config_.block_out;
    Value *out = node->outputs[0];
    plain_[out] = out->shape;
    const AccelOperands operands = op_def(node->op).accel_operands;
    VACC_CHECK(operands != AccelOperands::kNone)
        << node->describe() << " is on the accelerator but its OpDef has no operand blocking";
    if (operands == AccelOperands::kOutputBlocks) {
      node->inputs[0] = packed(node->inputs[0], batch, bo);
      node->inputs[1] = packed(node->inputs[1], batch, bo);
    } else if (operands == AccelOperands::kWindow) {
      // Pools read their input as they write their output (an identity GEMM between them).
      node->inputs[0] = packed(node->inputs[0], batch, bo);
    } else {
      node->inputs[0] = packed(node->inputs[0], batch, bi);
      // A fused residual's skip tensor is read like the output is written.
      if (node->input(3)) node->inputs[3] = packed(node->inputs[3], batch, bo);
      Value *w = node->inputs[1];
      if (w->is_constant()) {
        Tensor wb = block_tensor(
            operands == AccelOperands::kGroupedGemm ? sliced_groups(node) : *w->constant, bo, bi);
        Value *wp = g_.add_constant(g_.unique_name(w->name + ".packed"), std::move(wb));
        wp->layout = {true, bo, bi};
        node->inputs[1] = wp;
      } else {
        // vacc.QMatMul's second operand, an activation: packed as weights are, at run time.
        node->inputs[1] = packed(w, bo, bi);
      }
      if (node->input(2)) node->inputs[2] = padded_vector(node->inputs[2], bo);
      // Per-channel requantization parameters are padded as the channels are.
      for (const char *key : {"shifts", "multipliers"}) {
        std::vector<int64_t> v = node->attrs.get_ints(key, {0});
        if (v.size() > 1) {
          v.resize((v.size() + bo - 1) / bo * bo, 0);
          node->attrs.set(key, v);
        }
      }
    }
    node->attrs.set("out_block_n", int64_t{batch});
    node->attrs.set("out_block_c", int64_t{bo});
    infer_node(*node);
  }

  // A grouped convolution's weight sliced into whole channel blocks (slice_weight_groups);
  // the node's group becomes the number of slices. Ungrouped: unchanged.
  Tensor sliced_groups(Node *node) {
    const int64_t group = node->attrs.get_int("group", 1);
    int64_t parts = 1;
    Tensor out = slice_weight_groups(*node->inputs[1]->constant, group, config_.block_in,
                                     config_.block_out, &parts);
    if (group != 1) node->attrs.set("group", parts);
    return out;
  }

  Graph &g_;
  const isa::HwConfig &config_;
  int transforms_ = 0;
  std::unordered_map<const Value *, Shape> plain_;  // plain shape of each blocked value
  std::unordered_map<Value *, Value *> unpacked_;
  std::map<std::tuple<Value *, int, int>, Value *> packed_;
};

}  // namespace

int pack_layout(Graph &graph, const isa::HwConfig &config) {
  return Packer(graph, config).run();
}

}  // namespace vacc::graph
