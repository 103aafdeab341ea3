#include "vacc/simulator/rtl_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstring>
#include <limits>

#include "model_cache.h"
#include "model_key.h"
#include "rtl_model.h"
#include "sc_system.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/error_status.h"
#include "vacc/isa/insn.h"
#include "vacc/isa/registers.h"
#include "vacc/simulator/axi_memory.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace reg = isa::reg;

namespace {

// Device memory sits above 4 GiB so that a design that drops the base's high word fails.
constexpr uint64_t kDeviceBase = 0x1'0000'0000ull;

struct KnownModel {
  const ModelEntry *entry;
  std::string key;
};

std::vector<ModelEntry> &extra_entries() {
  static std::vector<ModelEntry> entries;
  return entries;
}

// Models selectable by config: the generated table (extra entries are selected by name).
const std::vector<KnownModel> &known_models() {
  static const std::vector<KnownModel> models = [] {
    std::vector<KnownModel> out;
    for (const ModelEntry &e : built_model_entries())
      if (!e.standin)
        out.push_back({&e, rtl_hardware_text(isa::parse_config(e.config_yaml, e.name))});
    return out;
  }();
  return models;
}

// The built-in model for hardware `key` (rtl_hardware_text), if any.
const ModelEntry *find_model(const std::string &key) {
  for (const KnownModel &m : known_models())
    if (m.key == key) return m.entry;
  return nullptr;
}

// Null also for a config this RTL cannot be built for (RtlSim names its key and rule).
const ModelEntry *find_model(const isa::HwConfig &config) {
  try {
    return find_model(rtl_hardware_text(config));
  } catch (const Error &) {
    return nullptr;
  }
}

const ModelEntry *find_model_by_name(const std::string &name) {
  for (const ModelEntry &e : extra_entries())
    if (name == e.name) return &e;
  for (const ModelEntry &e : built_model_entries())
    if (name == e.name) return &e;
  return nullptr;
}

const char *neighbour(isa::Engine e, bool prev) {
  switch (e) {
    case isa::Engine::kLoad:
      return prev ? "(none)" : "compute";
    case isa::Engine::kCompute:
      return prev ? "load" : "store";
    default:
      return prev ? "compute" : "(none)";
  }
}

// Where each engine stops when `insns` run under the token protocol alone (queues of
// `token_depth`): for RTLs without trace signals, the deadlock is a property of the program,
// so replaying its tokens names the same waiting instructions the hardware waits at.
// Returns, per engine, the index of the first instruction it cannot complete (or -1).
std::array<int64_t, isa::kNumEngines> replay_tokens(const std::vector<isa::Insn> &insns,
                                                    int token_depth) {
  std::array<std::vector<uint32_t>, isa::kNumEngines> order;
  for (uint32_t i = 0; i < insns.size(); ++i)
    order[static_cast<int>(isa::engine_of(insns[i]))].push_back(i);
  // tokens[e][0]: tokens waiting for engine e from its previous engine; [1]: from its next.
  std::array<std::array<int, 2>, isa::kNumEngines> tokens{};
  std::array<size_t, isa::kNumEngines> next{};
  for (bool progress = true; progress;) {
    progress = false;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      if (next[e] >= order[e].size()) continue;
      const isa::DepFlags &d = isa::deps_of(insns[order[e][next[e]]]);
      if ((d.pop_prev && tokens[e][0] == 0) || (d.pop_next && tokens[e][1] == 0)) continue;
      if ((d.push_prev && e > 0 && tokens[e - 1][1] >= token_depth) ||
          (d.push_next && e + 1 < isa::kNumEngines && tokens[e + 1][0] >= token_depth))
        continue;
      tokens[e][0] -= d.pop_prev;
      tokens[e][1] -= d.pop_next;
      if (d.push_prev && e > 0) ++tokens[e - 1][1];
      if (d.push_next && e + 1 < isa::kNumEngines) ++tokens[e + 1][0];
      ++next[e];
      progress = true;
    }
  }
  std::array<int64_t, isa::kNumEngines> stuck;
  for (int e = 0; e < isa::kNumEngines; ++e)
    stuck[e] = next[e] < order[e].size() ? static_cast<int64_t>(order[e][next[e]]) : -1;
  return stuck;
}

}  // namespace

const std::vector<ModelEntry> &model_entries() {
  static std::vector<ModelEntry> all;
  all = built_model_entries();
  all.insert(all.end(), extra_entries().begin(), extra_entries().end());
  return all;
}

void add_model_entry(const ModelEntry &entry) {
  extra_entries().push_back(entry);
}

struct RtlSim::Impl {
  Impl(const isa::HwConfig &c, RtlOptions o, const ModelEntry &e)
      : config(c),
        options(std::move(o)),
        entry(e),
        memory(AxiMemoryTiming{c.bus_bits / 8, c.mem_latency_cycles, c.mem_bytes_per_cycle,
                               options.max_outstanding}),
        model(e.make(memory, c.bus_bits / 8)),
        period_ns(1000.0 / c.clock_mhz) {
    memory.set_base(kDeviceBase);
    model->reset();
    if (!options.wave_path.empty()) model->open_wave(options.wave_path, period_ns);
  }

  void host(const std::function<void(HostPort &)> &job) {
    ScSystem::get().run_host(*model, period_ns, std::max<uint64_t>(1, options.poll_interval_cycles),
                             job);
  }

  // The program as the registers describe it, decoded up to the first illegal word.
  std::vector<isa::Insn> program() const {
    std::vector<isa::Insn> insns;
    const uint64_t offset = base_offset();
    for (uint32_t i = 0; i < insn_count; ++i) {
      const uint64_t at = offset + insn_offset + uint64_t{i} * isa::kInsnBytes;
      if (at + isa::kInsnBytes > memory.bytes().size()) break;
      try {
        insns.push_back(isa::decode(config, isa::load_word(memory.bytes().data() + at)));
      } catch (const Error &) {
        break;
      }
    }
    return insns;
  }
  // The model cycle of the run's cycle 0: exact when the RTL pulses trace_run_start, else
  // when the host saw its start write complete.
  uint64_t run_origin() const {
    const EngineProgress &p = model->progress();
    return p.run_started ? p.run_start_cycle : run_start_cycle;
  }
  // Offset of the programmed base inside the arena (0 when the host wrote kDeviceBase).
  uint64_t base_offset() const { return base - std::min(base, kDeviceBase); }

  std::string deadlock_message(uint64_t cycles) const;
  std::vector<InsnSlice> build_slices() const;

  isa::HwConfig config;
  RtlOptions options;
  const ModelEntry entry;
  AxiMemory memory;
  std::unique_ptr<RtlModel> model;
  double period_ns;

  // Shadows of what the host wrote, to name instructions in messages.
  uint64_t base = 0;
  uint64_t insn_offset = 0;
  uint32_t insn_count = 0;

  uint64_t run_start_cycle = 0;
  // The memory's traffic counts when the last run started: its counters are the run's own, as
  // the RTL's registers (cleared by start) and every other engine's are.
  AxiMemoryStats run_start_memory;
  std::vector<InsnEvent> events;
  double last_wall_seconds = 0;
  uint64_t last_model_cycles = 0;
};

std::string RtlSim::Impl::deadlock_message(uint64_t cycles) const {
  std::string msg = fmt::format(
      "deadlock: the accelerator did not finish within the cycle limit of {} cycles "
      "(raise it with --cycle-limit if the program is just long)",
      cycles);
  const std::vector<isa::Insn> insns = program();
  if (!model->has_insn_events()) {
    // No trace signals in this RTL: replay the program's tokens to find where it waits.
    const auto stuck = replay_tokens(insns, config.token_queue_depth);
    std::vector<std::string> waiting;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      if (stuck[e] < 0) continue;
      const isa::Insn &insn = insns[static_cast<size_t>(stuck[e])];
      const isa::DepFlags &d = isa::deps_of(insn);
      const auto eng = static_cast<isa::Engine>(e);
      std::string why = "behind it in its queue";
      if (d.pop_prev || d.pop_next)
        why = fmt::format("waits for a token from {}",
                          d.pop_prev ? neighbour(eng, true) : neighbour(eng, false));
      waiting.push_back(fmt::format("{} engine at instruction {} ({}: {})", isa::engine_name(eng),
                                    stuck[e], isa::insn_summary(insn), why));
    }
    if (waiting.empty())
      return msg +
             "; the program's dependency tokens balance, so it is just slow or the "
             "hardware hangs elsewhere";
    msg += "; waiting (from the program's tokens): ";
    for (size_t i = 0; i < waiting.size(); ++i) msg += (i ? "; " : "") + waiting[i];
    return msg;
  }
  const EngineProgress &p = model->progress();
  std::vector<std::string> waiting;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    // The n-th instruction an engine executes is its n-th one in program order.
    uint64_t seen = 0;
    for (uint32_t i = 0; i < insns.size(); ++i) {
      if (static_cast<int>(isa::engine_of(insns[i])) != e) continue;
      if (seen++ < p.ended[e]) continue;
      const isa::DepFlags &d = isa::deps_of(insns[i]);
      const auto eng = static_cast<isa::Engine>(e);
      std::string why;
      if (p.started[e] > p.ended[e]) {
        why = "started, waiting to push its token";
      } else if (d.pop_prev || d.pop_next) {
        why = fmt::format("waiting for a token from {}",
                          d.pop_prev ? neighbour(eng, true) : neighbour(eng, false));
      } else {
        why = "not started";
      }
      waiting.push_back(fmt::format("{} engine at instruction {} ({}: {})", isa::engine_name(eng),
                                    i, isa::insn_summary(insns[i]), why));
      break;
    }
  }
  if (waiting.empty()) return msg + "; every instruction has ended (FINISH never completed)";
  msg += "; waiting: ";
  for (size_t i = 0; i < waiting.size(); ++i) msg += (i ? "; " : "") + waiting[i];
  return msg;
}

std::vector<InsnSlice> RtlSim::Impl::build_slices() const {
  const std::vector<isa::Insn> insns = program();
  // The instructions of each track in program order: an engine's, or a compute unit's
  // (GEMMs / ALUs). The n-th start on a track is its n-th instruction; ends come in the same
  // order.
  std::vector<std::vector<uint32_t>> order(kNumTracks);
  for (uint32_t i = 0; i < insns.size(); ++i) {
    order[static_cast<int>(isa::engine_of(insns[i]))].push_back(i);
    if (std::holds_alternative<isa::GemmInsn>(insns[i])) order[kGemmUnitTrack].push_back(i);
    if (std::holds_alternative<isa::AluInsn>(insns[i])) order[kAluUnitTrack].push_back(i);
  }
  std::vector<InsnSlice> slices;
  std::vector<size_t> started(kNumTracks, 0);
  std::vector<std::vector<size_t>> open(kNumTracks);  // slice ids, in start order
  const uint64_t origin = run_origin();
  for (const InsnEvent &ev : events) {
    const int t = ev.track;
    if (t >= kNumTracks) continue;
    if (ev.start) {
      InsnSlice s;
      s.track = t;
      s.index = started[t] < order[t].size() ? order[t][started[t]] : 0xFFFFFFFFu;
      s.start = ev.cycle - origin;
      s.end = s.start;
      ++started[t];
      open[t].push_back(slices.size());
      slices.push_back(s);
    } else if (!open[t].empty()) {
      slices[open[t].front()].end = ev.cycle - origin;
      open[t].erase(open[t].begin());
    }
  }
  return slices;
}

RtlSim::RtlSim(const isa::HwConfig &config, RtlOptions options) {
  const ModelEntry *entry = nullptr;
  if (!options.model.empty()) {
    entry = find_model_by_name(options.model);
    if (entry == nullptr) fail("no RTL model named '{}' is built into this binary", options.model);
  } else {
    const std::string hardware = rtl_hardware_text(config);
    entry = find_model(hardware);
    ModelCacheOptions cache;
    cache.build = options.build_model;
    cache.dir = options.cache_dir;
    cache.progress = options.progress ? options.progress : [](const std::string &line) {
      fmt::print(stderr, "vacc rtl: {}\n", line);
      std::fflush(stderr);
    };
    if (entry == nullptr) entry = cached_model(config, hardware, cache);
    if (entry == nullptr) {
      std::string names;
      for (const KnownModel &m : known_models())
        names += (names.empty() ? "" : ", ") + std::string(m.entry->name);
      fail(
          "no RTL model for config '{}' ({}) is built into vacc (it has {}) or cached in {}, and "
          "--no-build forbids building one: drop --no-build to build it (a few minutes, once "
          "per hardware), or use --engine perf",
          config.name, config.source.empty() ? "built in code" : config.source,
          names.empty() ? "none" : names, model_cache_dir(cache));
    }
  }
  impl_ = std::make_unique<Impl>(config, std::move(options), *entry);
}

RtlSim::~RtlSim() = default;

uint64_t RtlSim::allocate(uint64_t bytes) {
  impl_->memory.bytes().assign(bytes, 0);
  return kDeviceBase;
}

void RtlSim::write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) {
  auto &mem = impl_->memory.bytes();
  if (address < kDeviceBase || address - kDeviceBase > mem.size() ||
      bytes > mem.size() - (address - kDeviceBase))
    fail("rtl device: write of {} bytes at {:#x} is outside the {} allocated bytes at {:#x}", bytes,
         address, mem.size(), kDeviceBase);
  std::memcpy(mem.data() + (address - kDeviceBase), data, bytes);
}

void RtlSim::read_memory(uint64_t address, uint8_t *data, uint64_t bytes) {
  const auto &mem = impl_->memory.bytes();
  if (address < kDeviceBase || address - kDeviceBase > mem.size() ||
      bytes > mem.size() - (address - kDeviceBase))
    fail("rtl device: read of {} bytes at {:#x} is outside the {} allocated bytes at {:#x}", bytes,
         address, mem.size(), kDeviceBase);
  std::memcpy(data, mem.data() + (address - kDeviceBase), bytes);
}

void RtlSim::write_register(uint32_t offset, uint32_t value) {
  Impl &s = *impl_;
  switch (offset) {
    case reg::kBaseLow:
      s.base = (s.base & ~0xFFFFFFFFull) | value;
      break;
    case reg::kBaseHigh:
      s.base = (s.base & 0xFFFFFFFFull) | (uint64_t{value} << 32);
      break;
    case reg::kInsnOffset:
      s.insn_offset = value;
      break;
    case reg::kInsnCount:
      s.insn_count = value;
      break;
    default:
      break;
  }
  const bool start = offset == reg::kControl && (value & reg::kControlStart);
  if (start) {
    s.model->clear_progress();
    s.events.clear();
    slices_.clear();
    const bool record = s.options.record_slices || !s.options.timeline_path.empty();
    s.model->record_events(record ? &s.events : nullptr);
  }
  s.host([&](HostPort &host) {
    if (start) {
      const uint64_t limit =
          std::min<uint64_t>(s.options.cycle_limit, std::numeric_limits<uint32_t>::max());
      host.write(reg::kCycleLimit, static_cast<uint32_t>(limit));
    }
    if (start) s.run_start_memory = s.memory.stats();
    host.write(offset, value);
    if (start) s.run_start_cycle = host.cycle();
  });
}

void RtlSim::set_record_slices(bool on) {
  impl_->options.record_slices = on;
}

uint32_t RtlSim::read_register(uint32_t offset) {
  uint32_t value = 0;
  impl_->host([&](HostPort &host) { value = host.read(offset); });
  return value;
}

void RtlSim::wait(double timeout_seconds) {
  Impl &s = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = s.model->cycle();
  uint32_t status = 0, error_insn = 0;
  uint64_t cycles = 0;
  bool timed_out = false, ignored_limit = false;
  s.host([&](HostPort &host) {
    const uint64_t limit = s.options.cycle_limit;
    for (;;) {
      if (host.read(reg::kControl) & reg::kControlDone) break;
      const uint64_t ran = host.cycle() - s.run_start_cycle;
      if (limit != 0 && ran > limit + limit / 8 + 100000) {
        ignored_limit = true;
        break;
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (wall > timeout_seconds) {
        timed_out = true;
        break;
      }
      host.wait_cycles(s.options.poll_interval_cycles);
    }
    status = host.read(reg::kErrorStatus);
    error_insn = host.read(reg::kErrorInsn);
    cycles = host.read(reg::kCyclesLow);
    cycles |= uint64_t{host.read(reg::kCyclesHigh)} << 32;
  });
  s.last_wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.last_model_cycles = s.model->cycle() - c0;
  s.model->record_events(nullptr);

  if (s.options.record_slices || !s.options.timeline_path.empty()) slices_ = s.build_slices();
  if (!s.options.timeline_path.empty()) {
    write_timeline(s.options.timeline_path, "rtl", slices_, s.program(), s.period_ns,
                   s.model->has_insn_events(), s.model->has_unit_events());
  }
  if (timed_out)
    fail("rtl: the accelerator did not finish within {} s of wall time ({} cycles simulated)",
         timeout_seconds, s.model->cycle() - s.run_start_cycle);
  if (ignored_limit)
    fail("rtl: the accelerator ran {} cycles past its cycle limit of {} without raising done",
         s.model->cycle() - s.run_start_cycle, s.options.cycle_limit);
  if (!s.memory.first_error().empty()) fail("rtl: {}", s.memory.first_error());
  // A deadlock is explained from the engines' state (deadlock_message); the rest as every engine
  // words the error register (isa/error_status.h).
  if ((status & reg::kErrorDeadlock) && !(status & (reg::kErrorIllegalInsn | reg::kErrorRange)))
    fail("rtl: {}", s.deadlock_message(cycles));
  if (status != 0) {
    const std::vector<isa::Insn> insns = s.program();
    fail("rtl: {}", isa::error_status_message(status, error_insn, &insns));
  }
}

std::map<std::string, uint64_t> RtlSim::counters() {
  Impl &s = *impl_;
  std::map<std::string, uint64_t> c;
  s.host([&](HostPort &host) {
    c["cycles"] = host.read(reg::kCyclesLow) | (uint64_t{host.read(reg::kCyclesHigh)} << 32);
    c["load_busy"] = host.read(reg::kLoadBusy);
    c["load_stall"] = host.read(reg::kLoadStall);
    c["compute_busy"] = host.read(reg::kComputeBusy);
    c["compute_stall"] = host.read(reg::kComputeStall);
    c["store_busy"] = host.read(reg::kStoreBusy);
    c["store_stall"] = host.read(reg::kStoreStall);
    c["gemm_busy"] = host.read(reg::kGemmBusy);
  });
  // Multiply-accumulates, as fsim counts them (reset micro-ops excluded), from the RTL's trace.
  if (s.model->has_mac_trace())
    c["macs"] =
        s.model->progress().gemm_mac_uops * static_cast<uint64_t>(s.config.peak_macs_per_cycle());
  const AxiMemoryStats &m = s.memory.stats(), &m0 = s.run_start_memory;
  c["dram_read_bytes"] = m.read_bytes - m0.read_bytes;
  c["dram_write_bytes"] = m.write_bytes - m0.write_bytes;
  c["dram_read_bursts"] = m.read_bursts - m0.read_bursts;
  c["dram_write_bursts"] = m.write_bursts - m0.write_bursts;
  c["sim_cycles_per_second"] =
      s.last_wall_seconds > 0
          ? static_cast<uint64_t>(static_cast<double>(s.last_model_cycles) / s.last_wall_seconds)
          : 0;
  return c;
}

void RtlSim::run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count) {
  const uint64_t base = allocate(dram.size());
  write_memory(base, dram.data(), dram.size());
  write_register(reg::kInsnCount, insn_count);
  write_register(reg::kBaseLow, static_cast<uint32_t>(base));
  write_register(reg::kBaseHigh, static_cast<uint32_t>(base >> 32));
  write_register(reg::kInsnOffset, static_cast<uint32_t>(insn_offset));
  write_register(reg::kControl, reg::kControlStart);
  wait();
  read_memory(base, dram.data(), dram.size());
}

std::string RtlSim::model_name() const {
  return impl_->entry.name;
}

bool RtlSim::model_is_standin() const {
  return impl_->entry.standin;
}

std::vector<std::string> rtl_model_names() {
  std::vector<std::string> names;
  for (const ModelEntry &e : model_entries()) names.emplace_back(e.name);
  return names;
}

bool rtl_model_available(const isa::HwConfig &config) {
  return find_model(config) != nullptr;
}

bool rtl_model_standin(const isa::HwConfig &config) {
  const ModelEntry *e = find_model(config);
  return e != nullptr && e->standin;
}

}  // namespace vacc::sim
