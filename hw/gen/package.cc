// Writes vacc_pkg.sv from an isa::HwConfig (see package.h). The instruction layout is copied
// field by field from isa::insn_fields() / uop_fields(): the RTL's decode indexes the word
// with <Kind><Field>Off / <Kind><Field>W, so a change of encoding in isa/ reaches the RTL by
// regenerating this file.
#include "vacc/hw/package.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "vacc/hw/dsp_packing.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/insn.h"
#include "vacc/support/error.h"

namespace vacc::hw {
namespace {

int log2_exact(int64_t v) {
  int n = 0;
  while ((int64_t{1} << n) < v) ++n;
  return n;
}

// The instruction kinds in opcode order, with the prefix their parameters carry.
const std::vector<std::pair<isa::Opcode, const char *>> &kinds() {
  static const std::vector<std::pair<isa::Opcode, const char *>> k = {
      {isa::Opcode::kLoad, "Load"},     {isa::Opcode::kStore, "Store"},
      {isa::Opcode::kGemm, "Gemm"},     {isa::Opcode::kFinish, "Finish"},
      {isa::Opcode::kAlu, "Alu"}};
  return k;
}

class Writer {
 public:
  void comment(const std::string &text) { out_ << "  // " << text << "\n"; }
  void blank() { out_ << "\n"; }
  void param(const std::string &name, int64_t value) {
    out_ << fmt::format("  localparam int unsigned {} = {};\n", name, value);
  }
  void code(const std::string &name, int width, int64_t value) {
    out_ << fmt::format("  localparam logic [{}:0] {} = {}'d{};\n", width - 1, name, width, value);
  }
  std::ostringstream out_;
};

// The port bundles (hw/README.md, "Port bundles"): signal groups that several modules pass,
// declared once as packed structs. Yosys 0.23 reads packed structs in ports and their members
// on a scalar, not members of an array of structs nor assignment patterns: the RTL keeps to
// that. Widths come from the parameters above, so the bundles live in this package.
void write_port_bundles(Writer &w) {
  w.comment("Port bundles: signal groups declared once (hw/README.md, \"Port bundles\").");
  w.out_ << R"(  // An engine's state, for the run controller's counters and its done / quiet logic.
  typedef struct packed {
    logic busy;   // an instruction executes
    logic stall;  // the head instruction waits for a token or for room to push one
    logic quiet;  // nothing in flight: not in the middle of an execution
    logic idle;   // no instruction at all
  } engine_status_t;
  // What an engine sees of its two token queues: prev (to and from the engine before it in
  // load -> compute -> store), next (the engine after it). An engine without one reads 0.
  typedef struct packed {
    logic prev_avail;  // a token from prev waits
    logic next_avail;  // a token from next waits
    logic prev_full;   // the queue to prev has no room
    logic next_full;   // the queue to next has no room
  } tok_state_t;
  // What it does to them this cycle.
  typedef struct packed {
    logic pop_prev;
    logic pop_next;
    logic push_prev;
    logic push_next;
  } tok_ctrl_t;
  // One AXI read client of vacc_axi_rd_arb (fetch, load INP and WGT, compute UOP and ACC): its
  // request and its readiness for data; the arbiter's answer. R data is shared by all clients.
  typedef struct packed {
    logic ar_valid;
    logic [63:0] ar_addr;
    logic [7:0] ar_len;  // beats - 1
    logic r_ready;
  } rd_req_t;
  typedef struct packed {
    logic ar_ready;
    logic r_valid;  // a beat of this client's burst is on R
  } rd_rsp_t;
  // The store engine's AXI4 write channels (AW, W) toward the top's register slices, and their
  // answer with B's valid (the store engine always takes a response: B has no ready here).
  typedef struct packed {
    logic aw_valid;
    logic [63:0] aw_addr;
    logic [7:0] aw_len;  // beats - 1
    logic w_valid;
    logic [BusBits-1:0] w_data;
    logic [BusBytes-1:0] w_strb;
    logic w_last;
  } wr_req_t;
  typedef struct packed {
    logic aw_ready;
    logic w_ready;
    logic b_valid;
  } wr_rsp_t;
  // An engine's instruction queue (load, compute, store): its head, and what the engine does
  // with it this cycle.
  typedef struct packed {
    logic valid;  // the queue holds an instruction
    logic [InsnBits-1:0] insn;
  } insn_head_t;
  typedef struct packed {
    logic pop;    // the head retires: it leaves the queue
    logic start;  // the head starts executing
  } insn_ctl_t;
  // Scratchpad ports between engines: the load engine writes INP and WGT, the compute engine
  // reads them, the store engine reads ACC. A bundle holds the enable and the address; the data
  // (a whole tile, up to kilobits) travels as a plain vector beside it, as the RAM's ports take
  // and give it: the write data from the writer, the read data from the RAM the cycle after the
  // request.
  typedef struct packed {
    logic we;
    logic [InpIdxW-1:0] addr;
  } inp_sram_wr_t;
  typedef struct packed {
    logic we;
    logic [WgtIdxW-1:0] addr;
  } wgt_sram_wr_t;
  typedef struct packed {
    logic re;
    logic [InpIdxW-1:0] addr;
  } inp_sram_rd_t;
  typedef struct packed {
    logic re;
    logic [WgtIdxW-1:0] addr;
  } wgt_sram_rd_t;
  typedef struct packed {
    logic re;
    logic [AccIdxW-1:0] addr;
  } acc_sram_rd_t;
)";
}

void check_tile(const isa::HwConfig &c, const char *key, int bytes) {
  const int bus_bytes = c.bus_bits / 8;
  if (bytes > 4096)
    fail("{}: a {} element of {} bytes is larger than a 4 KiB AXI page; the RTL's DMA cannot "
         "burst it. Reduce the GEMM shape or the data width.",
         c.source.empty() ? c.name : c.source, key, bytes);
  if (bytes > 256 * bus_bytes)
    fail("{}: a {} element of {} bytes needs more than one 256-beat burst on a {}-bit bus; "
         "raise memory.bus_bits.",
         c.source.empty() ? c.name : c.source, key, bytes, c.bus_bits);
}

}  // namespace

std::string camel_case(const std::string &snake) {
  std::string out;
  bool upper = true;
  for (char ch : snake) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

std::string generate_package(const isa::HwConfig &c) {
  if (c.bus_bits < 8 || (c.bus_bits & (c.bus_bits - 1)) != 0)
    fail("{}: memory.bus_bits = {} must be a power of two of at least 8",
         c.source.empty() ? c.name : c.source, c.bus_bits);
  check_tile(c, "uop", c.uop_bytes());
  check_tile(c, "wgt", c.wgt_tile_bytes());
  check_tile(c, "inp", c.inp_tile_bytes());
  check_tile(c, "acc", c.acc_tile_bytes());
  check_tile(c, "out", c.out_tile_bytes());

  Writer w;
  w.out_ << "// vacc_pkg: parameters of the accelerator for config '" << c.name << "'.\n"
         << "// Generated by vacc-hwgen from isa/'s tables (hw/gen/package.cc); do not edit.\n"
         << "package vacc_pkg;\n";
  w.comment("GEMM core: Batch x BlockIn times BlockIn x BlockOut per cycle; signed widths.");
  w.param("Batch", c.batch);
  w.param("BlockIn", c.block_in);
  w.param("BlockOut", c.block_out);
  w.param("InpBits", c.inp_bits);
  w.param("WgtBits", c.wgt_bits);
  w.param("AccBits", c.acc_bits);
  w.param("OutBits", c.out_bits());
  const DspPackingPlan packing = plan_dsp_packing(c);
  // Only the outcome: the reason names fpga.part, which must not change the RTL model's key.
  w.comment("1: two products per DSP multiplier (gemm.dsp_packing as resolved for fpga.part).");
  w.param("GemmDspPacking", packing.packed ? 1 : 0);
  w.comment("ISA extensions (config `extensions`), 1 where on.");
  w.param("ExtAluClip", c.alu_clip ? 1 : 0);
  w.param("ExtAluHold", c.alu_hold ? 1 : 0);
  w.param("ExtGemmAssign", c.gemm_assign ? 1 : 0);
  w.param("ExtAluShrClip", c.alu_shr_clip ? 1 : 0);
  w.param("ExtStoreInp", c.store_inp ? 1 : 0);
  w.blank();
  w.comment("AXI4 master data width to device memory.");
  w.param("BusBits", c.bus_bits);
  w.param("BusBytes", c.bus_bits / 8);
  w.param("BusBytesLog2", log2_exact(c.bus_bits / 8));
  w.blank();
  w.comment("Elements (one scratchpad entry / one DRAM element): bits and log2 of DRAM bytes.");
  struct Mem {
    const char *name;
    isa::MemId id;
  };
  const Mem mems[] = {{"Uop", isa::MemId::kUop},
                      {"Wgt", isa::MemId::kWgt},
                      {"Inp", isa::MemId::kInp},
                      {"Acc", isa::MemId::kAcc},
                      {"Out", isa::MemId::kOut}};
  for (const Mem &m : mems) {
    w.param(fmt::format("{}ElemBits", m.name), int64_t{c.tile_bytes(m.id)} * 8);
    w.param(fmt::format("{}ElemBytesLog2", m.name), log2_exact(c.tile_bytes(m.id)));
  }
  w.blank();
  w.comment("Scratchpad depths (elements) and index widths.");
  // Every RTL scratchpad address has exactly $clog2(depth) bits: in range only for a power of
  // two (hw/README.md, "Every array index in range"). The config's rules guarantee it.
  for (int depth : {c.uop_depth(), c.wgt_depth(), c.inp_depth(), c.acc_depth()})
    if (depth <= 0 || (depth & (depth - 1)) != 0)
      fail("config '{}': a scratchpad depth of {} elements is not a power of two", c.name, depth);
  w.param("UopDepth", c.uop_depth());
  w.param("WgtDepth", c.wgt_depth());
  w.param("InpDepth", c.inp_depth());
  w.param("AccDepth", c.acc_depth());
  w.param("UopIdxW", c.uop_index_bits());
  w.param("WgtIdxW", c.wgt_index_bits());
  w.param("InpIdxW", c.inp_index_bits());
  w.param("AccIdxW", c.acc_index_bits());
  w.blank();
  w.comment("Queues: per-engine instruction queue and dependency-token queue depths.");
  w.param("InsnQueueDepth", c.insn_queue_depth);
  w.param("TokenQueueDepth", c.token_queue_depth);
  w.blank();
  w.comment("Instruction words.");
  w.param("InsnBits", isa::kInsnBytes * 8);
  w.param("InsnBytesLog2", log2_exact(isa::kInsnBytes));
  w.param("OpcodeW", isa::kOpcodeBits);
  w.param("MemIdW", isa::kMemIdBits);
  w.param("AluOpW", isa::kAluOpBits);
  for (const auto &[op, prefix] : kinds())
    w.code(fmt::format("Op{}", prefix), isa::kOpcodeBits, static_cast<int>(op));
  // Legal only where ExtGemmAssign is 1.
  w.code("OpGemmAssign", isa::kOpcodeBits, static_cast<int>(isa::kGemmAssignOpcode));
  for (const Mem &m : mems)
    w.code(fmt::format("Mem{}", m.name), isa::kMemIdBits, static_cast<int>(m.id));
  for (int i = 0; i < isa::kNumAluOps; ++i)
    w.code("Alu" + camel_case(isa::alu_op_name(static_cast<isa::AluOp>(i))), isa::kAluOpBits,
           i);
  w.param("NumAluOps", isa::kNumAluOps);
  w.blank();
  w.comment("Instruction fields, from isa::insn_fields(): <Kind><Field>Off / <Kind><Field>W.");
  for (const auto &[op, prefix] : kinds()) {
    for (const isa::Field &f : isa::insn_fields(c, op)) {
      const std::string name = prefix + camel_case(f.name);
      w.param(name + "Off", f.offset);
      w.param(name + "W", f.width);
    }
    w.param(fmt::format("{}Bits", prefix), isa::insn_bits(c, op));
  }
  w.blank();
  w.comment("Micro-op fields, from isa::uop_fields(): Uop<Field>Off / Uop<Field>W.");
  for (const isa::Field &f : isa::uop_fields(c)) {
    const std::string name = "Uop" + camel_case(f.name);
    w.param(name + "Off", f.offset);
    w.param(name + "W", f.width);
  }
  w.blank();
  write_port_bundles(w);
  w.out_ << "endpackage\n";
  return w.out_.str();
}

std::string write_package(const isa::HwConfig &config, const std::string &dir) {
  const std::string text = generate_package(config);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create directory '{}': {}", dir, ec.message());
  const std::string path = (std::filesystem::path(dir) / "vacc_pkg.sv").string();
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == text) return path;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("cannot write '{}': check that the directory is writable", path);
  out << text;
  if (!out) fail("cannot write '{}'", path);
  return path;
}

}  // namespace vacc::hw
