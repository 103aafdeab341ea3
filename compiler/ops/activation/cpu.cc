// Element-wise activations and tests on the CPU: Elu, Selu, Celu, Softplus, Softsign,
// ThresholdedRelu, Shrink, Round (half to even), Sign, PRelu (slope broadcast), IsNaN and IsInf,
// as the graph reference computes them.
#include <cmath>
#include <limits>

#include "ops/activation/compute.h"
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;

Expr exp_minus_one(Expr x, DataType t) {
  return call(tir::CallOp::kExp, x) - fconst(t, 1.0);
}

Expr activate(const Node &node, Expr x, DataType t) {
  auto attr = [&](const char *name, float fallback) {
    return fconst(t, node.attrs.get_float(name, fallback));
  };
  const Expr zero = iconst(t, 0);
  switch (node.op) {
    case OpKind::kElu:
      return tir::select(x < zero, attr("alpha", 1.0f) * exp_minus_one(x, t), x);
    case OpKind::kSelu:
      return attr("gamma", 1.05070102214813232421875f) *
             tir::select(x <= zero, attr("alpha", 1.67326319217681884765625f) * exp_minus_one(x, t),
                         x);
    case OpKind::kCelu: {
      const Expr alpha = attr("alpha", 1.0f);
      return tir::max(zero, x) + tir::min(zero, alpha * exp_minus_one(x / alpha, t));
    }
    case OpKind::kSoftplus:
      return compute::softplus(x);
    case OpKind::kSoftsign:
      return compute::softsign(x);
    case OpKind::kThresholdedRelu:
      return tir::select(x > attr("alpha", 1.0f), x, zero);
    case OpKind::kShrink: {
      const Expr lambd = attr("lambd", 0.5f), bias = attr("bias", 0.0f);
      return tir::select(x < zero - lambd, x + bias, tir::select(x > lambd, x - bias, zero));
    }
    case OpKind::kRound:
      return call(tir::CallOp::kRound, x);
    case OpKind::kSign:
      return tir::select(x > zero, iconst(t, 1), tir::select(x < zero, iconst(t, -1), zero));
    default:
      VACC_CHECK(false) << "activate: " << graph::op_name(node.op);
      return x;
  }
}

CpuKernel build_activation(const Node &node) {
  KernelBuilder kb(node);
  const Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  const DataType in_t = kb.in_type(0);
  Tensor out;
  switch (node.op) {
    case OpKind::kPRelu: {
      Tensor a = kb.input(0), b = kb.input(1);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr x = broadcast_read(a, i), y = broadcast_read(b, i);
        return tir::select(x < iconst(in_t, 0), x * y, x);
      });
      break;
    }
    default: {
      Tensor x = kb.input(0, out_shape);
      const bool pos = node.attrs.get_int("detect_positive", 1) != 0;
      const bool neg = node.attrs.get_int("detect_negative", 1) != 0;
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr v = (*x)(std::vector<Expr>(i.begin(), i.end()));
        switch (node.op) {
          case OpKind::kIsNaN:
            return tir::ne(v, v);
          case OpKind::kIsInf: {
            const Expr inf = fconst(in_t, std::numeric_limits<double>::infinity());
            Expr hit = tir::make_const(DataType::bool_(), 0);
            if (pos) hit = tir::eq(v, inf);
            if (neg)
              hit = pos ? hit || tir::eq(v, fconst(in_t, -HUGE_VAL))
                        : tir::eq(v, fconst(in_t, -HUGE_VAL));
            return hit;
          }
          default:
            return activate(node, v, in_t);
        }
      });
    }
  }
  return kb.finish_elementwise(out);
}

}  // namespace

void add_activation_lowerings(std::vector<CpuLowering> &lowerings) {
  for (OpKind op : {OpKind::kElu, OpKind::kSelu, OpKind::kCelu, OpKind::kSoftplus,
                    OpKind::kSoftsign, OpKind::kThresholdedRelu, OpKind::kShrink, OpKind::kRound,
                    OpKind::kSign, OpKind::kPRelu, OpKind::kIsNaN, OpKind::kIsInf}) {
    lowerings.push_back({op, build_activation});
  }
}

}  // namespace vacc::ops::cpu
