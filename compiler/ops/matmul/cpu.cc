// Matrix products: Gemm (transA/transB, alpha, beta, broadcast C), MatMul (NumPy batching and
// broadcasting, 1-D operands promoted), MatMulInteger, QLinearMatMul and vacc.QDense's int8
// reference semantics. A right operand read transposed is first copied to [K, N] so the
// accumulator tile reads its rows as vectors; the accumulator is a register tile of rows x
// columns (schedule_reduction) and the output stage applies alpha/beta/bias/requantization.
#include <cstring>

#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

CpuKernel build_matmul(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  bool integer = node.op != OpKind::kGemm && node.op != OpKind::kMatMul;
  size_t bi = node.op == OpKind::kQLinearMatMul ? 3 : 1;
  const graph::Value &av = kb.in_value(0), &bv = kb.in_value(bi);
  // vacc.QDense on blocked operands: computed on plain views, blocked again.
  bool blocked = av.layout.blocked;
  if (blocked != bv.layout.blocked || (blocked && node.op != OpKind::kQDense)) {
    kb.unsupported("a mix of packed (NCHWnc) and plain operands");
  }
  DataType at = tir_type(av.dtype), bt = tir_type(bv.dtype);
  if (!integer && (at != bt || at.is_bool() || at.bits < 32)) kb.unsupported(a_type(at) + " input");
  if (integer && (at.is_float() || bt.is_float())) kb.unsupported("a float input");
  DataType acc_t = integer ? tir::int32() : at;

  bool ta = false, tb = false;
  Tensor a, b;
  if (blocked) {
    a = unblock(kb.input(0));
    b = unblock(kb.input(bi));
  }
  Shape sa = blocked ? a->shape() : av.shape, sb = blocked ? b->shape() : bv.shape;
  if (node.op == OpKind::kGemm) {
    ta = node.attrs.get_int("transA", 0) != 0;
    tb = node.attrs.get_int("transB", 0) != 0;
    if (sa.size() != 2 || sb.size() != 2) kb.unsupported("operands that are not matrices");
  } else if (node.op == OpKind::kQDense) {
    tb = true;  // w is [M, K]
  } else {
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    // A batched A times a 2-D B is one product of all of A's rows (batch and M folded), the
    // output the same bytes: row tiles then span batch entries (ViT's [197, 1, 768] x
    // [768, 2304] was 197 products of one row, each reading all of B).
    if (sa.size() > 2 && sb.size() == 2 && !blocked) {
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < sa.size(); ++d) rows *= sa[d];
      sa = {rows, sa.back()};
    }
  }
  int64_t M = ta ? sa[sa.size() - 1] : sa[sa.size() - 2];
  int64_t K = ta ? sa[sa.size() - 2] : sa.back();
  int64_t N = tb ? sb[sb.size() - 2] : sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape batch = graph::broadcast_shapes(ba, bb);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  int rank = static_cast<int>(out_shape.size());

  if (!blocked) {
    a = kb.input(0, sa);
    b = kb.input(bi, sb);
  }
  (void)b;
  // Zero points: a's scalar (or per row), b's scalar or per column.
  Tensor azp, bzp;
  size_t azp_i = 2, bzp_i = node.op == OpKind::kQLinearMatMul ? 5 : 3;
  if (node.op == OpKind::kMatMulInteger || node.op == OpKind::kQLinearMatMul) {
    if (kb.has_input(azp_i)) azp = kb.input(azp_i, {graph::num_elements(kb.in_value(azp_i).shape)});
    if (kb.has_input(bzp_i)) bzp = kb.input(bzp_i, {graph::num_elements(kb.in_value(bzp_i).shape)});
  }
  auto batch_index = [&](const Shape &s, const std::vector<tir::Var> &i) {
    std::vector<Expr> idx;
    size_t lead = batch.size() - (s.size() - 2);
    for (size_t d = 0; d + 2 < s.size(); ++d)
      idx.push_back(s[d] == 1 ? Expr(0) : Expr(i[lead + d]));
    return idx;
  };
  int64_t lanes = native_lanes(acc_t);
  int64_t vt = N <= 64 ? N : divisor_at_most(N, 2 * lanes);
  // A width with no divisor of a vector or more (attention's 197 tokens, a prime) would be
  // one column at a time: the whole row instead, while it fits 16 vector registers.
  if (vt < lanes && N <= 16 * lanes) vt = N;
  // A constant 2-D b is packed on the host into column panels [N/vt, K, vt], the layout the
  // accumulator tile reads (ONNX Runtime prepacks its weights the same way): each step of the
  // reduction reads one contiguous row of the panel.
  Tensor panels;
  if (bv.is_constant() && sb.size() == 2 && !blocked) {
    const graph::Tensor &src = *bv.constant;
    graph::Tensor packed(src.dtype(), {N / vt, K, vt});
    int64_t es = graph::dtype_size(src.dtype());
    for (int64_t c = 0; c < N / vt; ++c)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < vt; ++j) {
          int64_t n = c * vt + j;
          int64_t from = tb ? n * K + k : k * N + n;
          std::memcpy(packed.raw() + ((c * K + k) * vt + j) * es, src.raw() + from * es, es);
        }
    panels = kb.constant_param("b_panels", std::move(packed));
    tb = false;
  }
  // b as [batch..., K, N] (a transposed copy when it is read transposed), centered if integer.
  Tensor bk = b;
  if (tb) {
    Shape s = sb;
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    bk = te::compute("bt", s, [&](const std::vector<tir::Var> &i) {
      std::vector<Expr> idx(i.begin(), i.end());
      std::swap(idx[idx.size() - 1], idx[idx.size() - 2]);
      return (*b)(idx);
    });
  }
  Shape bks = bk->shape();
  Tensor acc = te::reduce_sum(
      "acc", out_shape, {{"rk", K}},
      [&](const std::vector<tir::Var> &i, const std::vector<tir::Var> &r) {
        Expr m = i[rank - 2], n = i[rank - 1], k = r[0];
        std::vector<Expr> ai = batch_index(sa, i), bi2 = batch_index(bks, i);
        if (ta) {
          ai.push_back(k);
          ai.push_back(m);
        } else {
          ai.push_back(m);
          ai.push_back(k);
        }
        bi2.push_back(k);
        bi2.push_back(n);
        Expr x = (*a)(ai);
        Expr y = panels ? (*panels)({n / static_cast<int>(vt), k, n % static_cast<int>(vt)})
                        : (*bk)(bi2);
        if (integer) {
          x = tir::cast(tir::int32(), x);
          y = tir::cast(tir::int32(), y);
          if (azp)
            x = x - tir::cast(tir::int32(), azp->shape()[0] == 1 ? (*azp)({0}) : (*azp)({m}));
          if (bzp)
            y = y - tir::cast(tir::int32(), bzp->shape()[0] == 1 ? (*bzp)({0}) : (*bzp)({n}));
        }
        return x * y;
      });

  DataType ot = kb.out_type();
  auto acc_at = [&](const std::vector<tir::Var> &i) {
    return (*acc)(std::vector<Expr>(i.begin(), i.end()));
  };
  Tensor out;
  switch (node.op) {
    case OpKind::kMatMul: {
      // A fused output stage (graph/passes/fuse_matmul_epilogues.h): + bias[N], then GELU.
      Tensor bias = kb.has_input(2) ? kb.input(2, {N}) : nullptr;
      const std::string act = node.attrs.get_string("activation", "");
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr v = acc_at(i);
        if (bias) v = v + (*bias)({i[rank - 1]});
        if (act == "gelu" || act == "gelu_tanh") v = gelu(v, act == "gelu_tanh");
        return v;
      });
      break;
    }
    case OpKind::kMatMulInteger:
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) { return acc_at(i); });
      break;
    case OpKind::kGemm: {
      float alpha = node.attrs.get_float("alpha", 1.0f), beta = node.attrs.get_float("beta", 1.0f);
      Tensor c;
      Shape cs;
      if (kb.has_input(2)) {
        cs = kb.in_value(2).shape;
        c = kb.input(2, cs.empty() ? Shape{1} : cs);
        if (cs.empty()) cs = {1};
      }
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr v = acc_at(i);
        if (alpha != 1.0f) v = v * fconst(at, alpha);
        if (c) {
          std::vector<Expr> ci;
          size_t lead = 2 - cs.size();
          for (size_t d = 0; d < cs.size(); ++d)
            ci.push_back(cs[d] == 1 ? Expr(0) : Expr(i[lead + d]));
          v = v + fconst(at, beta) * (*c)(ci);
        }
        return v;
      });
      break;
    }
    case OpKind::kQLinearMatMul: {
      DataType f64 = DataType::float_(64);
      Tensor sA = kb.input(1), sB = kb.input(4), sY = kb.input(6, {1});
      Tensor zy = kb.has_input(7) ? kb.input(7, {1}) : nullptr;
      int64_t na = graph::num_elements(kb.in_value(1).shape),
              nbs = graph::num_elements(kb.in_value(4).shape);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr m = i[rank - 2], n = i[rank - 1];
        Expr as =
            tir::cast(f64, na == 1 ? (*sA)(std::vector<Expr>(sA->shape().size(), 0)) : (*sA)({m}));
        Expr bs =
            tir::cast(f64, nbs == 1 ? (*sB)(std::vector<Expr>(sB->shape().size(), 0)) : (*sB)({n}));
        Expr scale = as * bs / tir::cast(f64, (*sY)({0}));
        Expr r = tir::Call::make(tir::CallOp::kRound, {tir::cast(f64, acc_at(i)) * scale});
        if (zy) r = r + tir::cast(f64, (*zy)({0}));
        r = tir::min(tir::max(r, tir::cast(f64, lowest(ot))), tir::cast(f64, highest(ot)));
        return tir::cast(ot, r);
      });
      break;
    }
    case OpKind::kQDense: {
      const QuantEpilogue requant(kb, N);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        return requant.apply(acc_at(i), i[1]);
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_matmul";
  }
  Tensor result = out;
  if (blocked) {
    const graph::Layout &l = kb.out_value().layout;
    result = block(out, l.block_n, l.block_c);
  }
  schedule::Schedule s({result});
  if (tb) schedule_elementwise(s, bk);
  if (blocked) schedule_elementwise(s, result);
  int64_t regs = (vt + lanes - 1) / lanes;
  schedule_reduction(s, acc, out, rank - 2, rank - 1, std::clamp<int64_t>(24 / regs, 1, 8),
                     2 * lanes);
  return kb.finish(s, result);
}

void add_matmul_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kGemm, build_matmul});
  lowerings.push_back({graph::OpKind::kMatMul, build_matmul});
  lowerings.push_back({graph::OpKind::kMatMulInteger, build_matmul});
  lowerings.push_back({graph::OpKind::kQLinearMatMul, build_matmul});
  lowerings.push_back({graph::OpKind::kQDense, build_matmul});
  // The product of two int8 activations runs on the accelerator; where it cannot (operands not
  // a whole number of GEMM blocks), its reference kernel (Eigen) on the host.
  lowerings.push_back({graph::OpKind::kQMatMul, nullptr});
}

}  // namespace vacc::ops::cpu
