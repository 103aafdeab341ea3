// Shared by `vacc compile`, `vacc run` and `vacc eval`: getting a package from a model file
// (compiling an .onnx on the fly), choosing the CPU kernels and the device, and printing the
// per-layer table of a run.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/package/compile_model.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/isa/package.h"

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
                            const package::CompileOptions &options, bool quiet);

// "reference" (the graph reference executor) or "llvm" (the LLVM JIT CPU backend).
std::unique_ptr<runtime::HostKernels> make_host_kernels(const std::string &name,
                                                        const isa::Package &package);

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
