#include "vacc/tune/features.h"

#include <cmath>
#include <variant>

#include "vacc/support/error.h"

namespace vacc::tune {
namespace {

// Every operator as a loop nest over output blocks (OB) of OH x OW positions in NB batch
// blocks, reducing IB input blocks over a KH x KW window at strides SH, SW.
struct Nest {
  int op = 0;
  double NB = 1, OB = 1, IB = 1, OH = 1, OW = 1, KH = 1, KW = 1, SH = 1, SW = 1;
  double alu_per_output = 1;  // ALU cycles per output tile
};

Nest nest_of(const isa::HwConfig &c, const lower::Layer &layer) {
  struct Visit {
    const isa::HwConfig &c;
    Nest operator()(const lower::Conv2dParams &p) const {
      return {0,
              double(p.batch / c.batch),
              double(p.out_channels / c.block_out),
              double(p.in_channels / c.block_in / p.groups),
              double(p.result_height()),
              double(p.result_width()),
              double(p.kernel_h),
              double(p.kernel_w),
              double(p.stride_h),
              double(p.stride_w),
              p.residual ? 12.0 : p.pool ? 8.0 : 5.0};
    }
    Nest operator()(const lower::DenseParams &p) const {
      Nest n;
      n.op = 1;
      n.NB = double(p.batch / c.batch) * p.groups;
      n.OB = double(p.out_features / c.block_out);
      n.IB = double(p.in_features / c.block_in);
      n.alu_per_output = 5;
      return n;
    }
    Nest operator()(const lower::AddParams &p) const {
      Nest n;
      n.op = 2;
      n.NB = double(p.batch / c.batch);
      n.OB = double(p.channels / c.block_out);
      n.OH = double(p.height);
      n.OW = double(p.width);
      n.alu_per_output = 6;
      return n;
    }
    // A chain as its first convolution with both convolutions' output blocks and ALU work.
    Nest operator()(const lower::ConvChainParams &p) const {
      Nest n = (*this)(p.first);
      n.op = 4;
      n.OB += double(p.second.out_channels / c.block_out);
      n.alu_per_output = 10;
      return n;
    }
    Nest operator()(const lower::PoolParams &p) const {
      Nest n;
      n.op = 3;
      n.NB = double(p.batch / c.batch);
      n.OB = double(p.channels / c.block_out);
      n.OH = double(p.out_height);
      n.OW = double(p.out_width);
      n.KH = double(p.kernel_h);
      n.KW = double(p.kernel_w);
      n.SH = double(p.stride_h);
      n.SW = double(p.stride_w);
      n.alu_per_output = 2 * n.KH * n.KW;
      return n;
    }
  };
  return std::visit(Visit{c}, layer.params);
}

float lg(double v) { return static_cast<float>(std::log2(std::max(v, 1e-9))); }

}  // namespace

std::vector<float> schedule_features(const isa::HwConfig &c, const lower::Layer &layer,
                                     const lower::AccelSchedule &s) {
  const Nest n = nest_of(c, layer);
  const bool dense = n.op == 1;
  // Dense tiles rows of vectors: its tile_h runs over the batch blocks.
  const double th = dense ? 1 : double(s.tile_h), tw = dense ? 1 : double(s.tile_w);
  const double tn = dense ? double(s.tile_h) : 1;
  const double toc = double(s.tile_oc), tic = double(s.tile_ic), V = s.vthreads;
  const double ih = (th - 1) * n.SH + n.KH, iw = (tw - 1) * n.SW + n.KW;
  // Tiles per axis, a tail counted whole (it runs as a whole tile).
  auto tiles_of = [](double extent, double tile) { return std::ceil(extent / tile); };
  const double row_tiles = tiles_of(n.OH, th), col_tiles = tiles_of(n.OW, tw),
               oc_tiles = tiles_of(n.OB, toc), ic_tiles = tiles_of(n.IB, tic),
               batch_tiles = tiles_of(n.NB, tn);
  // What tails add along each axis (exactly 1 without them): the work the tiles do.
  const double oc_span = oc_tiles * toc / n.OB, ic_span = ic_tiles * tic / n.IB;
  const double output_span =
      row_tiles * th / n.OH * (col_tiles * tw / n.OW) * oc_span * (batch_tiles * tn / n.NB);
  const double spatial = row_tiles * col_tiles * batch_tiles;
  const double tiles = spatial * oc_tiles;
  // A resident operand is loaded once per tile of the other's outer loop, not per tile. A
  // convolution's batch blocks are its outermost loop: resident weights load once per block.
  using Resident = lower::AccelSchedule::Resident;
  const double inp_loads = s.resident == Resident::kInputs ? spatial * (s.vthread_rows ? 1 : V)
                                                           : tiles;
  const double wgt_loads = s.resident == Resident::kWeights
                               ? oc_tiles * (s.vthread_rows ? V : 1) * (dense ? 1 : batch_tiles)
                               : tiles;
  const double inp_bytes = inp_loads * ic_tiles * tn * tic * ih * iw * c.inp_tile_bytes();
  const double wgt_bytes = wgt_loads / oc_tiles * n.OB * n.IB * n.KH * n.KW * c.wgt_tile_bytes();
  const double out_bytes = n.NB * n.OB * n.OH * n.OW * c.out_tile_bytes();
  const double gemm = n.NB * n.OB * n.IB * n.KH * n.KW * n.OH * n.OW * output_span * ic_span;
  const double alu = n.NB * n.OB * n.OH * n.OW * n.alu_per_output * output_span;
  const double insns = tiles * (ic_tiles * 3 + 9);
  const double memory = (inp_bytes + wgt_bytes + out_bytes) / c.mem_bytes_per_cycle;
  const double compute = V > 1 ? std::max(gemm, alu) : gemm + alu;
  std::vector<float> f = {
      float(n.op),
      lg(th),
      lg(tw),
      lg(tn),
      lg(toc),
      lg(tic),
      float(V),
      float(s.vthread_rows),
      float(s.bias_once),
      float(static_cast<int>(s.resident)),
      lg(row_tiles),
      lg(col_tiles),
      lg(batch_tiles),
      lg(oc_tiles),
      lg(ic_tiles),
      lg(tiles),
      lg(n.KH * n.KW),
      float(n.SH),
      float(tn * tic * ih * iw / (c.inp_depth() / V)),       // INP a tile fills
      float(toc * tic * n.KH * n.KW / (c.wgt_depth() / V)),  // WGT
      float(toc * th * tw * tn / (c.acc_depth() / V)),       // ACC
      lg(inp_bytes),
      lg(wgt_bytes),
      lg(out_bytes),
      lg(gemm),
      lg(alu),
      lg(insns),
      lg(memory / std::max(compute, 1.0)),
      lg(gemm / std::max(tiles * ic_tiles, 1.0)),  // GEMM cycles per load pair
      lg(c.mem_bytes_per_cycle),
      lg(c.mem_latency_cycles),
      lg(double(c.peak_macs_per_cycle())),
      lg(tiles / V),
  };
  VACC_CHECK(static_cast<int>(f.size()) == kNumFeatures) << f.size() << " features";
  VACC_CHECK(f[kInstructionsFeature] == lg(insns)) << "kInstructionsFeature is not the count";
  return f;
}

}  // namespace vacc::tune
