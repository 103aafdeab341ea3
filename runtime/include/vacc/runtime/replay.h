// Replays a compiled command list (isa/command.h) into a command queue: DMA commands get their
// DRAM addresses from the buffers the caller bound, GEMM/ALU commands go through the queue's
// micro-op residency, dependency commands become the queue's token pushes and pops.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/isa/command.h"
#include "vacc/runtime/command_queue.h"

namespace vacc::runtime {

// `buffer_elements[i]`: the first element (counted in elements of buffer i's memory kind from
// the arena base, what Session::element_of returns) where list.buffers[i] lives. Throws
// vacc::Error when the binding does not match the list or a command is not encodable.
void replay(CommandQueue &queue, const isa::CommandList &list,
            const std::vector<uint64_t> &buffer_elements);

// Replays only the commands `select` picks (by index), in order.
void replay_commands(CommandQueue &queue, const isa::CommandList &list,
                     const std::vector<uint64_t> &buffer_elements,
                     const std::function<bool(size_t)> &select);

struct ListRun {
  std::vector<std::vector<uint8_t>> buffers;  // every buffer's bytes after the run
  driver::Counters counters;                  // the device's, plus runtime_insns/uop_loads
};

// Runs one command list on `device` in a fresh session sized for it: `buffers[i]` holds the
// initial DRAM bytes of list.buffers[i] (elements of its memory kind, little-endian), or is
// empty for zeros. Throws vacc::Error on a size mismatch or a device error.
ListRun run_command_list(driver::Device &device, const isa::HwConfig &config,
                         const isa::CommandList &list,
                         const std::vector<std::vector<uint8_t>> &buffers,
                         double timeout_seconds = 3600);

}  // namespace vacc::runtime
