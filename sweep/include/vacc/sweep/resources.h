// FPGA resources (LUT, FF, DSP, block RAM) of the accelerator for any config, without
// running synthesis: an analytic model of the RTL in hw/rtl, fitted to Yosys results.
//
// Block RAM is counted, not fitted: every vacc_ram instance of the RTL (INP, WGT, each ACC
// bank twice, UOP twice; hw/README.md) is tiled onto 7-series RAMB36/RAMB18 aspect ratios
// (fewest RAMB36 equivalents, RAMB36 on a tie): Yosys' own count on most samples, and within
// 7% where its memory mapping finds a cheaper arrangement for wide, deep memories.
// LUT and FF are linear in the quantities that size the datapath: the MAC array
// (batch x block_in x block_out), the ALU lanes times the accumulator width (its adders,
// shifters and multipliers), the bus width (DMA, slices) and the MACs packed two per DSP
// (gemm.dsp_packing: their sign correction); DSP in the GEMM multipliers (one per MAC, one
// per two packed) and the DSP48 tiles of the ALU lanes' multipliers. The
// coefficients come from a least-squares fit to Yosys runs (synth_xilinx -family xc7) listed
// in hw/synth/resource_samples.yaml, plus any a sweep ran itself (--synth).
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/config.h"

namespace vacc::sweep {

struct Resources {
  double lut = 0, ff = 0, dsp = 0;
  double bram = 0;  // RAMB36 equivalents (a RAMB18 counts one half)
};

// One synthesis result the model is fitted to.
struct SynthSample {
  std::string name;
  isa::HwConfig config;
  Resources yosys;
};

// One block-RAM memory of the RTL.
struct RtlMemory {
  std::string name;  // "inp", "wgt", "acc", "uop"
  int64_t width = 0, depth = 0;
  int copies = 1;
};
std::vector<RtlMemory> rtl_memories(const isa::HwConfig &config);

struct BramTiles {
  int64_t ramb36 = 0, ramb18 = 0;
  double equivalent() const { return static_cast<double>(ramb36) + ramb18 / 2.0; }
};
// The block RAMs one width x depth memory takes on a 7-series part.
BramTiles bram_tiles(int64_t width, int64_t depth);

// Mean and worst relative error of a model against Yosys, per resource, in percent.
struct ModelError {
  Resources mean_pct, max_pct;
  int samples = 0;
};

class ResourceModel {
 public:
  // Fits the model; throws vacc::Error when the samples cannot determine it (too few, or
  // not varying each quantity), naming what is missing.
  static ResourceModel fit(const std::vector<SynthSample> &samples);

  Resources estimate(const isa::HwConfig &config) const;

  // Leave-one-out error: each sample predicted by the model fitted to the others.
  static ModelError cross_validate(const std::vector<SynthSample> &samples);
  // The error of this model on `samples`.
  ModelError error_on(const std::vector<SynthSample> &samples) const;

  // Coefficients by resource, for the record ("lut": [c0, c1, ...]), and their features.
  std::string describe() const;

 private:
  std::vector<double> lut_, ff_, dsp_;
};

// The Yosys results vacc ships (hw/synth/resource_samples.yaml, embedded at build time).
std::vector<SynthSample> bundled_samples();
// Parses a samples file; throws vacc::Error naming `source` and the entry.
std::vector<SynthSample> parse_samples(const std::string &yaml_text, const std::string &source);

}  // namespace vacc::sweep
