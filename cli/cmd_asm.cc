// `vacc asm` and `vacc disasm`: text assembly to program files and back.
#include <fmt/format.h>

#include <fstream>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::cli {

namespace {

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A raw instruction stream (.bin): 16-byte words, nothing else.
void write_raw(const isa::Program &program, const std::string &path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("{}: cannot write", path);
  out.write(reinterpret_cast<const char *>(program.dram.data() + program.insn_offset),
            std::streamsize{program.insn_count} * isa::kInsnBytes);
}

isa::Program read_raw(const isa::HwConfig &config, const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  isa::Program p;
  p.config_name = config.name;
  p.isa_fingerprint = config.isa_fingerprint();
  p.dram.assign(std::istreambuf_iterator<char>(in), {});
  if (p.dram.size() % isa::kInsnBytes != 0)
    fail("{}: {} bytes is not a whole number of 16-byte instructions (and the file is not a "
         ".vprog program)",
         path, p.dram.size());
  p.insn_count = static_cast<uint32_t>(p.dram.size() / isa::kInsnBytes);
  return p;
}

}  // namespace

void add_asm_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("asm", "Assemble a program (syntax: isa/README.md)");
  struct Args {
    std::string source, output, config = "default";
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("source", args->source, "Assembly file (.s)")->required();
  cmd->add_option("-o,--output", args->output,
                  "Output: a .vprog program file, or a .bin raw instruction stream")
      ->required();
  cmd->add_option("--config", args->config, "Hardware config (YAML path or bundled name)");
  cmd->callback([args] {
    const isa::HwConfig config = load_named_config(args->config);
    const isa::Program program = isa::assemble_file(config, args->source);
    if (ends_with(args->output, ".bin")) write_raw(program, args->output);
    else isa::save_program(program, args->output);
    fmt::print("{}: {} instructions, {} regions, {} bytes of device memory\n", args->output,
               program.insn_count, program.regions.size(), program.dram.size());
  });
}

void add_disasm_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("disasm", "Print a program (.vprog or raw .bin) as assembly");
  struct Args {
    std::string input, output, config = "default";
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("program", args->input, "Program file")->required();
  cmd->add_option("-o,--output", args->output, "Write the text here instead of stdout");
  cmd->add_option("--config", args->config, "Hardware config (YAML path or bundled name)");
  cmd->callback([args] {
    const isa::HwConfig config = load_named_config(args->config);
    isa::Program program;
    if (isa::is_program_file(args->input)) {
      program = isa::load_program(args->input);
      program.check_config(config);
    } else {
      program = read_raw(config, args->input);
    }
    const std::string text = isa::disassemble(config, program);
    if (args->output.empty()) {
      fmt::print("{}", text);
    } else {
      std::ofstream out(args->output);
      if (!out) fail("{}: cannot write", args->output);
      out << text;
    }
  });
}

}  // namespace vacc::cli
