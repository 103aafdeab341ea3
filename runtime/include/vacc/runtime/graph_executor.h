// The runtime's graph executor: runs a loaded package step by step. Activations live in one
// host arena laid out by the package's memory plan. Accelerator steps replay their command
// lists (replay.h) on a Session of the chosen device: their constants (packed weights,
// biases) are uploaded once, their activation operands are copied into the device arena
// before and back after each step. CPU steps call a HostKernels implementation, which the
// runtime does not provide (it never links the compiler): the `vacc` command plugs in the
// compiler's CPU backend. Layout transforms at partition borders are ordinary CPU steps
// (vacc.PackNCHWnc / vacc.UnpackNCHWnc) of the package.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"

namespace vacc::runtime {

// A tensor on the host: a package dtype name, a shape, row-major bytes.
struct HostTensor {
  std::string dtype = "f32";
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

// CPU kernels for the steps that do not run on the accelerator.
class HostKernels {
 public:
  virtual ~HostKernels() = default;
  virtual std::string name() const = 0;  // e.g. "reference", "llvm"
  // Prepares every step's kernel (e.g. compiles it) ahead of the first run, so that a caller
  // can time compilation apart from running; kernels that need none do nothing.
  virtual void prepare() {}
  // Runs step `index` of the package given at construction: inputs[i] holds the bytes of
  // tensor step.inputs[i] (nullptr when absent), outputs[i] room for step.outputs[i] (nullptr
  // when absent), each sized and laid out as the package tensor says.
  virtual void run(size_t index, const std::vector<const uint8_t *> &inputs,
                   const std::vector<uint8_t *> &outputs) = 0;
};

// What one step did in one run.
struct StepProfile {
  size_t index = 0;
  std::string op, name;
  isa::StepTarget where = isa::StepTarget::kCpu;
  int64_t macs = 0;           // the model's own multiply-accumulates (utilization counts these)
  // With the channels padded to the GEMM blocks; on the accelerator the device's count where
  // it gives one (and then also the work its tiling repeats).
  int64_t executed_macs = 0;
  // The engine's cycle counter; fsim has none. In a program of several steps (package steps
  // that join the one before), each step's share where the engine times instructions (rtl,
  // perf): from the end of the steps before it to the end of its last instruction; elsewhere
  // the whole program's count on its first step.
  std::optional<uint64_t> cycles;
  // In a program of several steps, where instructions are timed: how long this step's first
  // work ran under the steps before it.
  std::optional<uint64_t> overlap_cycles;
  size_t program = 0;              // index of the first step of the device program this step ran in
  double seconds = 0;              // host wall time of the step
  driver::Counters
      counters;  // accelerator steps: the device's counters (a program's, on its first step)
  std::string note;
  std::string schedule;  // accelerator steps: the package step's schedule (heuristic or tuned)
};

struct RunProfile {
  std::vector<StepProfile> steps;
  double seconds = 0;
  int64_t macs(isa::StepTarget where) const;           // the model's own
  int64_t executed_macs(isa::StepTarget where) const;  // padded, as executed
  std::optional<uint64_t> cycles() const;              // total accelerator cycles, when counted
  int steps_on(isa::StepTarget where) const;
  // Host <-> accelerator hand-offs: consecutive steps (in run order) that run on different
  // sides. Each is a synchronous device run started or finished by the host.
  int transitions() const;
  // Device programs run: a run of accelerator steps that join each other is one.
  int programs() const;
};

// The instruction stream of one device program, as a run records it (the same addresses).
struct ProgramListing {
  size_t first = 0, last = 0;  // the package steps it runs
  size_t instructions = 0;
  // "# step N 'name' (op)" before each step's first instruction (and how its weights meet the
  // step before: ProgramReplay::boundaries()), then one instruction a line: its index and its
  // canonical assembly.
  std::string text;
};

class GraphExecutor {
 public:
  // `device` may be null when no step of the package has a command list. The package must
  // outlive the executor; `config` must be the one it was compiled for (check_config()).
  GraphExecutor(const isa::Package &package, HostKernels &host, driver::Device *device,
                const isa::HwConfig &config);
  ~GraphExecutor();

  // Called after each step with the bytes of its outputs (nullptr where absent), valid
  // during the call: for comparing every layer with a reference. With an observer every
  // accelerator step runs as its own program, so that each step's outputs can be seen before
  // a later step reuses their memory.
  using StepObserver =
      std::function<void(size_t index, const std::vector<const uint8_t *> &outputs)>;

  // Runs the package on one tensor per graph input (dtype and element count checked, a
  // mismatch is a vacc::Error naming the input); returns the graph outputs.
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs, RunProfile *profile = nullptr,
                              const StepObserver &observer = {});

  // Every device program a run submits, without running it.
  std::vector<ProgramListing> program_listings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vacc::runtime
