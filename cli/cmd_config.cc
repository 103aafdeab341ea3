// `vacc config check FILE [--json]`: validates a config and prints what derives from it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/hw/dsp_packing.h"
#include "vacc/isa/encoding.h"

namespace vacc::cli {

namespace {

nlohmann::ordered_json config_json(const isa::HwConfig &c) {
  using isa::MemId;
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["source"] = c.source;
  j["gemm"] = {{"batch", c.batch}, {"block_in", c.block_in}, {"block_out", c.block_out}};
  const hw::DspPackingPlan packing = hw::plan_dsp_packing(c);
  j["gemm"]["dsp_packing"] = {
      {"setting", isa::dsp_packing_name(c.dsp_packing)},
      {"packed", packing.packed},
      {"reason", packing.reason},
      {"dsps_estimate", packing.packed ? packing.dsps_packed : packing.dsps_unpacked}};
  j["dtype"] = {{"inp_bits", c.inp_bits}, {"wgt_bits", c.wgt_bits}, {"acc_bits", c.acc_bits},
                {"out_bits", c.out_bits()}};
  j["peak_macs_per_cycle"] = c.peak_macs_per_cycle();
  j["clock_mhz"] = c.clock_mhz;
  j["peak_gops"] = c.peak_gops();
  for (MemId m : {MemId::kUop, MemId::kInp, MemId::kWgt, MemId::kAcc, MemId::kOut}) {
    nlohmann::ordered_json s;
    s["element_bytes"] = c.tile_bytes(m);
    if (m != MemId::kOut) {
      s["depth"] = c.depth(m);
      s["index_bits"] = m == MemId::kUop   ? c.uop_index_bits()
                        : m == MemId::kInp ? c.inp_index_bits()
                        : m == MemId::kWgt ? c.wgt_index_bits()
                                           : c.acc_index_bits();
      s["bytes"] = int64_t{c.depth(m)} * c.tile_bytes(m);
    }
    j["scratchpads"][isa::mem_id_name(m)] = s;
  }
  j["memory"] = {{"bus_bits", c.bus_bits},
                 {"latency_cycles", c.mem_latency_cycles},
                 {"bytes_per_cycle", c.mem_bytes_per_cycle}};
  j["queues"] = {{"insn_depth", c.insn_queue_depth}, {"token_depth", c.token_queue_depth}};
  j["fpga"] = {{"part", c.fpga_part}, {"platform", c.fpga_platform}};
  j["extensions"] = {{"alu_clip", c.alu_clip},
                     {"alu_hold", c.alu_hold},
                     {"alu_shr_clip", c.alu_shr_clip},
                     {"gemm_assign", c.gemm_assign},
                     {"store_inp", c.store_inp}};
  for (isa::Opcode op : {isa::Opcode::kLoad, isa::Opcode::kGemm, isa::Opcode::kAlu,
                         isa::Opcode::kFinish}) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::array();
    for (const auto &f : isa::insn_fields(c, op))
      fields.push_back({{"name", f.name}, {"offset", f.offset}, {"width", f.width}});
    const std::string key = op == isa::Opcode::kLoad ? "LOAD/STORE" : isa::opcode_name(op);
    j["isa"][key] = {{"bits", isa::insn_bits(c, op)}, {"fields", fields}};
  }
  nlohmann::ordered_json uop = nlohmann::ordered_json::array();
  for (const auto &f : isa::uop_fields(c))
    uop.push_back({{"name", f.name}, {"offset", f.offset}, {"width", f.width}});
  j["isa"]["uop"] = {{"bytes", c.uop_bytes()}, {"fields", uop}};
  return j;
}

std::string config_text(const isa::HwConfig &c) {
  using isa::MemId;
  std::string out = fmt::format("config '{}' ({}): valid\n\n", c.name, c.source);
  out += fmt::format("GEMM core   {} x {} x {} (batch x block_in x block_out)\n", c.batch,
                     c.block_in, c.block_out);
  const hw::DspPackingPlan packing = hw::plan_dsp_packing(c);
  out += fmt::format("DSP packing {} ({}; about {} DSP48s)\n",
                     packing.packed ? "two int8 products per DSP multiplier" : "off",
                     packing.reason, packing.packed ? packing.dsps_packed : packing.dsps_unpacked);
  out += fmt::format("data types  inp int{}, wgt int{}, acc int{}, out int{}\n", c.inp_bits,
                     c.wgt_bits, c.acc_bits, c.out_bits());
  out += fmt::format("peak        {} MACs/cycle = {:.1f} GOPS at {} MHz\n",
                     c.peak_macs_per_cycle(), c.peak_gops(), c.clock_mhz);
  out += fmt::format("memory      {}-bit AXI bus; DRAM model: {} cycles latency, {} bytes/cycle\n",
                     c.bus_bits, c.mem_latency_cycles, c.mem_bytes_per_cycle);
  out += fmt::format("queues      instruction queues {} deep, token queues {} deep\n",
                     c.insn_queue_depth, c.token_queue_depth);
  out += fmt::format("fpga        part {}, platform {}\n", c.fpga_part, c.fpga_platform);
  out += fmt::format("extensions  alu_clip {}\n",
                     c.alu_clip ? "on (ALU operation clip: a two-bound clip in one pass)" : "off");
  out +=
      fmt::format("            alu_hold {}\n",
                  c.alu_hold ? "on (a vector operand every micro-op of an ALU instruction shares "
                               "is read once: a micro-op per cycle)"
                             : "off");
  out += fmt::format("            alu_shr_clip {}\n",
                     c.alu_shr_clip ? "on (ALU operation shr_clip: a shift by a vector operand "
                                      "and a two-bound clip in one pass)"
                                    : "off");
  out += fmt::format("            gemm_assign {}\n",
                     c.gemm_assign ? "on (GEMM assign, opcode 5: products replace the "
                                     "accumulators, so they need no reset)"
                                   : "off");
  out += fmt::format("            store_inp {}\n\n",
                     c.store_inp ? "on (STORE INP: accumulator tiles narrowed into the INP "
                                   "scratchpad on chip)"
                                 : "off");

  std::vector<std::vector<std::string>> rows = {
      {"scratchpad", "size", "element", "element bytes", "depth", "index bits"}};
  auto row = [&](MemId m, const std::string &element, int bits) {
    rows.push_back({isa::mem_id_name(m),
                    fmt::format("{} KiB", int64_t{c.depth(m)} * c.tile_bytes(m) / 1024), element,
                    std::to_string(c.tile_bytes(m)), std::to_string(c.depth(m)),
                    std::to_string(bits)});
  };
  row(MemId::kUop, "micro-op", c.uop_index_bits());
  row(MemId::kInp, fmt::format("{}x{} int{}", c.batch, c.block_in, c.inp_bits),
      c.inp_index_bits());
  row(MemId::kWgt, fmt::format("{}x{} int{}", c.block_out, c.block_in, c.wgt_bits),
      c.wgt_index_bits());
  row(MemId::kAcc, fmt::format("{}x{} int{}", c.batch, c.block_out, c.acc_bits),
      c.acc_index_bits());
  rows.push_back({"out", "(stores)", fmt::format("{}x{} int{}", c.batch, c.block_out,
                                                 c.out_bits()),
                  std::to_string(c.out_tile_bytes()), "-", "-"});
  out += format_table(rows) + "\n";

  out += "instruction fields (name:bits, packed from bit 0)\n";
  for (isa::Opcode op : {isa::Opcode::kLoad, isa::Opcode::kGemm, isa::Opcode::kAlu,
                         isa::Opcode::kFinish}) {
    std::string fields;
    for (const auto &f : isa::insn_fields(c, op)) fields += fmt::format(" {}:{}", f.name, f.width);
    out += fmt::format("  {:<10} {:>3}/128 bits:{}\n",
                       op == isa::Opcode::kLoad ? "LOAD/STORE" : isa::opcode_name(op),
                       isa::insn_bits(c, op), fields);
  }
  std::string uop;
  for (const auto &f : isa::uop_fields(c)) uop += fmt::format(" {}:{}", f.name, f.width);
  out += fmt::format("  {:<10} {:>3} bytes  :{}\n", "micro-op", c.uop_bytes(), uop);
  return out;
}

}  // namespace

void add_config_command(CLI::App &app) {
  auto *config = app.add_subcommand("config", "Inspect hardware configs");
  config->require_subcommand(1);
  auto *check = config->add_subcommand(
      "check", "Validate a config file and print the parameters derived from it");
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  check->add_option("file", *file, "Config YAML file (or a bundled config name)")->required();
  check->add_flag("--json", *json, "Print JSON instead of text");
  check->callback([file, json] {
    const isa::HwConfig c = load_named_config(*file);
    if (*json) fmt::print("{}\n", config_json(c).dump(2));
    else fmt::print("{}", config_text(c));
  });
}

}  // namespace vacc::cli
