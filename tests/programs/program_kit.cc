#include "program_kit.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace vacc::test {

isa::HwConfig config_named(const std::string &name) {
  const std::string bundled = std::string(VACC_TEST_CONFIG_DIR) + "/" + name + ".yaml";
  if (std::filesystem::exists(bundled)) return isa::load_config(bundled);
  return isa::load_config(std::string(VACC_TEST_ON_DEMAND_CONFIG_DIR) + "/" + name + ".yaml");
}

std::vector<std::string> test_engines() { return {"fsim", "rtl"}; }

driver::RunResult run_on(const std::string &engine, const isa::HwConfig &config,
                         const isa::Program &program) {
  auto device = driver::open_device(engine, config);
  return driver::run_program(*device, program);
}

std::vector<uint8_t> region_after(const isa::Program &program, const driver::RunResult &run,
                                  const std::string &name) {
  const isa::Region *r = program.find_region(name);
  if (!r) throw std::runtime_error("no region " + name);
  return {run.dram.begin() + r->offset, run.dram.begin() + r->offset + r->bytes};
}

std::vector<uint8_t> random_bytes(std::mt19937 &rng, size_t n) {
  std::vector<uint8_t> out(n);
  for (auto &b : out) b = static_cast<uint8_t>(rng());
  return out;
}

std::vector<int32_t> random_ints(std::mt19937 &rng, size_t n, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> out(n);
  for (auto &v : out) v = dist(rng);
  return out;
}

std::vector<uint8_t> int32_bytes(const std::vector<int32_t> &values) {
  std::vector<uint8_t> out(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i)
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<uint8_t>(uint32_t(values[i]) >> (8 * b));
  return out;
}

isa::MemInsn mem_insn(isa::Opcode op, isa::MemId mem, uint32_t sram, uint32_t dram, uint32_t y,
                      uint32_t x, uint32_t stride) {
  isa::MemInsn m;
  m.opcode = op;
  m.mem = mem;
  m.sram_base = sram;
  m.dram_base = dram;
  m.y_size = y;
  m.x_size = x;
  m.x_stride = stride;
  return m;
}

void SerialProgram::emit(isa::Insn insn) {
  if (!insns_.empty()) {
    const isa::Engine prev = isa::engine_of(insns_.back());
    const isa::Engine next = isa::engine_of(insn);
    if (prev != next) {
      if (prev != isa::Engine::kCompute && next != isa::Engine::kCompute) {
        emit(isa::AluInsn{});  // relay through compute: load and store share no queue
        return emit(insn);
      }
      if (static_cast<int>(next) > static_cast<int>(prev)) {
        isa::deps_of(insns_.back()).push_next = true;
        isa::deps_of(insn).pop_prev = true;
      } else {
        isa::deps_of(insns_.back()).push_prev = true;
        isa::deps_of(insn).pop_next = true;
      }
    }
  }
  insns_.push_back(insn);
}

isa::Program SerialProgram::finish() {
  emit(isa::FinishInsn{});
  for (const auto &insn : insns_) builder.emit(insn);
  return builder.finish();
}

void store_acc_words(SerialProgram &p, uint32_t sram, uint32_t count, uint32_t uop_index,
                     const std::vector<uint32_t> &out_regions) {
  for (size_t k = 0; k < out_regions.size(); ++k) {
    if (k > 0) {
      isa::AluInsn shr;
      shr.op = isa::AluOp::kShr;
      shr.uop_begin = uop_index;
      shr.uop_end = uop_index + 1;
      shr.loop_in = count;
      shr.dst = {0, 1};
      shr.src = {0, 1};
      shr.use_imm = true;
      shr.imm = 8;
      p.emit(shr);
    }
    p.emit(mem_insn(isa::Opcode::kStore, isa::MemId::kOut, sram, out_regions[k], 1, count, count));
  }
}

std::vector<int32_t> acc_words(const std::vector<std::vector<uint8_t>> &bytes) {
  std::vector<int32_t> out(bytes[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t v = 0;
    for (size_t k = 0; k < bytes.size(); ++k) v |= uint32_t{bytes[k][i]} << (8 * k);
    out[i] = static_cast<int32_t>(v);
  }
  return out;
}

std::vector<int64_t> tiled_product(const isa::HwConfig &c, const std::vector<uint8_t> &a,
                                   const std::vector<uint8_t> &b, uint32_t mt, uint32_t nt,
                                   uint32_t kt) {
  const int B = c.batch, BI = c.block_in, BO = c.block_out;
  std::vector<int64_t> out(size_t{mt} * nt * B * BO);
  for (uint32_t m = 0; m < mt; ++m)
    for (uint32_t n = 0; n < nt; ++n)
      for (int r = 0; r < B; ++r)
        for (int o = 0; o < BO; ++o) {
          int64_t sum = 0;
          for (uint32_t k = 0; k < kt; ++k)
            for (int ch = 0; ch < BI; ++ch)
              sum += int8_t(a[((m * kt + k) * B + r) * BI + ch]) *
                     int8_t(b[((n * kt + k) * BO + o) * BI + ch]);
          out[((m * nt + n) * B + r) * BO + o] = sum;
        }
  return out;
}

}  // namespace vacc::test
