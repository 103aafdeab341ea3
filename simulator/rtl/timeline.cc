#include "vacc/simulator/timeline.h"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>

#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

// The assembly mnemonic (isa/README.md): "load.inp", "gemm", "alu.max", "store.out", "finish".
std::string slice_name(const isa::Insn &insn) {
  std::string s;
  if (const auto *m = std::get_if<isa::MemInsn>(&insn))
    s = fmt::format("{}.{}", isa::opcode_name(m->opcode), isa::mem_id_name(m->mem));
  else if (const auto *a = std::get_if<isa::AluInsn>(&insn))
    s = fmt::format("alu.{}", isa::alu_op_name(a->op));
  else
    s = isa::opcode_name(isa::opcode_of(insn));
  for (char &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string track_name(int track) {
  if (track == kGemmUnitTrack) return "compute: GEMM";
  if (track == kAluUnitTrack) return "compute: ALU";
  return isa::engine_name(static_cast<isa::Engine>(track));
}

// Top to bottom: load, compute (its queue), its GEMM and ALU units, store.
int track_order(int track) {
  static constexpr int kOrder[kNumTracks] = {0, 1, 4, 2, 3};
  return kOrder[track];
}

// A path holding "{run}" names one file per run: "{run}" becomes the number of timelines this
// process wrote before (000, 001, ...), so a model's accelerator steps, each one run, each
// write their own (vacc bench model --timeline DIR).
std::string numbered(const std::string &path) {
  static std::atomic<uint64_t> written{0};
  const size_t at = path.find("{run}");
  if (at == std::string::npos) return path;
  std::string out = path;
  out.replace(at, 5, fmt::format("{:03}", written++));
  return out;
}

}  // namespace

void write_timeline(const std::string &path, const std::string &engine,
                    const std::vector<InsnSlice> &slices, const std::vector<isa::Insn> &program,
                    double period_ns, bool have_events, bool have_unit_events) {
  if (!have_events)
    fail(
        "--timeline {}: this RTL exposes no per-instruction trace signals (trace_insn_start / "
        "trace_insn_end in vacc_top, see simulator/rtl/README.md)",
        path);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"args", {{"name", "vacc accelerator (" + engine + ")"}}}});
  const int tracks = have_unit_events ? kNumTracks : isa::kNumEngines;
  for (int t = 0; t < tracks; ++t) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", t},
                      {"args", {{"name", track_name(t)}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", t},
                      {"args", {{"sort_index", track_order(t)}}}});
  }
  const double us_per_cycle = period_ns / 1000.0;
  for (const InsnSlice &s : slices) {
    const bool known = s.index < program.size();
    nlohmann::json ev = {
        {"name", known ? slice_name(program[s.index]) : std::string("?")},
        {"cat", track_name(s.track)},
        {"ph", "X"},
        {"pid", 0},
        {"tid", s.track},
        {"ts", static_cast<double>(s.start) * us_per_cycle},
        {"dur", static_cast<double>(s.end - s.start) * us_per_cycle},
        {"args", {{"index", s.index}, {"start_cycle", s.start}, {"end_cycle", s.end}}}};
    events.push_back(std::move(ev));
  }
  nlohmann::json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  const std::string file = numbered(path);
  std::ofstream out(file);
  if (!out) fail("--timeline {}: cannot open the file for writing", file);
  out << doc.dump(1) << "\n";
  if (!out) fail("--timeline {}: write failed", file);
}

}  // namespace vacc::sim
