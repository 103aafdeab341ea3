// A program file (.vprog): everything one accelerator run needs, written once and run
// unchanged on every engine (fsim, rtl, an FPGA through XRT). It is a DRAM image with named
// regions; the instruction stream and the micro-op kernels are regions of that image like
// the inputs, weights and outputs, so a host only copies the image to device memory, writes
// the registers of DESIGN.md (instruction count, base address, instruction offset) and starts.
//
// File layout: "VACCPROG" magic, u32 format version, u32 header length, the JSON header,
// zero padding to a 64-byte boundary, then the DRAM image.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::isa {

enum class RegionKind : uint8_t { kInstructions, kUops, kInput, kWeight, kOutput, kScratch };
const char *region_kind_name(RegionKind kind);  // "insn", "uop", "input", "weight", ...
std::optional<RegionKind> parse_region_kind(const std::string &name);

struct Region {
  std::string name;
  RegionKind kind = RegionKind::kScratch;
  MemId mem = MemId::kInp;  // the element kind its DRAM addresses count in
  uint64_t offset = 0;      // bytes from the device-memory base
  uint64_t bytes = 0;
  uint64_t elements(const HwConfig &config) const { return bytes / config.tile_bytes(mem); }
  uint64_t first_element(const HwConfig &config) const {
    return offset / config.tile_bytes(mem);
  }
};

struct Program {
  std::string config_name;
  uint64_t isa_fingerprint = 0;  // HwConfig::isa_fingerprint() it was built for
  uint64_t insn_offset = 0;      // bytes from the base; register 0x20
  uint32_t insn_count = 0;       // register 0x10
  std::vector<Region> regions;   // sorted by offset, non-overlapping
  std::vector<uint8_t> dram;     // the whole device-memory image

  const Region *find_region(const std::string &name) const;
  // Throws vacc::Error when the program was built for a different ISA layout.
  void check_config(const HwConfig &config) const;
  std::vector<Insn> instructions(const HwConfig &config) const;
};

// Regions are aligned to this many bytes so that every element kind can address them.
uint64_t region_alignment(const HwConfig &config);

void save_program(const Program &program, const std::string &path);
// Throws vacc::Error naming the file on a bad magic, header, or out-of-range region.
Program load_program(const std::string &path);
// The same from a file's bytes; `path` names it in diagnostics.
Program parse_program(std::string_view bytes, const std::string &path);
bool is_program_file(const std::string &path);

// Builds a program: declare regions, append micro-ops and instructions, then finish().
class ProgramBuilder {
 public:
  explicit ProgramBuilder(const HwConfig &config);

  // Reserves `elements` elements of kind `mem` in a new named region (zero-filled); returns
  // the region's first element index, the value DRAM-address fields use.
  uint32_t add_region(const std::string &name, RegionKind kind, MemId mem, uint64_t elements);
  // Mutable bytes of a region declared earlier (valid until the next add_region).
  std::vector<uint8_t> region_bytes(const std::string &name) const;
  void set_region_bytes(const std::string &name, const std::vector<uint8_t> &bytes);

  // Appends a micro-op to the program's micro-op region; returns its index in that region.
  uint32_t add_uop(const Uop &uop);
  // First element of the micro-op region (for LOAD UOP dram_base); valid after finish().
  void emit(const Insn &insn);
  size_t insn_count() const { return insns_.size(); }
  size_t uop_count() const { return uops_.size(); }

  // Lays out the "uops" and "insns" regions after the declared ones and encodes everything.
  // The micro-op region's first element is known in advance: see uop_region_base().
  Program finish();
  // The element index at which finish() will place micro-op 0 (stable once all data regions
  // are declared; declaring another region afterwards is an error).
  uint32_t uop_region_base();

 private:
  struct Pending {
    Region region;
    std::vector<uint8_t> bytes;
  };
  const HwConfig &config_;
  std::vector<Pending> regions_;
  std::vector<Uop> uops_;
  std::vector<Insn> insns_;
  uint64_t next_offset_ = 0;
  bool uop_base_fixed_ = false;
};

}  // namespace vacc::isa
