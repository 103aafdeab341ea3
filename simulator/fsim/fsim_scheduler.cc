#include "fsim_scheduler.h"

#include <fmt/format.h>

#include <array>
#include <deque>

#include "vacc/support/error.h"

namespace vacc::sim {

namespace {

using isa::DepFlags;
using isa::Engine;

// The four token queues, by the (from, to) engine pair they connect.
enum Queue { kLoadToCompute, kComputeToLoad, kComputeToStore, kStoreToCompute, kNumQueues };

const char *queue_source(Queue q) {
  switch (q) {
    case kLoadToCompute: return "load";
    case kComputeToLoad: return "compute";
    case kComputeToStore: return "compute";
    case kStoreToCompute: return "store";
    default: return "?";
  }
}

// Token queues an engine's flags refer to; -1 where the engine has no such neighbour.
struct EngineQueues {
  int pop_prev, pop_next, push_prev, push_next;
};

EngineQueues queues_of(Engine e) {
  switch (e) {
    case Engine::kLoad: return {-1, kComputeToLoad, -1, kLoadToCompute};
    case Engine::kCompute: return {kLoadToCompute, kStoreToCompute, kComputeToLoad, kComputeToStore};
    case Engine::kStore: return {kComputeToStore, -1, kStoreToCompute, -1};
  }
  return {-1, -1, -1, -1};
}

}  // namespace

void schedule_program(const isa::HwConfig &config, const std::vector<isa::Insn> &insns,
                      const std::function<void(size_t)> &execute, bool latest_first) {
  std::array<std::deque<size_t>, isa::kNumEngines> queue;
  std::array<int64_t, kNumQueues> tokens{};
  std::vector<Engine> engine(insns.size());
  for (size_t i = 0; i < insns.size(); ++i) engine[i] = isa::engine_of(insns[i]);
  const size_t depth = static_cast<size_t>(config.insn_queue_depth);
  const int64_t token_depth = config.token_queue_depth;
  size_t fetched = 0;

  auto can_run = [&](size_t i) {
    const DepFlags &d = isa::deps_of(insns[i]);
    const EngineQueues q = queues_of(engine[i]);
    if (d.pop_prev && tokens[q.pop_prev] == 0) return false;
    if (d.pop_next && tokens[q.pop_next] == 0) return false;
    if (d.push_prev && tokens[q.push_prev] >= token_depth) return false;
    if (d.push_next && tokens[q.push_next] >= token_depth) return false;
    return true;
  };

  while (true) {
    while (fetched < insns.size() && queue[static_cast<int>(engine[fetched])].size() < depth)
      queue[static_cast<int>(engine[fetched])].push_back(fetched++);

    size_t best = SIZE_MAX;
    for (const auto &q : queue) {
      if (q.empty() || !can_run(q.front())) continue;
      if (best == SIZE_MAX || (latest_first ? q.front() > best : q.front() < best))
        best = q.front();
    }

    if (best == SIZE_MAX) {
      bool idle = fetched == insns.size();
      for (const auto &q : queue) idle &= q.empty();
      if (idle) return;
      // Nothing can run: name each waiting instruction and what it waits for.
      std::string why;
      for (int e = 0; e < isa::kNumEngines; ++e) {
        const char *name = isa::engine_name(static_cast<Engine>(e));
        if (queue[e].empty()) {
          why += fmt::format("\n  {} engine: idle", name);
          continue;
        }
        const size_t i = queue[e].front();
        const DepFlags &d = isa::deps_of(insns[i]);
        const EngineQueues q = queues_of(engine[i]);
        std::string waits;
        if (d.pop_prev && tokens[q.pop_prev] == 0)
          waits += fmt::format(" a token from the {} engine (pop_prev);",
                               queue_source(static_cast<Queue>(q.pop_prev)));
        if (d.pop_next && tokens[q.pop_next] == 0)
          waits += fmt::format(" a token from the {} engine (pop_next);",
                               queue_source(static_cast<Queue>(q.pop_next)));
        if (waits.empty()) waits = " room in a full token queue (push);";
        waits.pop_back();
        why += fmt::format("\n  {} engine: instruction {} ({}) waits for{}", name, i,
                           isa::insn_label(insns[i]), waits);
      }
      if (fetched < insns.size())
        why += fmt::format("\n  fetch: instruction {} waits for room in the full {} queue", fetched,
                           isa::engine_name(engine[fetched]));
      fail("deadlock: no engine can proceed; a pop can never be satisfied:{}\n"
           "check the push/pop flags: every pop needs an earlier push from that engine",
           why);
    }

    const DepFlags &d = isa::deps_of(insns[best]);
    const EngineQueues q = queues_of(engine[best]);
    if (d.pop_prev) --tokens[q.pop_prev];
    if (d.pop_next) --tokens[q.pop_next];
    execute(best);
    if (d.push_prev) ++tokens[q.push_prev];
    if (d.push_next) ++tokens[q.push_next];
    queue[static_cast<int>(engine[best])].pop_front();
  }
}

}  // namespace vacc::sim
