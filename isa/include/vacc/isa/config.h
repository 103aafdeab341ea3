// The hardware config: one YAML file describes one accelerator, and every other part of vacc
// (ISA field widths, the RTL parameter package, scratchpad depths, simulator timing, FPGA
// packaging) derives from it. load_config() validates every key; the derived quantities are
// member functions so that nothing restates a parameter by hand.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vacc::isa {

// Scratchpad / DRAM element kinds addressed by LOAD and STORE (DESIGN.md "The ISA").
enum class MemId : uint8_t { kUop = 0, kWgt = 1, kInp = 2, kAcc = 3, kOut = 4 };
inline constexpr int kNumMemIds = 5;
const char *mem_id_name(MemId id);  // "uop", "wgt", "inp", "acc", "out"

// gemm.dsp_packing: whether the RTL's GEMM core computes two int8 products with one DSP48
// multiplier (hw/rtl/vacc_mul2_packed.sv). `auto` packs when the unpacked core would not fit
// the DSPs of fpga.part (hw/include/vacc/hw/dsp_packing.h decides). Programs, results and
// cycle counts are the same either way; only the hardware's resources differ.
enum class DspPacking : uint8_t { kAuto = 0, kOff = 1, kOn = 2 };
const char *dsp_packing_name(DspPacking packing);  // "auto", "off", "on"

struct HwConfig {
  std::string name;    // from the `name` key, or the file's stem
  std::string source;  // the file it was read from ("" when built in code)

  // gemm: BATCH x BLOCK_IN times BLOCK_IN x BLOCK_OUT per cycle.
  int batch = 1;
  int block_in = 16;
  int block_out = 16;
  DspPacking dsp_packing = DspPacking::kAuto;
  // dtype: signed integer widths; OUT (what STORE writes) has the input width.
  int inp_bits = 8;
  int wgt_bits = 8;
  int acc_bits = 32;
  // buffers: scratchpad capacities.
  int uop_kib = 32;
  int inp_kib = 32;
  int wgt_kib = 256;
  int acc_kib = 128;
  // memory: the AXI bus and the DRAM model used by the cycle-accurate simulator.
  int bus_bits = 64;
  int mem_latency_cycles = 64;
  int mem_bytes_per_cycle = 8;
  // queues: depth of each engine's instruction queue and of each dependency-token queue.
  int insn_queue_depth = 32;
  int token_queue_depth = 256;
  double clock_mhz = 100;
  std::string fpga_part = "xc7z020clg400-1";
  std::string fpga_platform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";
  // extensions: ISA extensions, each off unless the config switches it on (isa/README.md,
  // "Extensions"). alu_clip: the two-bound ALU operation CLIP. alu_hold: an ALU instruction
  // whose micro-ops all share one vector operand reads it once and issues a micro-op every
  // cycle (timing only: the same instructions, the same results). gemm_assign: a GEMM flag
  // `assign` that writes its products instead of adding them, so an accumulator needs no reset.
  // alu_shr_clip: the ALU operation SHR_CLIP, a shift by a vector operand and a clip to the
  // immediate's two bounds in one pass (a requantization's last two steps).
  // store_inp: STORE INP, a STORE that narrows accumulator tiles into the INP scratchpad on
  // chip instead of writing them to DRAM (a layer's output feeding the next layer's GEMMs).
  bool alu_clip = false;
  bool alu_hold = false;
  bool gemm_assign = false;
  bool alu_shr_clip = false;
  bool store_inp = false;

  int out_bits() const { return inp_bits; }

  // Bytes of one element of each kind, in the scratchpad and in DRAM.
  int inp_tile_bytes() const { return batch * block_in * inp_bits / 8; }
  int wgt_tile_bytes() const { return block_out * block_in * wgt_bits / 8; }
  int acc_tile_bytes() const { return batch * block_out * acc_bits / 8; }
  int out_tile_bytes() const { return batch * block_out * out_bits() / 8; }
  int uop_bytes() const;  // 4 when a micro-op fits 32 bits, else 8
  int tile_bytes(MemId id) const;

  // Scratchpad depths, in elements.
  int uop_depth() const { return uop_kib * 1024 / uop_bytes(); }
  int inp_depth() const { return inp_kib * 1024 / inp_tile_bytes(); }
  int wgt_depth() const { return wgt_kib * 1024 / wgt_tile_bytes(); }
  int acc_depth() const { return acc_kib * 1024 / acc_tile_bytes(); }
  int depth(MemId id) const;  // OUT addresses the ACC scratchpad
  // ACC is built as two banks, its lower and upper half (isa/README.md, "Overlap").
  int acc_bank_depth() const { return acc_depth() / 2; }
  int acc_bank(uint64_t acc_index) const {
    return acc_index >= static_cast<uint64_t>(acc_bank_depth()) ? 1 : 0;
  }

  // Index widths (bits) of each scratchpad.
  int uop_index_bits() const;
  int inp_index_bits() const;
  int wgt_index_bits() const;
  int acc_index_bits() const;

  // Micro-op fields: dst indexes ACC, src indexes INP (GEMM) or ACC (ALU), wgt indexes WGT.
  int uop_dst_bits() const { return acc_index_bits(); }
  int uop_src_bits() const;
  int uop_wgt_bits() const { return wgt_index_bits(); }

  int64_t peak_macs_per_cycle() const { return int64_t{batch} * block_in * block_out; }
  double peak_gops() const { return 2.0 * peak_macs_per_cycle() * clock_mhz / 1000.0; }
  // A short identity of everything that changes the meaning of a program's bits.
  uint64_t isa_fingerprint() const;
};

// Reads and validates a config file. Missing keys take the defaults above; unknown keys,
// wrong types, values breaking a rule (powers of two, a buffer smaller than one tile, an
// instruction that no longer fits 128 bits) throw vacc::Error naming the file, key and rule.
HwConfig load_config(const std::string &path);
HwConfig parse_config(const std::string &yaml_text, const std::string &source_name);

// The text of a config derived from `yaml_text` (a config file's text): each key, as
// config_keys() writes it ("gemm.block_in") or a top-level one ("name", "clock_mhz"), set to a
// YAML scalar. parse_config() then checks the keys and rules as for a file; `source_name`
// names the text in the message of a YAML error.
std::string set_config_keys(const std::string &yaml_text,
                            const std::vector<std::pair<std::string, std::string>> &values,
                            const std::string &source_name);

// Checks the rules on a config built in code; throws vacc::Error like load_config.
void validate_config(const HwConfig &config);

// Every key a config file accepts, as written in the file ("gemm.block_in", "clock_mhz",
// "fpga.part"), with the kind of value it takes; `name` is left out. Architecture sweeps
// check their axes against this list.
struct ConfigKey {
  enum class Kind { kInteger, kNumber, kText };
  std::string path;
  Kind kind = Kind::kInteger;
};
const std::vector<ConfigKey> &config_keys();

// Finds a config by name or path: an existing path is used as is; otherwise NAME resolves to
// configs/NAME.yaml under the directory of VACC_CONFIG_DIR or vacc's installed config dir.
std::string resolve_config_path(const std::string &name_or_path);

}  // namespace vacc::isa
