// Logic synthesis of the accelerator with Yosys (synth_xilinx), for resource estimates: the
// RTL of hw/rtl plus the package generated for one config, mapped onto a Xilinx family, with
// cells counted by kind. Results are cached by a hash of everything that determines them
// (package text, RTL sources, family, script, yosys version).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "vacc/hw/parts.h"
#include "vacc/isa/config.h"

namespace vacc::hw {

struct SynthOptions {
  std::string family = "xc7";  // synth_xilinx -family (xc7, xcup, ...)
  std::string yosys = "yosys";
  // Cache directory; "" means the user cache's synth/ (support/cache_dir.h).
  std::string cache_dir;
  bool use_cache = true;
};

struct SynthReport {
  std::string config_name;
  std::string family;
  std::string key;  // the cache key (hex)
  int64_t cells = 0;
  int64_t luts = 0;     // LUT1..LUT6
  int64_t ffs = 0;      // FDRE/FDSE/FDCE/FDPE
  int64_t dsps = 0;     // DSP48E1/E2
  int64_t ramb36 = 0;   // RAMB36E1/E2
  int64_t ramb18 = 0;   // RAMB18E1/E2
  int64_t lutram = 0;   // distributed RAM cells (RAM32M, RAM64M, RAMxxXy...)
  int64_t carry = 0;    // CARRY4/CARRY8
  int64_t bram_bits = 0;     // block-RAM capacity used: 36864 per RAMB36, 18432 per RAMB18
  int64_t scratchpad_bits = 0;  // bits the config's scratchpads hold (ACC counted twice)
  std::map<std::string, int64_t> cell_types;
  // gemm.dsp_packing as configured ("auto", "off", "on"), whether the RTL packs, and why.
  std::string dsp_packing = "auto";
  bool dsp_packed = false;
  std::string dsp_packing_reason;
  double seconds = 0;  // yosys wall time when it ran
  bool cached = false;
  std::string log_path;

  double bram36_equivalent() const { return static_cast<double>(ramb36) + ramb18 / 2.0; }
};

// Runs (or fetches from the cache) synthesis of `config`. Throws vacc::Error when yosys is
// missing or fails (naming its log file), or when the config cannot be built by the RTL.
SynthReport synthesize(const isa::HwConfig &config, const SynthOptions &options);

struct PartFit {
  FpgaPart part;
  bool fits = false;
  double lut_pct = 0, ff_pct = 0, dsp_pct = 0, bram_pct = 0;
};
PartFit check_fit(const SynthReport &report, const FpgaPart &part);

// The report (and the fit, if any) as a JSON object text: the counts above, "dsp_packing"
// {setting, packed, reason}, "fits" (true/false; null without a part) and "part" {name,
// board, fits, lut_pct, ff_pct, dsp_pct, bram_pct} (hw/README.md lists every field).
std::string report_json(const SynthReport &report, const std::optional<PartFit> &fit);
// A human-readable table.
std::string report_text(const SynthReport &report, const std::optional<PartFit> &fit);

// The default cache directory (see SynthOptions::cache_dir).
std::string default_cache_dir();

}  // namespace vacc::hw
