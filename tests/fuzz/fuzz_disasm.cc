// The program-file loader, the instruction decoder and the disassembler. Besides whole
// program files, every 16 bytes of the input are decoded as one instruction word; a word that
// decodes must encode back to an instruction that reads the same.
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::fuzz {

namespace {

void decode_words(const uint8_t *data, size_t size) {
  const isa::HwConfig &c = default_config();
  for (size_t at = 0; at + isa::kInsnBytes <= size; at += isa::kInsnBytes) {
    isa::Insn insn;
    try {
      insn = isa::decode(c, isa::load_word(data + at));
    } catch (const Error &) {
      continue;  // not an instruction: the decoder said so
    }
    const std::string text = isa::format_insn(c, insn);
    const std::string again = isa::format_insn(c, isa::decode(c, isa::encode(c, insn)));
    if (text != again) {
      std::fprintf(stderr, "decode/encode round trip changed '%s' into '%s'\n", text.c_str(),
                   again.c_str());
      std::abort();
    }
  }
}

}  // namespace

void fuzz_disasm(const uint8_t *data, size_t size) {
  decode_words(data, size);
  const isa::Program program =
      isa::parse_program(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz");
  program.instructions(default_config());
  isa::disassemble(default_config(), program);
}

}  // namespace vacc::fuzz
