// Helpers for self-checking accelerator programs in tests: config lookup, a program skeleton
// that orders the three engines with tokens, random data, and running on any engine.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/support/error.h"

namespace vacc::test {

// configs/NAME.yaml of this source tree.
isa::HwConfig config_named(const std::string &name);

// The engines every self-checking program runs on.
std::vector<std::string> test_engines();

// Runs a program on `engine` and returns device memory after the run.
driver::RunResult run_on(const std::string &engine, const isa::HwConfig &config,
                         const isa::Program &program);

// Bytes of a named region after a run.
std::vector<uint8_t> region_after(const isa::Program &program, const driver::RunResult &run,
                                  const std::string &name);

std::vector<uint8_t> random_bytes(std::mt19937 &rng, size_t n);
std::vector<int32_t> random_ints(std::mt19937 &rng, size_t n, int32_t lo, int32_t hi);
std::vector<uint8_t> int32_bytes(const std::vector<int32_t> &values);

// Builds fully serialized programs: each instruction waits for the one before it, with the
// dependency tokens set automatically at every change of engine (a load followed by a store
// gets an empty ALU instruction in between, since only neighbouring engines share queues).
class SerialProgram {
 public:
  explicit SerialProgram(const isa::HwConfig &config) : builder(config) {}
  isa::ProgramBuilder builder;

  void emit(isa::Insn insn);
  isa::Program finish();  // appends FINISH after everything else

 private:
  std::vector<isa::Insn> insns_;
};

// Stores `count` ACC elements from `sram` as full acc_bits values: four OUT stores of the low
// byte, with an arithmetic shift right by 8 on the ALU between them (destroys those ACC
// elements). `out_regions` must be four OUT regions of `count` elements each.
void store_acc_words(SerialProgram &p, uint32_t sram, uint32_t count, uint32_t uop_index,
                     const std::vector<uint32_t> &out_regions);
// Reassembles the values stored by store_acc_words.
std::vector<int32_t> acc_words(const std::vector<std::vector<uint8_t>> &bytes);

// A·Bᵀ of int8 tiles in the scratchpads' layout, A as mt x kt INP tiles ([m][k][batch][block_in])
// and B as nt x kt WGT tiles ([n][k][block_out][block_in]), unwrapped, in the accumulators'
// layout ([m][n][batch][block_out]): the plain reference the GEMM programs are checked against.
std::vector<int64_t> tiled_product(const isa::HwConfig &c, const std::vector<uint8_t> &a,
                                   const std::vector<uint8_t> &b, uint32_t mt, uint32_t nt,
                                   uint32_t kt);

isa::MemInsn mem_insn(isa::Opcode op, isa::MemId mem, uint32_t sram, uint32_t dram, uint32_t y,
                      uint32_t x, uint32_t stride);

// Runs f and returns the vacc::Error message it throws, "(no error)" when it throws none.
template <typename F>
std::string error_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace vacc::test
