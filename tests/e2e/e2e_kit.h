// Helpers the end-to-end model tests share: sample rows of a .npy file, host tensors for the
// runtime, and the compiler's own int8 reference of a model.
#pragma once

#include <cstring>
#include <string>

#include "vacc/compile/compile_model.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/pipeline.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc::test {

// Row `i` of a float32 .npy array of samples, as a tensor of `shape`.
inline graph::Tensor npy_row(const NpyArray &all, int64_t i, const graph::Shape &shape) {
  graph::Tensor t(graph::DType::kFloat32, shape);
  std::memcpy(t.raw(), all.data.data() + i * t.nbytes(), t.nbytes());
  return t;
}

inline runtime::HostTensor host(const graph::Tensor &t) {
  runtime::HostTensor h;
  h.shape = t.shape();
  h.data.assign(t.raw(), t.raw() + t.nbytes());
  return h;
}

// The graph pipeline (calibration, quantization, and what `options` adds) run independently
// of the package, then the reference executor on its output. It is independent of lowering
// and execution, not of quantization: it runs compile_model's own calibration and quantizer,
// so a test against it proves the package computes the quantized graph, and the comparisons
// with PyTorch's float outputs (model_fidelity_test.cc) carry quantization.
inline graph::Tensor int8_reference(const std::string &model, const std::string &calibration,
                                    const isa::HwConfig &config, const graph::Tensor &x,
                                    const graph::PipelineOptions &options = {}) {
  graph::Graph g = graph::import_onnx(model);
  std::string source;
  graph::run_graph_pipeline(g, config, compile::calibration_batches(g, calibration, &source),
                            options);
  return graph::ReferenceExecutor(g).run({x})[0];
}

}  // namespace vacc::test
