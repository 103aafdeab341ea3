// Default schedules: enumerate the tilings whose buffers fit the config's scratchpads (each
// virtual thread owns a copy of every tile buffer) and pick the one a simple model of the
// accelerator expects to be fastest: GEMM and ALU cycles on the compute engine, DRAM bytes at
// the config's bandwidth (overlapped with compute when virtual threads hide latency), and a
// per-instruction overhead.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "divisors.h"
#include "vacc/codegen/accel/operators.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::codegen::accel {
namespace {

constexpr double kInsnOverheadCycles = 8;
// ALU cycles per output tile (hw/README.md: a micro-op with a vector operand every second
// cycle, with an immediate every cycle): reset, bias add, shift, clip low, clip high.
double alu_cycles_per_tile(const compiler::Requant &q) {
  return 1 + 2 + (q.per_channel() ? 2 : 1) + 1 + 1;
}

double estimate(double compute, double memory, int vthreads) {
  return vthreads > 1 ? std::max(compute, memory) + 0.05 * std::min(compute, memory)
                      : compute + memory;
}

}  // namespace

void check_conv2d_supported(const isa::HwConfig &c, const compiler::Conv2dParams &p,
                            const std::string &name) {
  auto positive = [&](const char *what, int64_t v) {
    if (v <= 0) fail("{}: {} = {} must be positive", name, what, v);
  };
  positive("batch", p.batch);
  positive("in_channels", p.in_channels);
  positive("out_channels", p.out_channels);
  positive("height", p.height);
  positive("width", p.width);
  positive("kernel_h", p.kernel_h);
  positive("kernel_w", p.kernel_w);
  positive("stride_h", p.stride_h);
  positive("stride_w", p.stride_w);
  auto multiple = [&](const char *what, int64_t v, int64_t block, const char *key) {
    if (v % block != 0)
      fail("{}: {} = {} is not a multiple of {} = {}; pad the channels on the host", name, what, v,
           key, block);
  };
  multiple("batch", p.batch, c.batch, "gemm.batch");
  multiple("in_channels", p.in_channels, c.block_in, "gemm.block_in");
  multiple("out_channels", p.out_channels, c.block_out, "gemm.block_out");
  const int64_t max_pad = (int64_t{1} << isa::kPadBits) - 1;
  for (auto [what, v] : {std::pair{"pad_h", p.pad_h}, std::pair{"pad_w", p.pad_w}}) {
    if (v < 0) fail("{}: {} = {} must not be negative", name, what, v);
    if (v > max_pad)
      fail(
          "{}: {} = {} exceeds the DMA's padding limit of {} ({}-bit pad fields); pad the input "
          "on the host",
          name, what, v, max_pad, isa::kPadBits);
  }
  if (p.kernel_h > p.height + 2 * p.pad_h || p.kernel_w > p.width + 2 * p.pad_w)
    fail("{}: the {}x{} kernel is larger than the {}x{} padded input", name, p.kernel_h, p.kernel_w,
         p.height + 2 * p.pad_h, p.width + 2 * p.pad_w);
  check_requant_supported(c, p.requant, p.out_channels, name);
}

void check_requant_supported(const isa::HwConfig &c, const compiler::Requant &q,
                             int64_t out_channels, const std::string &name) {
  if (q.per_channel()) {
    if (static_cast<int64_t>(q.channel_shifts.size()) != out_channels)
      fail(
          "{}: {} per-channel shifts for {} output channels; give one per channel (pad the "
          "padded channels with 0)",
          name, q.channel_shifts.size(), out_channels);
    for (size_t i = 0; i < q.channel_shifts.size(); ++i)
      if (q.channel_shifts[i] < 0 || q.channel_shifts[i] >= c.acc_bits)
        fail("{}: shift of channel {} = {} must lie in [0, {})", name, i, q.channel_shifts[i],
             c.acc_bits);
  } else if (q.shift < 0 || q.shift >= c.acc_bits) {
    fail("{}: shift = {} must lie in [0, {})", name, q.shift, c.acc_bits);
  }
  const int64_t lo = q.lo(c.inp_bits), hi = q.hi(c.inp_bits);
  const int64_t imm = int64_t{1} << (isa::kImmBits - 1);
  for (auto [what, v] : {std::pair{"clip_min", lo}, std::pair{"clip_max", hi}})
    if (v < -imm || v >= imm)
      fail("{}: {} = {} does not fit the ALU's {}-bit immediate", name, what, v, isa::kImmBits);
  if (lo > hi) fail("{}: clip_min = {} is above clip_max = {}", name, lo, hi);
}

compiler::AccelSchedule default_conv2d_schedule(const isa::HwConfig &c,
                                                const compiler::Conv2dParams &p, int vthreads,
                                                const std::string &name) {
  check_conv2d_supported(c, p, name);
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const int64_t OB = p.out_channels / c.block_out, CB = p.in_channels / c.block_in;
  const int64_t OH = p.out_height(), OW = p.out_width(), KH = p.kernel_h, KW = p.kernel_w;
  const int64_t NB = p.batch / c.batch;
  if (OB % vthreads != 0) vthreads = 1;  // too few output-channel blocks to split
  const double bw = c.mem_bytes_per_cycle;

  compiler::AccelSchedule best;
  double best_cost = std::numeric_limits<double>::infinity();
  // What the smallest tiling needs, for the diagnostic when nothing fits.
  const int64_t V = vthreads;
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                wgt_cap = c.wgt_depth() / V;
  for (int64_t th : divisors(OH)) {
    for (int64_t tw : divisors(OW)) {
      const int64_t ih = (th - 1) * p.stride_h + KH, iw = (tw - 1) * p.stride_w + KW;
      for (int64_t toc : divisors(OB)) {
        if ((OB / toc) % V != 0) continue;
        // Per thread: the accumulator tile, and bias and shifts for all its channel blocks
        // where they fit beside it, else for one block of toc.
        const int64_t per_channel = p.requant.per_channel() ? 2 : 1;
        const bool bias_once = toc * th * tw + per_channel * (OB / V) <= acc_cap;
        if (!bias_once && toc * th * tw + per_channel * toc > acc_cap) continue;
        for (int64_t tic : divisors(CB)) {
          if (tic * ih * iw > inp_cap || toc * tic * KH * KW > wgt_cap) continue;
          const double S = double(OH / th) * double(OW / tw) * NB;
          const double OT = double(OB / toc), IT = double(CB / tic);
          const double gemm = double(NB) * OB * CB * KH * KW * OH * OW;
          const double alu = double(NB) * OB * OH * OW * alu_cycles_per_tile(p.requant);
          const double insns = S * OT * (IT * 3 + 9);
          const double bytes = S * OT * CB * ih * iw * c.inp_tile_bytes() +
                               S * OB * CB * KH * KW * c.wgt_tile_bytes() +
                               S * OB * c.acc_tile_bytes() +
                               double(NB) * OB * OH * OW * c.out_tile_bytes();
          // With two threads the ALU runs beside the other thread's GEMMs; what stays exposed
          // is the pipeline's fill (a step's first input tile and one block's weights) and
          // drain (the last tile's requantization).
          const double fill = double(tic * ih * iw * c.inp_tile_bytes() +
                                     tic * KH * KW * c.wgt_tile_bytes()) / bw;
          const double drain = double(toc * th * tw) * alu_cycles_per_tile(p.requant);
          const double compute = vthreads > 1 ? std::max(gemm, alu) + fill + drain : gemm + alu;
          const double cost =
              estimate(compute + insns * kInsnOverheadCycles, bytes / bw, vthreads);
          if (cost < best_cost) {
            best_cost = cost;
            best.tile_h = th;
            best.tile_w = tw;
            best.tile_oc = toc;
            best.tile_ic = tic;
            best.vthreads = vthreads;
            best.bias_once = bias_once;
          }
        }
      }
    }
  }
  if (best_cost == std::numeric_limits<double>::infinity()) {
    // Report the first scratchpad the smallest tile (1x1 output, one block each) overflows.
    const int64_t need_inp = KH * KW, need_wgt = KH * KW,
                  need_acc = 1 + (p.requant.per_channel() ? 2 : 1);
    auto report = [&](const char *pad, int64_t need, int64_t cap, int kib, const char *key) {
      fail(
          "{}: no tile fits: even one output pixel of one channel block needs {} {} tiles per "
          "virtual thread, but the {} scratchpad holds {} ({} KiB, {} = {}, {} virtual "
          "thread(s)); use a larger {} or a smaller kernel",
          name, need, pad, pad, cap, kib, key, kib, V, key);
    };
    if (need_wgt > wgt_cap) report("wgt", need_wgt, wgt_cap, c.wgt_kib, "buffers.wgt_kib");
    if (need_inp > inp_cap) report("inp", need_inp, inp_cap, c.inp_kib, "buffers.inp_kib");
    if (need_acc > acc_cap) report("acc", need_acc, acc_cap, c.acc_kib, "buffers.acc_kib");
    fail("{}: no tiling fits the scratchpads of config '{}'", name, c.name);
  }
  return best;
}

compiler::AccelSchedule default_dense_schedule(const isa::HwConfig &c,
                                               const compiler::DenseParams &p, int vthreads,
                                               const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  for (auto [what, v, block, key] :
       {std::tuple{"batch", p.batch, c.batch, "gemm.batch"},
        std::tuple{"in_features", p.in_features, c.block_in, "gemm.block_in"},
        std::tuple{"out_features", p.out_features, c.block_out, "gemm.block_out"}}) {
    if (v <= 0 || v % block != 0)
      fail("{}: {} = {} is not a positive multiple of {} = {}; pad it on the host", name, what, v,
           key, block);
  }
  check_requant_supported(c, p.requant, p.out_features, name);
  const int64_t OB = p.out_features / c.block_out, CB = p.in_features / c.block_in;
  if (OB % vthreads != 0) vthreads = 1;
  const int64_t V = vthreads;
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                wgt_cap = c.wgt_depth() / V;
  compiler::AccelSchedule best;
  int64_t best_work = 0;
  for (int64_t toc : divisors(OB)) {
    if ((OB / toc) % V != 0 || 2 * toc > acc_cap) continue;
    for (int64_t tic : divisors(CB)) {
      if (tic > inp_cap || toc * tic > wgt_cap) continue;
      // Fewest instructions: the most work per tile, then the widest reduction.
      const int64_t work = toc * tic * 4 + tic;
      if (work > best_work) {
        best_work = work;
        best.tile_oc = toc;
        best.tile_ic = tic;
        best.tile_h = best.tile_w = 1;
        best.vthreads = vthreads;
      }
    }
  }
  if (best_work == 0)
    fail("{}: no tile fits the scratchpads of config '{}' with {} virtual thread(s)", name, c.name,
         V);
  return best;
}

}  // namespace vacc::codegen::accel
