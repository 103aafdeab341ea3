#include "vacc/runtime/replay.h"

#include "vacc/isa/program.h"
#include "vacc/runtime/session.h"
#include "vacc/support/error.h"

namespace vacc::runtime {

namespace {

void check_binding(const isa::CommandList &list, const std::vector<uint64_t> &buffer_elements) {
  if (buffer_elements.size() != list.buffers.size())
    fail("command list '{}': {} buffers bound, but it uses {}", list.name, buffer_elements.size(),
         list.buffers.size());
}

void replay_command(CommandQueue &queue, const isa::CommandList &list, size_t i,
                    const std::vector<uint64_t> &buffer_elements) {
  const isa::Command &c = list.commands[i];
  if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
    if (d->to_inp()) {
      if (d->offset > UINT32_MAX)
        fail("command list '{}', command {}: STORE INP to entry {}, past the 32-bit field",
             list.name, i, d->offset);
      queue.store_inp(d->sram, static_cast<uint32_t>(d->offset), d->y, d->x, d->stride);
      return;
    }
    const isa::CommandBuffer &b = list.buffers.at(d->buffer);
    // The last element the command touches must lie inside its buffer.
    uint64_t last = d->offset + uint64_t{d->y == 0 ? 0 : d->y - 1} * d->stride + d->x;
    if (d->y > 0 && d->x > 0 && last > b.elements)
      fail("command list '{}', command {}: DMA reaches element {} of buffer '{}' ({} elements)",
           list.name, i, last, b.name, b.elements);
    const uint64_t at = buffer_elements[d->buffer] + d->offset;
    if (d->store) {
      queue.store(d->sram, at, d->y, d->x, d->stride);
    } else {
      queue.load(d->mem, d->sram, at, d->y, d->x, d->stride,
                 Padding{d->pad_top, d->pad_bottom, d->pad_left, d->pad_right});
    }
  } else if (const auto *g = std::get_if<isa::GemmCommand>(&c)) {
    queue.gemm(list.kernels.at(g->kernel), Loops{g->loop_out, g->loop_in}, g->acc, g->inp, g->wgt,
               g->reset, g->overlap, g->assign);
  } else if (const auto *a = std::get_if<isa::AluCommand>(&c)) {
    queue.alu(list.kernels.at(a->kernel), a->op, Loops{a->loop_out, a->loop_in}, a->dst, a->src,
              a->use_imm ? std::optional<int32_t>(a->imm) : std::nullopt, a->overlap,
              a->use_imm ? 0 : a->imm);
  } else {
    const auto &p = std::get<isa::DepCommand>(c);
    if (p.push) {
      queue.dep_push(p.from, p.to);
    } else {
      queue.dep_pop(p.from, p.to);
    }
  }
}

}  // namespace

void replay(CommandQueue &queue, const isa::CommandList &list,
            const std::vector<uint64_t> &buffer_elements) {
  check_binding(list, buffer_elements);
  for (size_t i = 0; i < list.commands.size(); ++i) replay_command(queue, list, i, buffer_elements);
}

void replay_commands(CommandQueue &queue, const isa::CommandList &list,
                     const std::vector<uint64_t> &buffer_elements,
                     const std::function<bool(size_t)> &select) {
  check_binding(list, buffer_elements);
  for (size_t i = 0; i < list.commands.size(); ++i)
    if (select(i)) replay_command(queue, list, i, buffer_elements);
}

ListRun run_command_list(driver::Device &device, const isa::HwConfig &config,
                         const isa::CommandList &list,
                         const std::vector<std::vector<uint8_t>> &buffers,
                         double timeout_seconds) {
  isa::check_command_list(list, config);
  if (buffers.size() != list.buffers.size())
    fail("command list '{}': {} buffers given, but it uses {}", list.name, buffers.size(),
         list.buffers.size());
  const uint64_t align = isa::region_alignment(config);
  auto aligned = [&](uint64_t b) { return (b + align - 1) / align * align; };
  // Room for every buffer, the micro-op pool and the instruction stream: each command may
  // bring a micro-op load and each dependency command a no-op carrier.
  uint64_t uops = list.total_kernel_uops() + 16;
  uint64_t insns = 2 * list.commands.size() + 64;
  uint64_t arena = aligned(uops * config.uop_bytes()) + aligned(insns * isa::kInsnBytes);
  std::vector<uint64_t> bytes(list.buffers.size());
  for (size_t i = 0; i < list.buffers.size(); ++i) {
    bytes[i] = list.buffers[i].elements * config.tile_bytes(list.buffers[i].mem);
    if (!buffers[i].empty() && buffers[i].size() != bytes[i])
      fail("command list '{}': buffer '{}' needs {} bytes, got {}", list.name,
           list.buffers[i].name, bytes[i], buffers[i].size());
    arena += aligned(std::max<uint64_t>(bytes[i], 1));
  }
  Session session(device, config, arena + align, uops, insns);
  std::vector<DeviceBuffer> dev(list.buffers.size());
  std::vector<uint64_t> elements(list.buffers.size());
  for (size_t i = 0; i < list.buffers.size(); ++i) {
    dev[i] = session.allocate(std::max<uint64_t>(bytes[i], 1), list.buffers[i].name);
    if (!buffers[i].empty()) session.write(dev[i], buffers[i].data(), bytes[i]);
    elements[i] = session.element_of(dev[i], list.buffers[i].mem);
  }
  CommandQueue queue = session.queue();
  replay(queue, list, elements);
  ListRun run;
  run.counters = session.run(queue, timeout_seconds);
  for (size_t i = 0; i < list.buffers.size(); ++i) {
    run.buffers.emplace_back(bytes[i]);
    session.read(dev[i], run.buffers.back().data(), bytes[i]);
  }
  return run;
}

}  // namespace vacc::runtime
