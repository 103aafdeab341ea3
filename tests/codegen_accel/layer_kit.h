// Test helpers: run a compiled accelerator layer on an engine through the runtime, with the
// operator's arguments as flat int64 vectors (the layouts of compiler/ops.h), and compare.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/driver/device.h"

namespace vacc::test {

// Element bytes <-> values of a buffer whose scalars are `bits` wide (8 or 32), little-endian.
std::vector<uint8_t> to_bytes(const std::vector<int64_t> &values, int bits);
std::vector<int64_t> from_bytes(const std::vector<uint8_t> &bytes, int bits);

struct LayerRun {
  std::vector<int64_t> out;  // the last argument after the run
  driver::Counters counters;
};

// Runs `layer` on `engine`; args[i] are the values of layer.op.args[i], the output's being
// what its buffer holds before the run.
LayerRun run_layer(const std::string &engine, const isa::HwConfig &config,
                   const lower::LoweredLayer &layer,
                   const std::vector<std::vector<int64_t>> &args);

// Runs the final IR of `layer` in the loop-IR interpreter; returns the output.
std::vector<int64_t> interpret_layer(const isa::HwConfig &config,
                                     const lower::LoweredLayer &layer,
                                     std::vector<std::vector<int64_t>> args, int64_t *macs);

// A 1x1 convolution of one input block on a 12x12 grid: one GEMM cycle per output tile against
// several of requantization, so it is ALU-bound (the ISA extensions' compiler tests).
inline lower::Conv2dParams alu_bound_conv(const isa::HwConfig &c) {
  lower::Conv2dParams p;
  p.kernel_h = p.kernel_w = 1;
  p.pad_h = p.pad_w = 0;
  p.height = p.width = 12;
  p.in_channels = c.block_in;
  p.out_channels = 4 * c.block_out;
  p.requant = {6, true};
  return p;
}

// One schedule a fused-operator test runs: virtual threads, the resident operand (the tuner's
// loop-order knob) and whether its tiles end in tails (sizes that do not divide their axes).
struct Order {
  int vthreads = 1;
  lower::AccelSchedule::Resident resident = lower::AccelSchedule::Resident::kNone;
  bool tails = false;
};

// One and two threads in the default loop order, then two threads with the weights, then the
// inputs, resident, then two threads with tail tiles.
inline std::vector<Order> with_resident_orders() {
  using R = lower::AccelSchedule::Resident;
  return {{1, R::kNone, false},
          {2, R::kNone, false},
          {2, R::kWeights, false},
          {2, R::kInputs, false},
          {2, R::kNone, true}};
}

// The heuristic's schedule `s` of `layer` with as many of its tiles as the operator's rules
// allow replaced by tails: each tile knob takes the largest size of its space that does not
// divide its axis (the axis's extent is the knob's largest size), where the rules accept it.
// False when no knob took a tail.
inline bool add_tails(const isa::HwConfig &c, const lower::Layer &layer,
                      lower::AccelSchedule *s) {
  const lower::ScheduleSpace space = lower::schedule_space(c, layer);
  bool any = false;
  for (const lower::Knob &k : space.knobs) {
    if (k.name.rfind("tile_", 0) != 0) continue;
    const int64_t extent = k.values.back();
    for (auto v = k.values.rbegin(); v != k.values.rend(); ++v) {
      if (extent % *v == 0) continue;
      lower::AccelSchedule t = *s;
      lower::set_knob(&t, k.name, *v);
      if (lower::check_schedule(c, layer, t)) continue;
      *s = t;
      any = true;
      break;
    }
  }
  return any;
}

// Sets `o` to the heuristic's schedule of `layer` with `vthreads` threads and tails added;
// false (o left as is) when no tile can take one.
inline bool use_tails(const isa::HwConfig &c, const lower::Layer &layer, int vthreads,
                      lower::LowerOptions *o) {
  lower::AccelSchedule s = lower::heuristic_schedule(c, layer, vthreads);
  if (!add_tails(c, layer, &s)) return false;
  o->vthreads = vthreads;
  o->schedule = s;
  return true;
}

// Sets `o` for one of with_resident_orders(): `vthreads`, and with a resident operand or tails
// the heuristic's schedule with them. False (o left as is) when that operand does not fit its
// scratchpad on `c`, or no tile can take a tail.
inline bool use_order(const isa::HwConfig &c, const lower::Conv2dParams &p, const Order &order,
                      lower::LowerOptions *o) {
  o->vthreads = order.vthreads;
  if (order.resident == lower::AccelSchedule::Resident::kNone && !order.tails) return true;
  lower::AccelSchedule s = lower::default_schedule(c, p, order.vthreads, "conv");
  s.resident = order.resident;
  if (lower::check_schedule(c, p, s)) return false;
  if (order.tails && !add_tails(c, lower::Layer{"conv", p}, &s)) return false;
  o->schedule = s;
  return true;
}

}  // namespace vacc::test
