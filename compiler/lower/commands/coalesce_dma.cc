#include "codegen_commands.h"
#include "vacc/isa/encoding.h"

namespace vacc::lower {
namespace {

constexpr uint64_t kMaxSize = (uint64_t{1} << isa::kDmaSizeBits) - 1;

bool unpadded(const isa::DmaCommand &d) {
  return d.pad_top == 0 && d.pad_bottom == 0 && d.pad_left == 0 && d.pad_right == 0;
}

// Tries to extend `a` by `b`, which follows it in program order; true when merged. The
// scratchpad side of an unpadded transfer is dense (element (y, x) at sram + y*x_size + x).
bool extend(isa::DmaCommand &a, const isa::DmaCommand &b) {
  if (a.store != b.store || a.mem != b.mem || a.buffer != b.buffer || !unpadded(a) ||
      !unpadded(b) || a.x == 0 || a.y == 0 || b.x == 0 || b.y == 0)
    return false;
  const uint64_t a_elems = uint64_t{a.y} * a.x;
  if (b.sram != a.sram + a_elems) return false;
  // A row continuing a row.
  if (a.y == 1 && b.y == 1 && b.offset == a.offset + a.x && a.x + b.x <= kMaxSize) {
    a.x += b.x;
    a.stride = a.x;
    return true;
  }
  // Rows continuing a rectangle at its stride (a single row may choose its stride).
  if (b.x != a.x || a.y + b.y > kMaxSize || b.offset <= a.offset) return false;
  const uint64_t stride = a.y == 1 ? (b.offset - a.offset) : a.stride;
  if (stride < a.x || stride > kMaxSize || b.offset != a.offset + a.y * stride) return false;
  if (b.y > 1 && b.stride != stride) return false;
  a.stride = static_cast<uint32_t>(stride);
  a.y += b.y;
  return true;
}

CodegenCommands coalesce_pass(const CodegenCommands &ops) {
  CodegenCommands out;
  out.reserve(ops.size());
  for (const CodegenCommand &op : ops) {
    const auto *d = std::get_if<isa::DmaCommand>(&op.cmd);
    if (d && !out.empty()) {
      if (auto *last = std::get_if<isa::DmaCommand>(&out.back().cmd); last && extend(*last, *d))
        continue;
    }
    out.push_back(op);
  }
  return out;
}

}  // namespace

// Rows are merged in the first round; rectangles of those rows in the second.
CodegenCommands coalesce_dma(const CodegenCommands &ops) {
  return coalesce_pass(coalesce_pass(ops));
}

}  // namespace vacc::lower
