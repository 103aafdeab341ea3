// Token relaxation on the evaluated command stream. insert_dependencies places a thread's
// tokens at the boundaries of the statements that hold them, so with two virtual threads a
// thread's "buffer free" token is often pushed only after the other thread's work too, and a
// pop waits before work that does not need it. With every scratchpad access known here, each
// push moves up to just after the last instruction of its engine that the waiting side's work
// actually conflicts with, and each pop moves down to just before the first instruction that
// conflicts with the work its token guards. The order of tokens in each queue is kept, and
// a pop followed by a push on one engine (a relay between load and store) is never split.
#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "codegen_commands.h"
#include "footprint.h"

namespace vacc::lower {
namespace {

using isa::Engine;

constexpr size_t kWindowCap = 512;  // beyond this, assume a conflict (keeps the pass linear)

const isa::DepCommand *dep_of(const CodegenCommand &op) {
  return std::get_if<isa::DepCommand>(&op.cmd);
}

bool is_push(const CodegenCommand &op, Engine from, Engine to) {
  const auto *d = dep_of(op);
  return d && d->push && d->from == from && d->to == to;
}
bool is_pop(const CodegenCommand &op, Engine from, Engine to) {
  const auto *d = dep_of(op);
  return d && !d->push && d->from == from && d->to == to;
}

constexpr std::array<std::pair<Engine, Engine>, 4> kQueues = {{{Engine::kLoad, Engine::kCompute},
                                                               {Engine::kCompute, Engine::kLoad},
                                                               {Engine::kCompute, Engine::kStore},
                                                               {Engine::kStore, Engine::kCompute}}};

// Instructions of `engine` among ops[begin, end), or nullopt past the cap.
bool collect(const std::vector<Footprint> &fps, size_t begin, size_t end, Engine engine,
             std::vector<const Footprint *> *out) {
  out->clear();
  for (size_t i = begin; i < end; ++i) {
    if (fps[i].is_insn && fps[i].engine == engine) {
      if (out->size() == kWindowCap) return false;
      out->push_back(&fps[i]);
    }
  }
  return true;
}

bool conflicts_any(const Footprint &f, const std::vector<const Footprint *> &set) {
  for (const Footprint *g : set)
    if (conflict(f, *g)) return true;
  return false;
}

// Reorders ops by (anchor, rank, original index): rank -1 goes before the anchor, 0 is the
// anchor itself, 1 after it.
CodegenCommands reorder(const CodegenCommands &ops,
                        const std::vector<std::pair<int64_t, int>> &place) {
  std::vector<std::tuple<int64_t, int, size_t>> keys;
  keys.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) keys.emplace_back(place[i].first, place[i].second, i);
  std::sort(keys.begin(), keys.end());
  CodegenCommands out;
  out.reserve(ops.size());
  for (const auto &k : keys) out.push_back(ops[std::get<2>(k)]);
  return out;
}

CodegenCommands hoist_pushes(const CodegenCommands &ops, bool keep_relays) {
  std::vector<Footprint> fps;
  fps.reserve(ops.size());
  for (const CodegenCommand &op : ops) fps.push_back(footprint(op));
  std::vector<std::pair<int64_t, int>> place(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) place[i] = {static_cast<int64_t>(i), 0};
  std::vector<const Footprint *> window;
  for (const auto &[A, B] : kQueues) {
    std::vector<size_t> pushes, pops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (is_push(ops[i], A, B)) pushes.push_back(i);
      if (is_pop(ops[i], A, B)) pops.push_back(i);
    }
    for (size_t k = 0; k < pushes.size(); ++k) {
      bool bounded = true;
      if (k < pops.size()) {
        const size_t end = k + 1 < pops.size() ? pops[k + 1] : ops.size();
        bounded = collect(fps, pops[k] + 1, end, B, &window);
      } else {
        window.clear();  // nothing waits for this token
      }
      const int64_t lb = k > 0 ? static_cast<int64_t>(pushes[k - 1]) : -1;
      int64_t i = static_cast<int64_t>(pushes[k]) - 1;
      for (; i > lb; --i) {
        if (const auto *d = dep_of(ops[i])) {
          if (keep_relays && !d->push && d->to == A) break;  // a pop of this engine: a relay
          continue;
        }
        if (fps[i].is_insn && fps[i].engine == A && (!bounded || conflicts_any(fps[i], window)))
          break;
      }
      if (i + 1 < static_cast<int64_t>(pushes[k])) place[pushes[k]] = {i, 1};
    }
  }
  return reorder(ops, place);
}

CodegenCommands sink_pops(const CodegenCommands &ops, bool keep_relays) {
  std::vector<Footprint> fps;
  fps.reserve(ops.size());
  for (const CodegenCommand &op : ops) fps.push_back(footprint(op));
  std::vector<std::pair<int64_t, int>> place(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) place[i] = {static_cast<int64_t>(i), 0};
  std::vector<const Footprint *> guarded;
  for (const auto &[A, B] : kQueues) {
    std::vector<size_t> pushes, pops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (is_push(ops[i], A, B)) pushes.push_back(i);
      if (is_pop(ops[i], A, B)) pops.push_back(i);
    }
    for (size_t k = 0; k < pops.size() && k < pushes.size(); ++k) {
      const size_t begin = k > 0 ? pushes[k - 1] + 1 : 0;
      const bool bounded = collect(fps, begin, pushes[k], A, &guarded);
      size_t j = pops[k] + 1;
      for (; j < ops.size(); ++j) {
        if (const auto *d = dep_of(ops[j])) {
          if (d->push && d->from == B && (keep_relays || d->to == A)) break;  // a relay
          if (!d->push && d->from == A && d->to == B) break;  // the next pop of this queue
          continue;
        }
        if (fps[j].is_insn && fps[j].engine == B && (!bounded || conflicts_any(fps[j], guarded)))
          break;
      }
      if (j > pops[k] + 1) place[pops[k]] = {static_cast<int64_t>(j), -1};
    }
  }
  return reorder(ops, place);
}

}  // namespace

// A token relayed through the compute engine (a pop from one outer engine followed by a push
// to the other) orders a LOAD after a STORE or the reverse. That matters only when they touch
// the same DRAM buffer; when no buffer is both loaded and stored, relays may be split, which
// lets the "INP/WGT free" and "ACC free" tokens move independently.
bool needs_relays(const CodegenCommands &ops) {
  // A set per direction: a program has a few buffers but may have a million transfers.
  std::set<uint32_t> loaded, stored;
  for (const CodegenCommand &op : ops)
    if (const auto *d = std::get_if<isa::DmaCommand>(&op.cmd)) {
      if (d->mem == isa::MemId::kUop) continue;
      (d->store ? stored : loaded).insert(d->buffer);
    }
  for (uint32_t b : stored)
    if (loaded.count(b)) return true;
  return false;
}

CodegenCommands relax_tokens(const CodegenCommands &ops) {
  const bool keep = needs_relays(ops);
  return sink_pops(hoist_pushes(ops, keep), keep);
}

}  // namespace vacc::lower
