// The accelerator command list: what code generation produces and the runtime's command queue
// consumes, so that the compiler never links the runtime. A list is position independent:
// DMA commands address a named DRAM buffer plus an element offset inside it, and the caller
// binds each buffer to device memory when the list is replayed. Micro-op kernels are stored
// once, deduplicated by content, and GEMM/ALU commands name them by index. Dependency
// commands are the explicit token pushes and pops between neighbouring engines; the command
// queue merges them into instruction flags.
//
// serialize()/deserialize() give a versioned little-endian binary form (for package files);
// to_text() a readable listing for dumps and diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::isa {

// A DRAM operand: `elements` elements of kind `mem` (inp, wgt, acc or out tiles).
struct CommandBuffer {
  std::string name;
  MemId mem = MemId::kInp;
  uint64_t elements = 0;
  bool operator==(const CommandBuffer &) const = default;
};

// The `buffer` of a STORE INP (extensions.store_inp): its destination is the INP scratchpad
// itself, `offset` the INP index, no DRAM buffer.
inline constexpr uint32_t kInpScratchpad = UINT32_MAX;

// LOAD (inp, wgt, acc) or STORE (out, or inp with extensions.store_inp): fields as in
// isa/README.md, with the DRAM address given as (buffer index, element offset in that buffer).
struct DmaCommand {
  bool store = false;
  MemId mem = MemId::kInp;
  uint32_t sram = 0;
  uint32_t buffer = 0;
  uint64_t offset = 0;
  uint32_t y = 1, x = 1, stride = 1;
  uint32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool operator==(const DmaCommand &) const = default;
  bool to_inp() const { return store && mem == MemId::kInp; }
};

// GEMM over micro-op kernel `kernel` of the list, with two folded loops.
struct GemmCommand {
  uint32_t kernel = 0;
  bool reset = false;
  uint32_t loop_out = 1, loop_in = 1;
  LoopFactors acc, inp, wgt;
  bool overlap = false;  // GemmInsn::overlap
  bool assign = false;   // GemmInsn::assign (extensions.gemm_assign)
  bool operator==(const GemmCommand &) const = default;
};

struct AluCommand {
  uint32_t kernel = 0;
  AluOp op = AluOp::kAdd;
  uint32_t loop_out = 1, loop_in = 1;
  LoopFactors dst, src;
  bool use_imm = false;
  int32_t imm = 0;
  bool overlap = false;  // AluInsn::overlap
  bool operator==(const AluCommand &) const = default;
};

// A token push (`from` signals `to` after its work so far) or pop (`to` waits for `from`).
struct DepCommand {
  bool push = true;
  Engine from = Engine::kLoad;
  Engine to = Engine::kCompute;
  bool operator==(const DepCommand &) const = default;
};

using Command = std::variant<DmaCommand, GemmCommand, AluCommand, DepCommand>;
using UopKernel = std::vector<Uop>;

struct CommandList {
  std::string name;
  std::string config_name;
  uint64_t isa_fingerprint = 0;  // HwConfig::isa_fingerprint() of the config it targets
  std::vector<CommandBuffer> buffers;
  std::vector<UopKernel> kernels;
  std::vector<Command> commands;
  bool operator==(const CommandList &) const = default;

  // Adds `kernel` unless an equal one is stored; returns its index.
  uint32_t intern_kernel(const UopKernel &kernel);
  // Counts: DMA loads/stores, GEMM, ALU and dependency commands.
  size_t count_gemm() const;
  size_t count_alu() const;
  size_t count_dma() const;
  size_t total_kernel_uops() const;
  // Multiply-accumulates its GEMMs execute, as a device counts them (resets do none).
  uint64_t gemm_macs(const HwConfig &config) const;
};

// Throws vacc::Error when the list was built for another ISA layout.
void check_command_list(const CommandList &list, const HwConfig &config);

std::vector<uint8_t> serialize(const CommandList &list);
// Throws vacc::Error on a bad magic, version or a truncated / inconsistent body.
CommandList deserialize(const std::vector<uint8_t> &bytes);

// One line per command ("load.inp sram=0 buf=data+12 y=3 x=5 stride=56 pad=1,0,1,0", ...).
std::string to_text(const CommandList &list);

}  // namespace vacc::isa
