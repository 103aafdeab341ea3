// The schedule space of an accelerator layer, as AutoTVM's ConfigSpace: every knob a schedule
// may turn (a field of AccelSchedule), its domain, and what it trades. Each operator declares
// its own (schedule_space() beside its default_schedule(), compiler/ops/<family>/accel.cc), and the
// heuristic's choice is one point of it. A point is a choice per knob; the space is their
// product, indexed in mixed radix (the first knob fastest).
//
// A tile knob offers every size that makes a distinct number of tiles (lower/ops/divisors.h):
// where it does not divide its axis, the last tile is a tail that runs whole.
//
// A point is legal when check_schedule() accepts it (tile sizes, thread split, scratchpad
// capacities: the operator's own rules, cheap enough to filter millions of points) and it
// lowers (lower() with LowerOptions::schedule, which also plans the scratchpads). Every legal
// point is a bit-exact program; an illegal one is refused with its reason before it runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::lower {

struct Knob {
  std::string name;             // the AccelSchedule field it sets: "tile_h", "vthreads", ...
  std::vector<int64_t> values;  // its domain (booleans as 0 and 1)
  std::string trades;           // what choosing a larger value gains and costs
};

struct ScheduleSpace {
  std::string op;       // "conv2d", "dense", "add", "pool2d"
  AccelSchedule base;   // the fields no knob sets
  std::vector<Knob> knobs;

  uint64_t size() const;  // the number of points (saturates at UINT64_MAX)
  // The point at `index` (< size()), and the choice (an index into each knob's values).
  AccelSchedule at(uint64_t index) const;
  std::vector<size_t> choices(uint64_t index) const;
  uint64_t index(const std::vector<size_t> &choices) const;
  AccelSchedule schedule(const std::vector<size_t> &choices) const;
  // The index of `s`, or nullopt when a knob's value is outside its domain or a field no knob
  // sets differs from base.
  std::optional<uint64_t> find(const AccelSchedule &s) const;
};

// A knob's value in `s`, and `s` with it set; the knob names are AccelSchedule's fields.
int64_t knob_value(const AccelSchedule &s, const std::string &knob);
void set_knob(AccelSchedule *s, const std::string &knob, int64_t value);
// "h7 w14 oc2 ic4 vt2 rows bias_once wgt_resident": a schedule in one short line.
std::string describe(const AccelSchedule &s);

// Per operator, defined beside its default_schedule (compiler/ops/<family>/accel.cc): its space
// and its rules. The parameters are as check_supported accepts them.
ScheduleSpace schedule_space(const isa::HwConfig &config, const Conv2dParams &p);
std::optional<std::string> check_schedule(const isa::HwConfig &config, const Conv2dParams &p,
                                          const AccelSchedule &s);
ScheduleSpace schedule_space(const isa::HwConfig &config, const DenseParams &p);
std::optional<std::string> check_schedule(const isa::HwConfig &config, const DenseParams &p,
                                          const AccelSchedule &s);
ScheduleSpace schedule_space(const isa::HwConfig &config, const AddParams &p);
std::optional<std::string> check_schedule(const isa::HwConfig &config, const AddParams &p,
                                          const AccelSchedule &s);
ScheduleSpace schedule_space(const isa::HwConfig &config, const ConvChainParams &p);
std::optional<std::string> check_schedule(const isa::HwConfig &config, const ConvChainParams &p,
                                          const AccelSchedule &s);
ScheduleSpace schedule_space(const isa::HwConfig &config, const PoolParams &p);
std::optional<std::string> check_schedule(const isa::HwConfig &config, const PoolParams &p,
                                          const AccelSchedule &s);

// The space of `layer`'s operator.
ScheduleSpace schedule_space(const isa::HwConfig &config, const Layer &layer);
// nullopt when `s` passes the operator's rules for `layer`, else the first rule it breaks.
std::optional<std::string> check_schedule(const isa::HwConfig &config, const Layer &layer,
                                          const AccelSchedule &s);
// The heuristic's point: default_schedule with `vthreads` (1 or 2) threads.
AccelSchedule heuristic_schedule(const isa::HwConfig &config, const Layer &layer, int vthreads);

// A layer's workload: every parameter that changes its program's instructions (shapes,
// kernel, strides, padding, groups, which requantization stages and fused epilogues it has),
// but not the values of its shifts, clip bounds or multipliers, which only change immediates
// and vectors. Two layers of one workload share a schedule space and have the same cycles under
// every schedule. "conv2d n1 c64x56x56 o64 k3x3 s1x1 p1x1 g1 rq-" and so on.
std::string workload_key(const Layer &layer);

}  // namespace vacc::lower
