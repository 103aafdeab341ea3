#include "vacc/runtime/program_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"

namespace vacc::runtime {

WgtFootprint wgt_footprint(const isa::CommandList &list) {
  uint64_t first = std::numeric_limits<uint64_t>::max(), end = 0;
  auto cover = [&](uint64_t from, uint64_t to) {
    if (to <= from) return;
    first = std::min(first, from);
    end = std::max(end, to);
  };
  for (const isa::Command &c : list.commands) {
    if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
      if (d->store || d->mem != isa::MemId::kWgt) continue;
      const uint64_t rows = uint64_t{d->y} + d->pad_top + d->pad_bottom;
      const uint64_t cols = uint64_t{d->x} + d->pad_left + d->pad_right;
      cover(d->sram, d->sram + rows * cols);
    } else if (const auto *g = std::get_if<isa::GemmCommand>(&c)) {
      if (g->loop_out == 0 || g->loop_in == 0) continue;
      const uint64_t reach =
          uint64_t{g->loop_out - 1} * g->wgt.out + uint64_t{g->loop_in - 1} * g->wgt.in;
      for (const isa::Uop &u : list.kernels.at(g->kernel)) cover(u.wgt, u.wgt + reach + 1);
    }
  }
  if (end == 0) return {};
  return {static_cast<uint32_t>(first), static_cast<uint32_t>(end)};
}

isa::CommandList shift_weights(const isa::CommandList &list, int64_t shift) {
  isa::CommandList out = list;
  auto moved = [&](uint32_t at) { return static_cast<uint32_t>(int64_t{at} + shift); };
  std::map<uint32_t, uint32_t> kernels;  // a GEMM's kernel -> its shifted copy
  for (isa::Command &c : out.commands) {
    if (auto *d = std::get_if<isa::DmaCommand>(&c)) {
      if (!d->store && d->mem == isa::MemId::kWgt) d->sram = moved(d->sram);
    } else if (auto *g = std::get_if<isa::GemmCommand>(&c)) {
      auto it = kernels.find(g->kernel);
      if (it == kernels.end()) {
        isa::UopKernel kernel = list.kernels.at(g->kernel);
        for (isa::Uop &u : kernel) u.wgt = moved(u.wgt);
        it = kernels.emplace(g->kernel, out.intern_kernel(kernel)).first;
      }
      g->kernel = it->second;
    }
  }
  return out;
}

ProgramReplay::ProgramReplay(CommandQueue &queue, const isa::HwConfig &config)
    : queue_(queue), wgt_depth_(static_cast<uint32_t>(config.wgt_depth())) {}

void ProgramReplay::add(const isa::CommandList &list, const std::vector<uint64_t> &buffer_elements,
                        const std::vector<Source> &sources) {
  if (steps_++ == 0) {
    replay(queue_, list, buffer_elements);
    previous_ = wgt_footprint(list);
    boundaries_.emplace_back();
    return;
  }
  VACC_CHECK(sources.size() == list.buffers.size()) << "one source per buffer";
  // Only the step before may still compute when this step's loads start: the load engine runs
  // in order, and every step's loads wait for the compute of the step before it.
  const WgtFootprint own = wgt_footprint(list);
  const int64_t size = int64_t{own.end} - own.first;
  bool apart =
      own.empty() || previous_.empty() || own.end <= previous_.first || own.first >= previous_.end;
  int64_t shift = 0;
  if (!apart && previous_.end + size <= wgt_depth_) {
    shift = int64_t{previous_.end} - own.first;
    apart = true;
  } else if (!apart && previous_.first >= size) {
    shift = int64_t{previous_.first} - size - own.first;
    apart = true;
  }
  if (own.empty()) {
    boundaries_.push_back("no weights");
  } else if (shift) {
    boundaries_.push_back(fmt::format(
        "weights moved to WGT [{}, {}), apart from the step before's [{}, {}): their first "
        "loads run under its compute",
        own.first + shift, own.end + shift, previous_.first, previous_.end));
  } else if (previous_.empty()) {
    boundaries_.push_back(fmt::format(
        "weights in WGT [{}, {}); the step before has none: their first loads run under its "
        "compute",
        own.first, own.end));
  } else if (apart) {
    boundaries_.push_back(fmt::format(
        "weights in WGT [{}, {}), apart from the step before's [{}, {}): their first loads run "
        "under its compute",
        own.first, own.end, previous_.first, previous_.end));
  } else {
    boundaries_.push_back(fmt::format(
        "weights wait for the step before's compute: they take {} WGT entries and it uses [{}, "
        "{}) of {}, so there is no room apart",
        size, previous_.first, previous_.end, wgt_depth_));
  }
  const isa::CommandList shifted = shift ? shift_weights(list, shift) : isa::CommandList{};
  const isa::CommandList &steps_list = shift ? shifted : list;
  shifted_ += shift != 0;

  // Until the load engine's first token, its loads only fill scratchpad that no command of this
  // step has read yet: the constant weight loads among them may go first, since loads into
  // another memory than WGT cannot touch what they write.
  std::vector<bool> early(steps_list.commands.size(), false);
  for (size_t i = 0; i < steps_list.commands.size(); ++i) {
    const isa::Command &c = steps_list.commands[i];
    if (const auto *p = std::get_if<isa::DepCommand>(&c)) {
      if (p->from == isa::Engine::kLoad || p->to == isa::Engine::kLoad) break;
    } else if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
      early[i] = !d->store && d->mem == isa::MemId::kWgt && sources[d->buffer] == Source::kConstant;
    }
  }
  // The rest, up to its first load of what the step before stores or the load engine's first
  // wait for this step's compute, needs only the earlier steps' compute to be done: the steps
  // before the one before have stored all they store by then (that step's compute waited for
  // it).
  size_t before_stores = 0;
  for (; before_stores < steps_list.commands.size(); ++before_stores) {
    const isa::Command &c = steps_list.commands[before_stores];
    if (const auto *p = std::get_if<isa::DepCommand>(&c)) {
      if (!p->push && p->to == isa::Engine::kLoad) break;
    } else if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
      const bool load_engine = d->mem == isa::MemId::kInp || d->mem == isa::MemId::kWgt;
      if (!d->store && load_engine && sources[d->buffer] == Source::kPrevious) break;
    }
  }
  queue_.begin_step();
  if (!apart) queue_.load_waits_for_compute();
  replay_commands(queue_, steps_list, buffer_elements, [&](size_t i) { return early[i]; });
  if (apart) queue_.load_waits_for_compute();
  replay_commands(queue_, steps_list, buffer_elements,
                  [&](size_t i) { return !early[i] && i < before_stores; });
  queue_.load_waits_for_stores();
  replay_commands(queue_, steps_list, buffer_elements,
                  [&](size_t i) { return !early[i] && i >= before_stores; });
  previous_ = shift ? wgt_footprint(steps_list) : own;
}

}  // namespace vacc::runtime
