// vacc.QConvChain's definition (graph/conv_chain.h): everything through its two vacc.QConv
// parts, so the chain computes exactly what the pair it replaced computed.
#include <fmt/format.h>

#include "graph/registry/families.h"
#include "vacc/graph/conv_chain.h"
#include "vacc/support/error.h"

namespace vacc::graph {
namespace {

constexpr const char *kPrefix = "first_";

}  // namespace

Attributes conv_chain_attrs(const Node &first, const Node &second) {
  Attributes a = second.attrs;
  for (const auto &[name, value] : first.attrs.all()) a.set(kPrefix + name, value);
  const Value &mid = *first.outputs[0];
  // The intermediate's shape and whether it is blocked (its blocks are the first's own
  // out_block_n and out_block_c, pack_layout's).
  a.set("first_out_shape", mid.shape);
  a.set("first_out_blocked", static_cast<int64_t>(mid.layout.blocked));
  a.set("first_name", first.name);
  return a;
}

std::unique_ptr<ConvChainParts> conv_chain_parts(const Node &chain) {
  if (chain.inputs.size() < 5 || chain.inputs.size() > 6 || chain.outputs.size() != 1)
    fail(
        "vacc.QConvChain takes 5 or 6 inputs (x, w1, b1, w2, b2[, skip]) and has 1 output; it "
        "has {} and {}",
        chain.inputs.size(), chain.outputs.size());
  auto p = std::make_unique<ConvChainParts>();
  p->mid.name = chain.attrs.get_string("first_name", chain.name + ".first") + ".out";
  p->mid.dtype = DType::kInt8;
  p->mid.shape = chain.attrs.get_ints("first_out_shape");
  p->mid.layout = {chain.attrs.get_int("first_out_blocked", 0) != 0,
                   static_cast<int>(chain.attrs.get_int("first_out_block_n", 1)),
                   static_cast<int>(chain.attrs.get_int("first_out_block_c", 1))};  // pack's
  const std::string prefix = kPrefix;
  p->first.op = p->second.op = OpKind::kQConv;
  p->first.name = chain.attrs.get_string("first_name", chain.name + ".first");
  p->second.name = chain.name;
  p->first.target = p->second.target = chain.target;
  for (const auto &[name, value] : chain.attrs.all()) {
    if (name.rfind(prefix, 0) == 0)
      p->first.attrs.set(name.substr(prefix.size()), value);
    else
      p->second.attrs.set(name, value);
  }
  for (const char *own : {"out_shape", "out_blocked", "name"}) p->first.attrs.erase(own);
  p->first.inputs = {chain.inputs[0], chain.inputs[1], chain.inputs[2]};
  p->first.outputs = {&p->mid};
  p->second.inputs = {&p->mid, chain.inputs[3], chain.inputs[4]};
  if (chain.inputs.size() > 5) p->second.inputs.push_back(chain.inputs[5]);
  p->second.outputs = {chain.outputs[0]};
  return p;
}

namespace ops {
namespace {

void infer_qconv_chain(Node &n) {
  const std::unique_ptr<ConvChainParts> p = conv_chain_parts(n);
  const Shape mid = p->mid.shape;
  op_def(OpKind::kQConv).infer(p->first);
  if (p->mid.shape != mid)
    fail("the first convolution makes {} but the chain records its result as {}",
         shape_str(p->mid.shape), shape_str(mid));
  op_def(OpKind::kQConv).infer(p->second);
}

Outputs qconv_chain(const Node &node, const Inputs &in) {
  const std::unique_ptr<ConvChainParts> p = conv_chain_parts(node);
  const auto &qconv = op_def(OpKind::kQConv).reference;
  const Outputs mid = qconv(p->first, {in[0], in[1], in[2]});
  KernelInputs second = {&mid[0], in[3], in[4]};
  if (in.size() > 5) second.push_back(in[5]);
  return qconv(p->second, second);
}

int64_t qconv_chain_macs(const Node &node) {
  const std::unique_ptr<ConvChainParts> p = conv_chain_parts(node);
  const auto macs = op_def(OpKind::kQConv).macs;
  return macs(p->first) + macs(p->second);
}

}  // namespace

void add_conv_chain_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kQConvChain,
                  .name = "vacc.QConvChain",
                  .infer = infer_qconv_chain,
                  .reference = qconv_chain,
                  .macs = qconv_chain_macs,
                  .accel_operands = AccelOperands::kGroupedGemm});
}

}  // namespace ops
}  // namespace vacc::graph
