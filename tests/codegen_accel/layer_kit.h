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

// The (virtual threads, resident operand) pairs a fused-operator test runs: one and two
// threads in the default loop order, then two threads with the weights, then the inputs,
// resident (AccelSchedule::resident, the tuner's loop-order knob).
inline std::vector<std::pair<int, lower::AccelSchedule::Resident>> with_resident_orders() {
  using R = lower::AccelSchedule::Resident;
  return {{1, R::kNone}, {2, R::kNone}, {2, R::kWeights}, {2, R::kInputs}};
}

// Sets `o` for one of with_resident_orders(): `vthreads`, and with a resident operand the
// heuristic's schedule with it resident. False (o left as is) when that operand does not fit
// its scratchpad on `c`.
inline bool use_order(const isa::HwConfig &c, const lower::Conv2dParams &p, int vthreads,
                      lower::AccelSchedule::Resident resident, lower::LowerOptions *o) {
  o->vthreads = vthreads;
  if (resident == lower::AccelSchedule::Resident::kNone) return true;
  lower::AccelSchedule s = lower::default_schedule(c, p, vthreads, "conv");
  s.resident = resident;
  if (lower::check_schedule(c, p, s)) return false;
  o->schedule = s;
  return true;
}

}  // namespace vacc::test
