// Comparing two timelines of one program (a reference engine's, e.g. rtl, and a model's, e.g.
// perf): the first instruction, in the reference's order of start cycles, that does not start
// in the same cycle on the same track in both.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vacc/simulator/timeline.h"

namespace vacc::sim {

struct Divergence {
  int track = 0;                        // isa::Engine, kGemmUnitTrack or kAluUnitTrack
  uint32_t index = 0;                   // the instruction
  uint64_t reference_start = 0;         // its start cycle on the reference's track
  std::optional<uint64_t> model_start;  // on the model's (none: it never started there)
};

// nullopt when every slice of `reference` starts in the same cycle in `model`.
std::optional<Divergence> first_divergence(const std::vector<InsnSlice> &reference,
                                           const std::vector<InsnSlice> &model);

}  // namespace vacc::sim
