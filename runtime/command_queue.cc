#include "vacc/runtime/command_queue.h"

#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::runtime {

using isa::Engine;

namespace {

enum { kLoadToCompute, kComputeToLoad, kComputeToStore, kStoreToCompute };

bool is_prev(Engine of, Engine other) { return static_cast<int>(other) < static_cast<int>(of); }

}  // namespace

CommandQueue::CommandQueue(const isa::HwConfig &config, uint64_t uop_pool_element,
                           uint64_t uop_pool_capacity)
    : config_(config), pool_element_(uop_pool_element), pool_capacity_(uop_pool_capacity) {}

int CommandQueue::queue_of(Engine from, Engine to) {
  if (from == Engine::kLoad && to == Engine::kCompute) return kLoadToCompute;
  if (from == Engine::kCompute && to == Engine::kLoad) return kComputeToLoad;
  if (from == Engine::kCompute && to == Engine::kStore) return kComputeToStore;
  if (from == Engine::kStore && to == Engine::kCompute) return kStoreToCompute;
  fail("no token queue from the {} engine to the {} engine: only neighbours (load-compute, "
       "compute-store) exchange tokens",
       isa::engine_name(from), isa::engine_name(to));
}

void CommandQueue::check_encodable(const isa::Insn &insn, const char *command) const {
  try {
    isa::encode(config_, insn);
  } catch (const Error &e) {
    fail("{} command (instruction {}): {}", command, insns_.size(), e.what());
  }
}

isa::Insn CommandQueue::noop(Engine engine) const {
  switch (engine) {
    case Engine::kLoad: {
      isa::MemInsn m;
      m.opcode = isa::Opcode::kLoad;
      m.mem = isa::MemId::kInp;
      return m;
    }
    case Engine::kStore: {
      isa::MemInsn m;
      m.opcode = isa::Opcode::kStore;
      m.mem = isa::MemId::kOut;
      return m;
    }
    case Engine::kCompute: break;
  }
  return isa::AluInsn{};  // an empty micro-op range does nothing
}

void CommandQueue::emit(isa::Insn insn) {
  const Engine e = isa::engine_of(insn);
  auto &pops = pending_pops_[static_cast<int>(e)];
  isa::DepFlags &deps = isa::deps_of(insn);
  deps.pop_prev |= pops[0] > 0;
  deps.pop_next |= pops[1] > 0;
  pops = {0, 0};
  last_[static_cast<int>(e)] = static_cast<int>(insns_.size());
  insns_.push_back(insn);
}

void CommandQueue::dep_push(Engine from, Engine to) {
  const int q = queue_of(from, to);
  const bool to_prev = is_prev(from, to);
  const int last = last_[static_cast<int>(from)];
  const auto &pops = pending_pops_[static_cast<int>(from)];
  const bool pop_pending = pops[0] || pops[1];
  isa::DepFlags *deps = last >= 0 ? &isa::deps_of(insns_[last]) : nullptr;
  // The push must follow any pop still waiting for this engine's next instruction.
  if (!deps || pop_pending || (to_prev ? deps->push_prev : deps->push_next)) {
    emit(noop(from));
    deps = &isa::deps_of(insns_.back());
  }
  (to_prev ? deps->push_prev : deps->push_next) = true;
  ++tokens_[q];
}

void CommandQueue::dep_pop(Engine from, Engine to) {
  const int q = queue_of(from, to);
  const int side = is_prev(to, from) ? 0 : 1;
  auto &pops = pending_pops_[static_cast<int>(to)];
  if (pops[side]) emit(noop(to));  // one pop per flag: the earlier one gets its own carrier
  pending_pops_[static_cast<int>(to)][side] = 1;
  --tokens_[q];
}

uint32_t CommandQueue::resident(const UopKernel &kernel) {
  const uint32_t depth = static_cast<uint32_t>(config_.uop_depth());
  if (kernel.empty()) fail("a micro-op kernel must hold at least one micro-op");
  if (kernel.size() > depth)
    fail("a micro-op kernel of {} micro-ops does not fit the UOP scratchpad ({} entries, "
         "buffers.uop_kib = {}): split the loop nest into smaller kernels",
         kernel.size(), depth, config_.uop_kib);
  std::vector<uint64_t> key;
  key.reserve(kernel.size());
  for (const auto &u : kernel) key.push_back(isa::encode_uop(config_, u));
  if (auto it = resident_.find(key); it != resident_.end()) return it->second;

  auto pooled = pool_index_.find(key);
  if (pooled == pool_index_.end()) {
    if (pool_.size() + kernel.size() > pool_capacity_)
      fail("the micro-op pool in device memory is full ({} micro-ops): the program uses too many "
           "distinct micro-op kernels",
           pool_capacity_);
    pooled = pool_index_.emplace(key, pool_.size()).first;
    pool_.insert(pool_.end(), kernel.begin(), kernel.end());
  }
  if (uop_next_ + kernel.size() > depth) {  // evict everything: compute runs in order
    evicted_ = true;
    resident_.clear();
    uop_next_ = 0;
  }
  const uint32_t at = uop_next_;
  isa::MemInsn load;
  load.opcode = isa::Opcode::kLoad;
  load.mem = isa::MemId::kUop;
  load.sram_base = at;
  load.dram_base = static_cast<uint32_t>(pool_element_ + pooled->second);
  load.y_size = 1;
  load.x_size = load.x_stride = static_cast<uint32_t>(kernel.size());
  check_encodable(load, "micro-op load");
  // Pops wait for data, not for micro-ops: they stay for the GEMM/ALU that needs it. Pushes
  // go to the GEMM/ALU emitted right after. So the kernel load carries no flag and
  // hoist_uop_loads() may move it.
  auto &pops = pending_pops_[static_cast<int>(Engine::kCompute)];
  const auto waiting = pops;
  pops = {0, 0};
  emit(load);
  pops = waiting;
  ++uop_loads_;
  resident_[key] = at;
  uop_next_ += static_cast<uint32_t>(kernel.size());
  return at;
}

void CommandQueue::load(isa::MemId mem, uint32_t sram, uint64_t dram_element, uint32_t y,
                        uint32_t x, uint32_t stride, Padding pad) {
  if (mem == isa::MemId::kUop || mem == isa::MemId::kOut)
    fail("load command: memory '{}' cannot be loaded directly (micro-ops come with GEMM/ALU "
         "kernels; OUT is only stored)",
         isa::mem_id_name(mem));
  if (dram_element > UINT32_MAX)
    fail("load command: DRAM element {} is beyond the 32-bit address field", dram_element);
  isa::MemInsn m;
  m.opcode = isa::Opcode::kLoad;
  m.mem = mem;
  m.sram_base = sram;
  m.dram_base = static_cast<uint32_t>(dram_element);
  m.y_size = y;
  m.x_size = x;
  m.x_stride = stride;
  m.pad_top = pad.top;
  m.pad_bottom = pad.bottom;
  m.pad_left = pad.left;
  m.pad_right = pad.right;
  check_encodable(m, "load");
  emit(m);
}

void CommandQueue::store(uint32_t sram, uint64_t dram_element, uint32_t y, uint32_t x,
                         uint32_t stride) {
  if (dram_element > UINT32_MAX)
    fail("store command: DRAM element {} is beyond the 32-bit address field", dram_element);
  emit_store(isa::MemId::kOut, sram, static_cast<uint32_t>(dram_element), y, x, stride);
}

void CommandQueue::store_inp(uint32_t sram, uint32_t inp_index, uint32_t y, uint32_t x,
                             uint32_t stride) {
  emit_store(isa::MemId::kInp, sram, inp_index, y, x, stride);
}

void CommandQueue::emit_store(isa::MemId mem, uint32_t sram, uint32_t dram_base, uint32_t y,
                              uint32_t x, uint32_t stride) {
  isa::MemInsn m;
  m.opcode = isa::Opcode::kStore;
  m.mem = mem;
  m.sram_base = sram;
  m.dram_base = dram_base;
  m.y_size = y;
  m.x_size = x;
  m.x_stride = stride;
  check_encodable(m, "store");
  emit(m);
}

void CommandQueue::gemm(const UopKernel &kernel, Loops loops, isa::LoopFactors acc,
                        isa::LoopFactors inp, isa::LoopFactors wgt, bool reset, bool overlap,
                        bool assign) {
  const uint32_t at = resident(kernel);
  isa::GemmInsn g;
  g.reset = reset;
  g.uop_begin = at;
  g.uop_end = at + static_cast<uint32_t>(kernel.size());
  g.loop_out = loops.out;
  g.loop_in = loops.in;
  g.acc = acc;
  g.inp = inp;
  g.wgt = wgt;
  g.overlap = overlap;
  g.assign = assign;
  check_encodable(g, "GEMM");
  emit(g);
}

void CommandQueue::alu(const UopKernel &kernel, isa::AluOp op, Loops loops, isa::LoopFactors dst,
                       isa::LoopFactors src, std::optional<int32_t> imm, bool overlap,
                       int32_t vector_imm) {
  const uint32_t at = resident(kernel);
  isa::AluInsn a;
  a.op = op;
  a.uop_begin = at;
  a.uop_end = at + static_cast<uint32_t>(kernel.size());
  a.loop_out = loops.out;
  a.loop_in = loops.in;
  a.dst = dst;
  a.src = src;
  a.use_imm = imm.has_value();
  a.imm = imm.value_or(vector_imm);
  a.overlap = overlap;
  check_encodable(a, "ALU");
  emit(a);
}

void CommandQueue::balance_tokens(bool but_compute_to_load) {
  const std::pair<Engine, Engine> pairs[] = {{Engine::kLoad, Engine::kCompute},
                                             {Engine::kCompute, Engine::kLoad},
                                             {Engine::kCompute, Engine::kStore},
                                             {Engine::kStore, Engine::kCompute}};
  for (const auto &[from, to] : pairs) {
    const int q = queue_of(from, to);
    if (but_compute_to_load && q == kComputeToLoad) continue;
    if (tokens_[q] < 0)
      fail("the command stream pops {} more token(s) from the {} engine to the {} engine than it "
           "pushes: the program would deadlock",
           -tokens_[q], isa::engine_name(from), isa::engine_name(to));
    while (tokens_[q] > 0) dep_pop(from, to);
  }
}

void CommandQueue::begin_step() {
  VACC_CHECK(boundary_pops_ == 0)
      << "the load engine's waits of the last step boundary are missing";
  hoist_uop_loads();
  evicted_ = false;  // the micro-op kernels stay resident for the next step
  step_starts_.push_back(insns_.size());
  // The compute-to-load tokens the earlier steps left are the load engine's to take, with the
  // token after their compute (load_waits_for_compute()).
  balance_tokens(/*but_compute_to_load=*/true);
  boundary_pops_ = tokens_[kComputeToLoad] + 1;
  dep_push(Engine::kLoad, Engine::kCompute);
  dep_pop(Engine::kLoad, Engine::kCompute);
  dep_push(Engine::kCompute, Engine::kLoad);
  if (last_[static_cast<int>(Engine::kStore)] >= 0) {
    dep_push(Engine::kStore, Engine::kCompute);
    dep_pop(Engine::kStore, Engine::kCompute);
  }
  dep_push(Engine::kCompute, Engine::kLoad);
}

void CommandQueue::load_waits_for_compute() {
  VACC_CHECK(boundary_pops_ > 0) << "load_waits_for_compute() without begin_step()";
  for (; boundary_pops_ > 0; --boundary_pops_) dep_pop(Engine::kCompute, Engine::kLoad);
  boundary_pops_ = -1;
}

void CommandQueue::load_waits_for_stores() {
  VACC_CHECK(boundary_pops_ == -1) << "load_waits_for_stores() before load_waits_for_compute()";
  dep_pop(Engine::kCompute, Engine::kLoad);
  boundary_pops_ = 0;
}

RecordedStream CommandQueue::finish() {
  VACC_CHECK(boundary_pops_ == 0)
      << "the load engine's waits of the last step boundary are missing";
  // Drain every token still in flight so the next run starts with empty queues.
  balance_tokens();
  for (Engine e : {Engine::kLoad, Engine::kStore}) {
    const auto &pops = pending_pops_[static_cast<int>(e)];
    if (pops[0] || pops[1]) emit(noop(e));
  }
  // FINISH waits for the store engine's last work.
  if (last_[static_cast<int>(Engine::kStore)] >= 0) {
    dep_push(Engine::kStore, Engine::kCompute);
    dep_pop(Engine::kStore, Engine::kCompute);
  }
  emit(isa::FinishInsn{});
  for (auto &pops : pending_pops_) VACC_CHECK(pops[0] == 0 && pops[1] == 0) << "unplaced pop";
  hoist_uop_loads();
  RecordedStream out{std::move(insns_), pool_, uop_loads_, std::move(step_starts_)};
  insns_.clear();
  step_starts_ = {0};
  last_ = {-1, -1, -1};
  // The next stream loads its own kernels: nothing it runs relies on this one's.
  resident_.clear();
  uop_next_ = 0;
  uop_loads_ = 0;
  evicted_ = false;
  return out;
}

void CommandQueue::hoist_uop_loads() {
  // Every micro-op load waits for all earlier GEMM/ALU work, since it may overwrite kernels in
  // use. Without an eviction in the current step no load of it overwrites anything, so all of
  // them go to the step's start, where they wait for nothing but the earlier steps' compute;
  // loads that continue each other merge into one.
  if (evicted_) return;
  const size_t start = step_starts_.back();
  std::vector<isa::Insn> hoisted, rest;
  rest.reserve(insns_.size() - start);
  for (size_t i = start; i < insns_.size(); ++i) {
    isa::Insn &insn = insns_[i];
    const auto *m = std::get_if<isa::MemInsn>(&insn);
    if (!m || m->opcode != isa::Opcode::kLoad || m->mem != isa::MemId::kUop) {
      rest.push_back(insn);
      continue;
    }
    const isa::DepFlags &d = m->deps;
    VACC_CHECK(!(d.pop_prev || d.pop_next || d.push_prev || d.push_next))
        << "a micro-op load carries a token";
    auto *prev = hoisted.empty() ? nullptr : std::get_if<isa::MemInsn>(&hoisted.back());
    if (prev && prev->sram_base + prev->x_size == m->sram_base &&
        prev->dram_base + prev->x_size == m->dram_base &&
        prev->x_size + m->x_size < (1u << isa::kDmaSizeBits)) {
      prev->x_size = prev->x_stride = prev->x_size + m->x_size;
      --uop_loads_;
      continue;
    }
    hoisted.push_back(insn);
  }
  insns_.resize(start);
  insns_.insert(insns_.end(), hoisted.begin(), hoisted.end());
  insns_.insert(insns_.end(), rest.begin(), rest.end());
  // Pushes merge into each engine's last instruction: find it again after the move.
  last_ = {-1, -1, -1};
  for (size_t i = insns_.size(); i-- > 0;) {
    int &last = last_[static_cast<int>(isa::engine_of(insns_[i]))];
    if (last < 0) last = static_cast<int>(i);
  }
}

}  // namespace vacc::runtime
