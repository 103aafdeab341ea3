// One device program across consecutive accelerator steps: their command lists replayed into
// one queue, with CommandQueue::begin_step() at each boundary. Each step's weights go to WGT
// scratchpad entries the step before does not use where they fit (its weight loads and GEMM
// micro-ops shifted), so that its first weight loads can run under that step's compute; where
// they do not fit, those loads wait for its compute. Its loads up to the first one of what the
// step before stores (or its first wait for its own compute) then run under that step's last
// stores; the rest wait for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/command.h"
#include "vacc/runtime/command_queue.h"

namespace vacc::runtime {

// The WGT scratchpad entries [first, end) a command list loads or reads.
struct WgtFootprint {
  uint32_t first = 0, end = 0;
  bool empty() const { return first >= end; }
};
WgtFootprint wgt_footprint(const isa::CommandList &list);

// `list` with its weights `shift` entries further into the WGT scratchpad: its WGT loads and the
// micro-ops its GEMMs read weights through.
isa::CommandList shift_weights(const isa::CommandList &list, int64_t shift);

class ProgramReplay {
 public:
  ProgramReplay(CommandQueue &queue, const isa::HwConfig &config);

  // Where a step's DRAM buffer comes from.
  enum class Source {
    kConstant,  // nothing in the program writes it
    kPrevious,  // the step before this one writes it
    kEarlier,   // the host, or a step before that one
  };
  // Appends the next step. `buffer_elements` as replay(); `sources[i]`: buffer i's.
  void add(const isa::CommandList &list, const std::vector<uint64_t> &buffer_elements,
           const std::vector<Source> &sources);

  // Steps whose weights moved to free entries, so that their first weight loads could go under
  // the step before's compute.
  int shifted_steps() const { return shifted_; }
  // Per step added, how its weight loads meet the step before ("" for the first step): moved
  // apart, apart already, or waiting for its compute and why.
  const std::vector<std::string> &boundaries() const { return boundaries_; }

 private:
  CommandQueue &queue_;
  uint32_t wgt_depth_;
  size_t steps_ = 0;
  WgtFootprint previous_;  // the step before's, as it runs
  int shifted_ = 0;
  std::vector<std::string> boundaries_;
};

}  // namespace vacc::runtime
