// Tensor intrinsics of the accelerator, declared from the config. Each is its own small
// compute description -- a loop nest over description buffers that carry the scratchpad
// scope each operand must live in -- plus how a matched nest lowers to one intrinsic
// statement. tensorize() matches scheduled loop nests against these descriptions.
//
// GEMM:  acc[b, o] += inp[b, c] * wgt[o, c]   (BATCH x BLOCK_OUT, summing over BLOCK_IN)
// reset: acc[b, o] = 0
// ALU:   dst[b, o] = op(dst[b, o], src[b, o]) and dst[b, o] = op(dst[b, o], imm) for each of
//        min, max, add (also `dst - imm`), shr, mul, over one ACC tile; with the config's
//        extensions.alu_clip also dst[b, o] = min(max(dst[b, o], low), high), with
//        extensions.alu_shr_clip dst[b, o] = min(max(dst[b, o] >> src[b, o], low), high).
// DMA load/store are matched by lower_dma_copies from copy nests, not by description.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/tir/node.h"

namespace vacc::intrin {

struct TensorIntrin {
  std::string name;                   // "gemm", "gemm.reset", "alu.add", "alu.add.imm", ...
  std::vector<tir::Buffer> operands;  // description buffers; operands[0] is written
  tir::Stmt desc;                     // the loop nest the intrinsic computes
  // In `desc`, each stands for a constant (or is null): imm[0] any 16-bit one, imm[1] a second
  // one (CLIP's high bound). `imm_bits` is the width each must fit, signed.
  std::array<tir::Var, 2> imm;
  int imm_bits = 16;
  // Builds the intrinsic statement from the matched buffers (in `operands` order), the tile
  // index of each in its buffer, and the matched immediates.
  std::function<tir::Stmt(const std::vector<tir::Buffer> &buffers,
                          const std::vector<tir::Expr> &tiles, const std::array<int64_t, 2> &imm)>
      lower;
};

// The GEMM update and reset intrinsics, in that order.
std::vector<TensorIntrin> gemm_intrins(const isa::HwConfig &config);
// Every ALU intrinsic (vector-vector and immediate forms).
std::vector<TensorIntrin> alu_intrins(const isa::HwConfig &config);

// The scratchpad tile shape [rows, cols] the config gives a scope.
std::vector<int64_t> tile_shape(const isa::HwConfig &config, tir::Scope scope);
// Element type the config gives a scope (acc -> acc_bits, inp -> inp_bits, ...).
tir::DataType scope_dtype(const isa::HwConfig &config, tir::Scope scope);

}  // namespace vacc::intrin
