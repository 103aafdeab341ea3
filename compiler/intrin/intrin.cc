#include "vacc/intrin/intrin.h"

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::intrin {

using tir::Expr;
using tir::Scope;
using tir::Stmt;
using Imms = std::array<int64_t, 2>;

std::vector<int64_t> tile_shape(const isa::HwConfig &c, Scope scope) {
  switch (scope) {
    case Scope::kInp:
      return {c.batch, c.block_in};
    case Scope::kWgt:
      return {c.block_out, c.block_in};
    case Scope::kAcc:
      return {c.batch, c.block_out};
    default:
      VACC_CHECK(false) << "no tile for scope " << tir::scope_name(scope);
  }
  return {};
}

tir::DataType scope_dtype(const isa::HwConfig &c, Scope scope) {
  switch (scope) {
    case Scope::kInp:
      return tir::DataType::int_(c.inp_bits);
    case Scope::kWgt:
      return tir::DataType::int_(c.wgt_bits);
    case Scope::kAcc:
      return tir::DataType::int_(c.acc_bits);
    default:
      VACC_CHECK(false) << "no element type for scope " << tir::scope_name(scope);
  }
  return tir::int32();
}

std::vector<TensorIntrin> gemm_intrins(const isa::HwConfig &c) {
  // acc[b, o] (+)= sum over c of inp[b, c] * wgt[o, c], in the scopes the core reads.
  tir::DataType acc_t = scope_dtype(c, Scope::kAcc);
  tir::Buffer bi =
      tir::make_buffer("inp", scope_dtype(c, Scope::kInp), tile_shape(c, Scope::kInp), Scope::kInp);
  tir::Buffer bw =
      tir::make_buffer("wgt", scope_dtype(c, Scope::kWgt), tile_shape(c, Scope::kWgt), Scope::kWgt);
  tir::Buffer ba = tir::make_buffer("acc", acc_t, tile_shape(c, Scope::kAcc), Scope::kAcc);
  tir::Var b = tir::make_var("b"), o = tir::make_var("o"), k = tir::make_var("c");
  auto loop = [](const tir::Var &v, int64_t n, Stmt body) {
    return tir::For::make(v, n, tir::ForKind::kSerial, std::move(body));
  };
  Expr prod = tir::cast(acc_t, tir::load(bi, {b, k})) * tir::cast(acc_t, tir::load(bw, {o, k}));
  Stmt update_desc =
      loop(b, c.batch,
           loop(o, c.block_out,
                loop(k, c.block_in, tir::Store::make(ba, {b, o}, tir::load(ba, {b, o}) + prod))));
  Stmt reset_desc = loop(
      b, c.batch, loop(o, c.block_out, tir::Store::make(ba, {b, o}, tir::make_const(acc_t, 0))));

  TensorIntrin update;
  update.name = "gemm";
  update.operands = {ba, bi, bw};
  update.desc = update_desc;
  update.lower = [](const std::vector<tir::Buffer> &b, const std::vector<Expr> &t, const Imms &) {
    tir::Gemm g;
    g.acc = b[0];
    g.inp = b[1];
    g.wgt = b[2];
    g.acc_index = t[0];
    g.inp_index = t[1];
    g.wgt_index = t[2];
    return tir::Gemm::make(g);
  };
  TensorIntrin reset;
  reset.name = "gemm.reset";
  reset.operands = {ba};
  reset.desc = reset_desc;
  reset.lower = [](const std::vector<tir::Buffer> &b, const std::vector<Expr> &t, const Imms &) {
    tir::Gemm g;
    g.reset = true;
    g.acc = b[0];
    g.acc_index = t[0];
    return tir::Gemm::make(g);
  };
  return {update, reset};
}

std::vector<TensorIntrin> alu_intrins(const isa::HwConfig &c) {
  tir::DataType t = scope_dtype(c, Scope::kAcc);
  std::vector<int64_t> shape = tile_shape(c, Scope::kAcc);
  tir::Buffer dst = tir::make_buffer("dst", t, shape, Scope::kAcc);
  tir::Buffer src = tir::make_buffer("src", t, shape, Scope::kAcc);
  tir::Var b = tir::make_var("b"), o = tir::make_var("o");
  tir::Var imm = tir::make_var("imm", t);
  auto nest = [&](Expr value) {
    return tir::For::make(
        b, shape[0], tir::ForKind::kSerial,
        tir::For::make(o, shape[1], tir::ForKind::kSerial, tir::Store::make(dst, {b, o}, value)));
  };
  Expr d = tir::load(dst, {b, o}), s = tir::load(src, {b, o});
  struct Op {
    isa::AluOp op;
    std::function<Expr(Expr, Expr)> f;
  };
  std::vector<Op> ops = {
      {isa::AluOp::kMin, [](Expr x, Expr y) { return tir::min(x, y); }},
      {isa::AluOp::kMax, [](Expr x, Expr y) { return tir::max(x, y); }},
      {isa::AluOp::kAdd, [](Expr x, Expr y) { return x + y; }},
      {isa::AluOp::kShr, [](Expr x, Expr y) { return x >> y; }},
      {isa::AluOp::kMul, [](Expr x, Expr y) { return x * y; }},
  };
  std::vector<TensorIntrin> out;
  for (const Op &op : ops) {
    std::string name = std::string("alu.") + isa::alu_op_name(op.op);
    TensorIntrin vv;
    vv.name = name;
    vv.operands = {dst, src};
    vv.desc = nest(op.f(d, s));
    isa::AluOp code = op.op;
    vv.lower = [code](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts,
                      const Imms &) {
      tir::Alu a;
      a.op = code;
      a.dst = bs[0];
      a.src = bs[1];
      a.dst_index = ts[0];
      a.src_index = ts[1];
      return tir::Alu::make(a);
    };
    out.push_back(vv);
    TensorIntrin vi;
    vi.name = name + ".imm";
    vi.operands = {dst};
    vi.imm[0] = imm;
    vi.desc = nest(op.f(d, imm));
    vi.lower = [code](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts,
                      const Imms &v) {
      tir::Alu a;
      a.op = code;
      a.dst = bs[0];
      a.dst_index = ts[0];
      a.use_imm = true;
      a.imm = v[0];
      return tir::Alu::make(a);
    };
    out.push_back(vi);
  }
  // dst - imm is an ADD of -imm (the simplifier writes `x + -3` as `x - 3`).
  TensorIntrin sub;
  sub.name = "alu.add.imm";
  sub.operands = {dst};
  sub.imm[0] = imm;
  sub.desc = nest(d - imm);
  sub.lower = [](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts, const Imms &v) {
    tir::Alu a;
    a.op = isa::AluOp::kAdd;
    a.dst = bs[0];
    a.dst_index = ts[0];
    a.use_imm = true;
    a.imm = -v[0];
    return tir::Alu::make(a);
  };
  out.push_back(sub);
  // dst = 0: a tile zeroed on the ALU (a multiply by 0), where a stage starts from nothing.
  TensorIntrin zero;
  zero.name = "alu.zero";
  zero.operands = {dst};
  zero.desc = nest(tir::make_const(t, 0));
  zero.lower = [](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts, const Imms &) {
    tir::Alu a;
    a.op = isa::AluOp::kMul;
    a.dst = bs[0];
    a.dst_index = ts[0];
    a.use_imm = true;
    a.imm = 0;
    return tir::Alu::make(a);
  };
  out.push_back(zero);
  // min(max(dst, low), high) as one CLIP, where the config has it: both bounds in one
  // immediate (isa/README.md), so each must fit 8 signed bits.
  if (c.alu_clip) {
    TensorIntrin clip;
    clip.name = "alu.clip.imm";
    clip.operands = {dst};
    clip.imm = {imm, tir::make_var("imm_high", t)};
    clip.imm_bits = isa::kClipBoundBits;
    clip.desc = nest(tir::min(tir::max(d, clip.imm[0]), clip.imm[1]));
    clip.lower = [](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts,
                    const Imms &v) {
      tir::Alu a;
      a.op = isa::AluOp::kClip;
      a.dst = bs[0];
      a.dst_index = ts[0];
      a.use_imm = true;
      a.imm = isa::clip_imm(static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1]));
      return tir::Alu::make(a);
    };
    out.push_back(clip);
  }
  // min(max(dst >> src, low), high) as one SHR_CLIP, where the config has it: the shifts a
  // vector operand, both bounds in the immediate beside it.
  if (c.alu_shr_clip) {
    TensorIntrin shr_clip;
    shr_clip.name = "alu.shr_clip";
    shr_clip.operands = {dst, src};
    shr_clip.imm = {imm, tir::make_var("imm_high", t)};
    shr_clip.imm_bits = isa::kClipBoundBits;
    shr_clip.desc = nest(tir::min(tir::max(d >> s, shr_clip.imm[0]), shr_clip.imm[1]));
    shr_clip.lower = [](const std::vector<tir::Buffer> &bs, const std::vector<Expr> &ts,
                        const Imms &v) {
      tir::Alu a;
      a.op = isa::AluOp::kShrClip;
      a.dst = bs[0];
      a.src = bs[1];
      a.dst_index = ts[0];
      a.src_index = ts[1];
      a.imm = isa::clip_imm(static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1]));
      return tir::Alu::make(a);
    };
    out.push_back(shr_clip);
  }
  return out;
}

}  // namespace vacc::intrin
