// Dependency tokens from scratchpad conflicts. The command stream (without tokens) is a
// sequential program; each engine runs its own commands in stream order. For each token queue
// from engine E1 to its neighbour E2, every command Y of E2 must start after each command X
// of E1 that precedes it in the stream and conflicts with it (read after write, write after
// read, write after write). Walking E2's commands in order, Y needs E1's command m (the last
// such X); when the tokens popped so far cover only E1's commands up to some c < m, E1
// pushes a token right after m and Y pops one right before it. Tokens are counted per queue
// in order, so the k-th pop receives the k-th push; every push is popped, and no wait is
// added that the conflicts do not require.
#include <algorithm>
#include <array>

#include "codegen_commands.h"
#include "footprint.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

constexpr size_t kMaxTokenDistance = 4096;  // beyond this, assume a conflict

CodegenCommands strip_tokens(const CodegenCommands &ops) {
  CodegenCommands out;
  out.reserve(ops.size());
  for (const CodegenCommand &op : ops)
    if (!std::holds_alternative<isa::DepCommand>(op.cmd)) out.push_back(op);
  return out;
}

// The load and store engines share no token queue: a STORE INP and a LOAD that touch the same
// INP entries would need a relay through the compute engine, which this pass does not build.
// The compiler keeps their regions apart (a result kept on chip has its own buffer); this holds
// it to that.
void check_no_load_store_overlap(const CodegenCommands &ops, const std::vector<Footprint> &fps) {
  std::vector<std::pair<uint64_t, uint64_t>> stored;
  for (const Footprint &f : fps)
    if (f.engine == Engine::kStore)
      for (const Range &r : f.ranges)
        if (r.write) stored.emplace_back(r.lo, r.hi);
  if (stored.empty()) return;
  std::sort(stored.begin(), stored.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto &r : stored)
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (fps[i].engine != Engine::kLoad) continue;
    for (const Range &r : fps[i].ranges) {
      if (r.mem != static_cast<int>(isa::MemId::kInp)) continue;
      auto it = std::upper_bound(merged.begin(), merged.end(), std::make_pair(r.lo, UINT64_MAX));
      const bool hit = (it != merged.end() && it->first < r.hi) ||
                       (it != merged.begin() && std::prev(it)->second > r.lo);
      VACC_CHECK(!hit) << "a LOAD into INP [" << r.lo << ", " << r.hi
                       << ") overlaps a STORE INP's entries: no token orders them";
    }
  }
}

}  // namespace

CodegenCommands insert_tokens(const CodegenCommands &stream) {
  const CodegenCommands ops = strip_tokens(stream);
  const size_t n = ops.size();
  std::vector<Footprint> fps;
  fps.reserve(n);
  for (const CodegenCommand &op : ops) fps.push_back(footprint(op));
  check_no_load_store_overlap(ops, fps);
  std::vector<std::vector<isa::DepCommand>> before(n), after(n);
  constexpr std::array<std::pair<Engine, Engine>, 4> kQueues = {
      {{Engine::kLoad, Engine::kCompute},
       {Engine::kCompute, Engine::kLoad},
       {Engine::kCompute, Engine::kStore},
       {Engine::kStore, Engine::kCompute}}};
  for (const auto &[from, to] : kQueues) {
    // Stream positions of E1's commands, in order.
    std::vector<size_t> e1;
    for (size_t i = 0; i < n; ++i)
      if (fps[i].is_insn && fps[i].engine == from) e1.push_back(i);
    int64_t covered = -1;  // index into e1 of the last command a popped token covers
    size_t next_e1 = 0;    // e1 commands before the current position
    for (size_t i = 0; i < n; ++i) {
      while (next_e1 < e1.size() && e1[next_e1] < i) ++next_e1;
      if (!fps[i].is_insn || fps[i].engine != to) continue;
      // The last E1 command before i that conflicts with it.
      int64_t need = -1;
      for (int64_t k = static_cast<int64_t>(next_e1) - 1; k > covered; --k) {
        if (i - e1[k] > kMaxTokenDistance || conflict(fps[i], fps[e1[k]])) {
          need = k;
          break;
        }
      }
      if (need <= covered) continue;
      after[e1[need]].push_back({true, from, to});
      before[i].push_back({false, from, to});
      covered = need;
    }
  }
  CodegenCommands out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    for (const auto &d : before[i]) out.push_back({d, {}});
    out.push_back(ops[i]);
    for (const auto &d : after[i]) out.push_back({d, {}});
  }
  return out;
}

}  // namespace vacc::lower
