// The last step of lowering a command list: micro-op kernels interned (deduplicated by content).
#include <map>

#include "codegen_commands.h"

namespace vacc::lower {

void finalize(CodegenCommands ops, isa::CommandList *list) {
  std::map<std::vector<uint32_t>, uint32_t> index;
  auto intern = [&](const isa::UopKernel &k) {
    std::vector<uint32_t> key;
    key.reserve(3 * k.size());
    for (const isa::Uop &u : k) key.insert(key.end(), {u.dst, u.src, u.wgt});
    auto [it, added] = index.emplace(key, static_cast<uint32_t>(list->kernels.size()));
    if (added) list->kernels.push_back(k);
    return it->second;
  };
  list->commands.reserve(list->commands.size() + ops.size());
  for (CodegenCommand &op : ops) {
    if (auto *g = std::get_if<isa::GemmCommand>(&op.cmd)) g->kernel = intern(op.uops);
    if (auto *a = std::get_if<isa::AluCommand>(&op.cmd)) a->kernel = intern(op.uops);
    list->commands.push_back(op.cmd);
  }
}

std::string commands_text(const CodegenCommands &ops,
                          const std::vector<isa::CommandBuffer> &buffers) {
  isa::CommandList list;
  list.buffers = buffers;
  finalize(ops, &list);
  return isa::to_text(list);
}

}  // namespace vacc::lower
