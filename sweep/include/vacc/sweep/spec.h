// A sweep spec: a base hardware config, axes over any of its keys (lists or ranges),
// constraints on the resources a point may use, and the workloads every point runs.
// parse_spec() is a pure function from text to a validated spec: it reads no file (the
// base config and the models are named, not opened), and every error is a vacc::Error
// naming the spec file and the key at fault ("s.yaml: key 'axes.gemm.block_in': ...").
//
//   name: gemm-shapes                 # optional; default: the file's stem
//   base: default                     # a bundled config name or a path (relative to the spec),
//                                     # or a mapping written like a config file
//   axes:                             # the cartesian product of these, in this order
//     gemm.block_in: [8, 16, 32]
//     buffers.wgt_kib: {from: 32, to: 256, step: x2}   # x2: multiply; a number: add
//     clock_mhz: {from: 100, to: 300, step: 100}
//   constraints:                      # a point that breaks one is listed, not run
//     - dsp <= 220                    # lut, ff, dsp, bram (RAMB36 equivalents), area_mm2
//     - fits: xc7z020                 # LUT, FF, DSP and BRAM all within the part
//   workloads:
//     - model: ../models/net.onnx     # relative to the spec; input/calibration optional
//       calibration: calib.npy
//     - bench: resnet18-convs         # the ResNet-18 conv layers (vacc bench resnet18-convs)
//       layers: [C2, C6]              # optional subset
#pragma once

#include <string>
#include <vector>

namespace vacc::sweep {

struct Axis {
  std::string key;                  // a config key, e.g. "gemm.block_in"
  std::vector<std::string> values;  // the values as YAML scalars, in sweep order
};

struct Constraint {
  enum class Kind { kCompare, kFits };
  Kind kind = Kind::kCompare;
  std::string metric;  // kCompare: lut, ff, dsp, bram, area_mm2
  std::string op;      // <=, <, >=, >, ==
  double value = 0;
  std::string part;  // kFits: an FPGA part name (hw/parts.h)
  std::string text;  // as written, for messages
};

// Whether a value satisfies `c` (kCompare only).
bool compare(const Constraint &c, double value);

struct Workload {
  enum class Kind { kModel, kConvBench };
  Kind kind = Kind::kModel;
  std::string name;         // unique in the spec: `name`, else the model's stem / the bench name
  std::string model;        // kModel: path as written in the spec
  std::string input;        // optional .npy (timing needs no data: zeros by default)
  std::string calibration;  // optional .npy of calibration inputs
  std::string bench;        // kConvBench: "resnet18-convs"
  std::vector<std::string> layers;  // kConvBench: a subset of the layers, by name
  int vthreads = 2;
  int64_t batch = 1;
  // The spec's `tune: {trials, strategy, tails}`: each point's layers tuned (vacc tune's search, in
  // the worker) before the workload is scored; 0 trials: the schedules compile gives.
  int64_t tune_trials = 0;
  std::string tune_strategy = "anneal";
  bool tune_tails = false;  // tune.tails: TuneOptions::tails
};

struct SweepSpec {
  std::string source;  // the spec's file name, for messages
  std::string name;
  std::string base = "default";  // a config name or path; empty when base_yaml is inline
  std::string base_yaml;         // an inline base config (YAML text), or empty
  std::vector<Axis> axes;
  std::vector<Constraint> constraints;
  std::vector<Workload> workloads;

  // Points in the cartesian product of the axes (1 with no axis).
  int64_t num_points() const;
};

// Parses and validates a spec; `source` names it in messages (and gives the default name).
SweepSpec parse_spec(const std::string &yaml_text, const std::string &source);

// The most points a spec may describe, and the most values one range may produce.
inline constexpr int64_t kMaxPoints = 1'000'000;
inline constexpr int64_t kMaxRangeValues = 10'000;

}  // namespace vacc::sweep
