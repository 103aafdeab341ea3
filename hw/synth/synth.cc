// Runs Yosys on hw/rtl for one config (see synth.h). The flow: generate vacc_pkg.sv into a
// work directory, write a script (read_verilog -sv -DSYNTHESIS, synth_xilinx -flatten, stat
// -json), run yosys, count the mapped cells by kind. The scratchpads stay memories through
// memory_bram, so they are reported as block RAMs rather than flip-flops.
#include "vacc/hw/synth.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "vacc/hw/dsp_packing.h"
#include "vacc/hw/package.h"
#include "vacc/support/cache_dir.h"
#include "vacc/support/error.h"
#include "vacc/support/hash.h"
#include "vacc/support/file.h"

namespace vacc::hw {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> rtl_sources() {
  std::vector<std::string> out;
  std::stringstream list(VACC_RTL_SOURCES);
  std::string item;
  while (std::getline(list, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Output of a shell command (stdout), and its exit status.
std::pair<std::string, int> run_capture(const std::string &command) {
  std::string out;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  return {out, status};
}

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string tail_lines(const std::string &text, int lines) {
  size_t pos = text.size();
  for (int i = 0; i <= lines && pos != std::string::npos && pos > 0; ++i)
    pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos ? text : text.substr(pos + 1);
}

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

void classify(SynthReport &r) {
  r.cells = r.luts = r.ffs = r.dsps = r.ramb36 = r.ramb18 = r.lutram = r.carry = 0;
  for (const auto &[type, count] : r.cell_types) {
    r.cells += count;
    if (starts_with(type, "LUT")) r.luts += count;
    else if (starts_with(type, "FD")) r.ffs += count;
    else if (starts_with(type, "DSP48")) r.dsps += count;
    else if (starts_with(type, "RAMB36")) r.ramb36 += count;
    else if (starts_with(type, "RAMB18")) r.ramb18 += count;
    else if (starts_with(type, "RAM")) r.lutram += count;
    else if (starts_with(type, "CARRY")) r.carry += count;
  }
  r.bram_bits = r.ramb36 * 36864 + r.ramb18 * 18432;
}

int64_t scratchpad_bits(const isa::HwConfig &c) {
  return int64_t{8} * 1024 * (c.uop_kib + c.inp_kib + c.wgt_kib + 2 * int64_t{c.acc_kib});
}

nlohmann::json to_json(const SynthReport &r) {
  nlohmann::json j;
  j["config"] = r.config_name;
  j["family"] = r.family;
  j["key"] = r.key;
  j["cells"] = r.cells;
  j["luts"] = r.luts;
  j["ffs"] = r.ffs;
  j["dsps"] = r.dsps;
  j["ramb36"] = r.ramb36;
  j["ramb18"] = r.ramb18;
  j["lutram"] = r.lutram;
  j["carry"] = r.carry;
  j["bram_bits"] = r.bram_bits;
  j["scratchpad_bits"] = r.scratchpad_bits;
  j["cell_types"] = r.cell_types;
  j["seconds"] = r.seconds;
  j["cached"] = r.cached;
  return j;
}

SynthReport from_json(const nlohmann::json &j) {
  SynthReport r;
  r.config_name = j.at("config").get<std::string>();
  r.family = j.at("family").get<std::string>();
  r.key = j.at("key").get<std::string>();
  r.cell_types = j.at("cell_types").get<std::map<std::string, int64_t>>();
  r.scratchpad_bits = j.at("scratchpad_bits").get<int64_t>();
  r.seconds = j.at("seconds").get<double>();
  classify(r);
  return r;
}

void set_dsp_packing(SynthReport &r, const isa::HwConfig &config) {
  const DspPackingPlan plan = plan_dsp_packing(config);
  r.dsp_packing = isa::dsp_packing_name(config.dsp_packing);
  r.dsp_packed = plan.packed;
  r.dsp_packing_reason = plan.reason;
}

// Moves a finished run's folder to its key and writes the result beside it, each by a rename
// (atomic within one file system), so readers never see half an entry.
void publish(const fs::path &work, const fs::path &entry, const fs::path &result_path,
             const std::string &result) {
  std::error_code ec;
  fs::remove_all(entry, ec);
  fs::rename(work, entry, ec);
  if (ec) fs::remove_all(work, ec);  // another run published the same key first
  const fs::path staged = result_path.string() + ".tmp." + std::to_string(getpid());
  std::ofstream(staged) << result;
  fs::rename(staged, result_path, ec);
  if (ec) fail("cannot write the synthesis result '{}': {}", result_path.string(), ec.message());
}

}  // namespace

std::string default_cache_dir() {
  return (fs::path(user_cache_dir()) / "synth").string();
}

SynthReport synthesize(const isa::HwConfig &config, const SynthOptions &options) {
  const std::string package = generate_package(config);
  const std::vector<std::string> sources = rtl_sources();

  // The script, with the package and sources named relative to nothing: absolute paths.
  const std::string cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;

  auto [version, vstatus] = run_capture(quote(options.yosys) + " -V 2>/dev/null");
  if (vstatus != 0 || version.empty())
    fail("cannot run '{}': install Debian's 'yosys' package (scripts/packages.txt) or pass "
         "the path of a yosys binary",
         options.yosys);

  uint64_t h = fnv1a(package);
  for (const std::string &src : sources) h = fnv1a(read_file(src, "RTL source"), fnv1a(src, h));
  h = fnv1a(options.family, h);
  h = fnv1a(version, h);
  h = fnv1a("flow-v1", h);
  const std::string key = fmt::format("{:016x}", h);

  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) fail("cannot create the synthesis cache directory '{}': {}", cache_dir, ec.message());
  const fs::path result_path = fs::path(cache_dir) / (key + ".json");
  if (options.use_cache && fs::exists(result_path)) {
    try {
      SynthReport r =
          from_json(nlohmann::json::parse(read_file(result_path.string(), "synthesis result")));
      r.cached = true;
      r.log_path = (fs::path(cache_dir) / key / "yosys.log").string();
      set_dsp_packing(r, config);
      return r;
    } catch (const nlohmann::json::exception &) {
      // A damaged cache entry: synthesize again and overwrite it.
    }
  }

  // Each run synthesizes in a folder of its own and publishes it under the key when done, so
  // two processes synthesizing the same config (sweep workers, parallel tests) never share
  // Yosys's files; the last one to finish wins, with identical contents.
  const fs::path entry = fs::path(cache_dir) / key;
  std::string work_template = (fs::path(cache_dir) / (key + ".run.XXXXXX")).string();
  if (mkdtemp(work_template.data()) == nullptr)
    fail("cannot create a work folder in '{}': {}", cache_dir, std::strerror(errno));
  const fs::path work = work_template;
  write_package(config, work.string());
  const fs::path stat_path = work / "stat.json";
  const fs::path log_path = work / "yosys.log";
  {
    std::ofstream script(work / "synth.ys");
    script << "read_verilog -sv -DSYNTHESIS " << (work / "vacc_pkg.sv").string();
    for (const std::string &src : sources) script << " " << src;
    script << "\n";
    script << "synth_xilinx -family " << options.family << " -top vacc_top -flatten\n";
    script << "tee -q -o " << stat_path.string() << " stat -json\n";
  }
  fs::remove(stat_path, ec);
  const auto t0 = std::chrono::steady_clock::now();
  // An identifier Yosys declares implicitly is a construct it did not understand (a member of
  // an array of structs, hw/README.md): an error, not a silently different netlist.
  const std::string command = fmt::format(
      "{} -q -e 'is implicitly declared' -l {} -s {} >/dev/null 2>&1", quote(options.yosys),
      quote(log_path.string()), quote((work / "synth.ys").string()));
  const int status = std::system(command.c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (status != 0 || !fs::exists(stat_path)) {
    std::string log;
    if (fs::exists(log_path)) log = tail_lines(read_file(log_path.string(), "synthesis log"), 8);
    fail("yosys failed synthesizing config '{}' (log: {}):\n{}", config.name, log_path.string(),
         log);
  }

  SynthReport r;
  r.config_name = config.name;
  r.family = options.family;
  r.key = key;
  r.seconds = seconds;
  r.log_path = log_path.string();
  r.scratchpad_bits = scratchpad_bits(config);
  try {
    // `tee -o` keeps the command echo before the JSON; parse from the first brace.
    std::string text = read_file(stat_path.string(), "Yosys statistics");
    const size_t brace = text.find('{');
    if (brace == std::string::npos) throw nlohmann::json::parse_error::create(101, 0, "", nullptr);
    const nlohmann::json stat = nlohmann::json::parse(text.substr(brace));
    const nlohmann::json &modules = stat.at("modules");
    const nlohmann::json &top =
        modules.contains("\\vacc_top") ? modules.at("\\vacc_top") : modules.begin().value();
    for (const auto &[type, count] : top.at("num_cells_by_type").items())
      r.cell_types[type] = count.get<int64_t>();
  } catch (const nlohmann::json::exception &e) {
    fail("cannot read yosys statistics '{}': {}", stat_path.string(), e.what());
  }
  classify(r);
  set_dsp_packing(r, config);
  publish(work, entry, result_path, to_json(r).dump(2) + "\n");
  r.log_path = (entry / "yosys.log").string();
  return r;
}

PartFit check_fit(const SynthReport &r, const FpgaPart &part) {
  PartFit f;
  f.part = part;
  auto pct = [](double used, double cap) { return cap > 0 ? 100.0 * used / cap : 0.0; };
  // Distributed RAM cells use LUTs too (a RAM64M is four LUT6s).
  f.lut_pct = pct(static_cast<double>(r.luts + 4 * r.lutram), part.luts);
  f.ff_pct = pct(r.ffs, part.ffs);
  f.dsp_pct = pct(r.dsps, part.dsps);
  f.bram_pct = pct(r.bram36_equivalent(), part.bram36);
  f.fits = f.lut_pct <= 100 && f.ff_pct <= 100 && f.dsp_pct <= 100 && f.bram_pct <= 100;
  return f;
}

std::string report_json(const SynthReport &r, const std::optional<PartFit> &fit) {
  nlohmann::json j = to_json(r);
  j["dsp_packing"] = {
      {"setting", r.dsp_packing}, {"packed", r.dsp_packed}, {"reason", r.dsp_packing_reason}};
  j["fits"] = fit ? nlohmann::json(fit->fits) : nlohmann::json();
  if (fit) {
    j["part"] = {{"name", fit->part.name},       {"board", fit->part.board},
                 {"fits", fit->fits},            {"lut_pct", fit->lut_pct},
                 {"ff_pct", fit->ff_pct},        {"dsp_pct", fit->dsp_pct},
                 {"bram_pct", fit->bram_pct}};
  }
  return j.dump(2);
}

std::string report_text(const SynthReport &r, const std::optional<PartFit> &fit) {
  std::string s;
  s += fmt::format("config {}  yosys synth_xilinx -family {}{}\n", r.config_name, r.family,
                   r.cached ? "  (cached)" : fmt::format("  ({:.1f} s)", r.seconds));
  s += fmt::format("  {:<22}{:>12}\n", "cells", r.cells);
  s += fmt::format("  {:<22}{:>12}\n", "LUTs", r.luts);
  s += fmt::format("  {:<22}{:>12}\n", "flip-flops", r.ffs);
  s += fmt::format("  {:<22}{:>12}\n", "DSPs", r.dsps);
  s += fmt::format("  {:<22}{:>12}\n", "RAMB36 / RAMB18", fmt::format("{} / {}", r.ramb36, r.ramb18));
  s += fmt::format("  {:<22}{:>12}\n", "LUT RAM cells", r.lutram);
  s += fmt::format("  {:<22}{:>12}\n", "block RAM bits", r.bram_bits);
  s += fmt::format("  {:<22}{:>12}\n", "scratchpad bits", r.scratchpad_bits);
  s += fmt::format("  DSP packing: {} ({})\n", r.dsp_packed ? "two int8 products per DSP" : "off",
                   r.dsp_packing_reason);
  if (fit) {
    s += fmt::format("part {} ({}): {}\n", fit->part.name, fit->part.board,
                     fit->fits ? "fits" : "does NOT fit");
    s += fmt::format("  LUT {:.1f}%  FF {:.1f}%  DSP {:.1f}%  BRAM {:.1f}%\n", fit->lut_pct,
                     fit->ff_pct, fit->dsp_pct, fit->bram_pct);
  }
  return s;
}

}  // namespace vacc::hw
