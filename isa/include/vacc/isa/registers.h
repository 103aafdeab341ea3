// The accelerator's AXI4-Lite register map (DESIGN.md "The hardware and its register map"),
// part of the hardware/software contract beside the ISA.
// The RTL implements it, the simulators' hosts drive it, and the XRT driver writes the same
// kernel arguments, so a program that runs in simulation runs unchanged on a board.
#pragma once

#include <cstdint>

namespace vacc::isa::reg {

inline constexpr uint32_t kControl = 0x00;  // bit0 start, bit1 done, bit2 idle, bit3 ready
inline constexpr uint32_t kGlobalInterruptEnable = 0x04;
inline constexpr uint32_t kInterruptEnable = 0x08;
inline constexpr uint32_t kInterruptStatus = 0x0C;
inline constexpr uint32_t kInsnCount = 0x10;
inline constexpr uint32_t kBaseLow = 0x18;  // device-memory base; program addresses are offsets
inline constexpr uint32_t kBaseHigh = 0x1C;
inline constexpr uint32_t kInsnOffset = 0x20;  // byte offset of the instruction stream

// Read-only counters, 32 bits each (cycles as a 64-bit pair).
inline constexpr uint32_t kCyclesLow = 0x28;
inline constexpr uint32_t kCyclesHigh = 0x2C;
inline constexpr uint32_t kLoadBusy = 0x30;  // cycles the engine executed an instruction
inline constexpr uint32_t kLoadStall = 0x34;  // cycles its head instruction waited on a token
inline constexpr uint32_t kComputeBusy = 0x38;
inline constexpr uint32_t kComputeStall = 0x3C;
inline constexpr uint32_t kStoreBusy = 0x40;
inline constexpr uint32_t kStoreStall = 0x44;
inline constexpr uint32_t kGemmBusy = 0x48;  // cycles the GEMM core consumed a micro-op
// Error status: bit0 illegal instruction, bit1 deadlock (cycle limit reached), bit2 an
// instruction whose indices reach beyond a scratchpad (isa/README.md, "Range checks");
// kErrorInsn holds the index of the offending instruction.
inline constexpr uint32_t kErrorStatus = 0x4C;
inline constexpr uint32_t kErrorInsn = 0x50;
inline constexpr uint32_t kCycleLimit = 0x54;  // 0: no limit; else stop with deadlock bit

inline constexpr uint32_t kControlStart = 1u << 0;
inline constexpr uint32_t kControlDone = 1u << 1;
inline constexpr uint32_t kControlIdle = 1u << 2;
inline constexpr uint32_t kControlReady = 1u << 3;

inline constexpr uint32_t kErrorIllegalInsn = 1u << 0;
inline constexpr uint32_t kErrorDeadlock = 1u << 1;
inline constexpr uint32_t kErrorRange = 1u << 2;

}  // namespace vacc::isa::reg
