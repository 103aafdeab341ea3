// Shared by `vacc compile`, `vacc run` and `vacc eval`: getting a package from a model file
// (compiling an .onnx on the fly), choosing the CPU kernels and the device, and printing the
// per-layer table of a run.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc::cli {

// The bundled default model and its sample inputs / labels.
std::string bundled_model();
std::string bundled_samples();
std::string bundled_labels();
// Fashion-MNIST's class names, in label order.
const char *fashion_mnist_class(int64_t label);

// A package from `path`: a .vpkg is loaded and checked against `config`; an .onnx is
// compiled for it with `options`. Anything else is a vacc::Error naming the file.
isa::Package load_model(const std::string &path, const isa::HwConfig &config,
                        const compile::CompileOptions &options, bool quiet);

// `vacc compile`'s checks of its model file and options: a vacc::Error with its message.
void check_compile_args(const std::string &model, int64_t batch, int vthreads);

// The kernels for the steps the accelerator does not run. fallback "cpu": `name`'s CPU kernels,
// "reference" (the graph reference executor) or "llvm" (the LLVM JIT CPU backend, its compiled
// kernels cached on disk, codegen/cpu/kernel_cache.h); fallback "gpu": the GPU backend, with the
// LLVM CPU backend for the operators it has no kernel for. Anything else is a vacc::Error.
std::unique_ptr<runtime::HostKernels> make_host_kernels(const std::string &name,
                                                        const isa::Package &package,
                                                        const std::string &fallback = "cpu");

// host.prepare() (compiling the CPU steps' kernels), timed, with what the LLVM CPU backend's JIT
// did meanwhile: kernels compiled, linked from the disk cache, reused within the process, and
// damaged disk entries compiled again.
struct KernelPreparation {
  double seconds = 0;
  int64_t compiled = 0, disk_hits = 0, reused = 0, damaged = 0;
  std::string text() const;  // "compile 1.234 s (12 kernels compiled, 3 from the disk cache, ...)"
  nlohmann::ordered_json json() const;
};
KernelPreparation prepare_kernels(runtime::HostKernels &host);

// The device for `vacc run --sim --engine E` ("fsim", "perf", "rtl") or `--fpga` ("xrt").
std::unique_ptr<driver::Device> open_engine(const std::string &engine, const isa::HwConfig &config,
                                            const driver::DeviceOptions &options = {});

// The per-layer table (op, where, MACs, executed MACs, cycles, utilization, time) and totals.
// MACs and utilization count the model's own multiply-accumulates; "executed" includes the
// channels padded to the GEMM blocks.
std::string profile_table(const runtime::RunProfile &profile, const isa::HwConfig &config);
nlohmann::ordered_json profile_json(const runtime::RunProfile &profile,
                                    const isa::HwConfig &config);

}  // namespace vacc::cli
