// `vacc eval [MODEL.onnx]`: accuracy on the 10 000 Fashion-MNIST test images of Debian's
// dataset-fashion-mnist — the int8 model with its accelerator steps on a simulator (fsim by
// default) against the float model on the CPU. Fails when int8 falls more than --max-drop
// points below float.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/graph/idx.h"
#include "vacc/support/error.h"

namespace vacc::cli {

namespace {

struct EvalArgs {
  std::string model, config = "default", engine = "fsim", cpu = "reference";
  CalibrationArgs calibration;
  int64_t limit = 10000, batch = 100;
  double max_drop = 1.0;
  bool json = false, no_build = false;
};

float metadata_float(const isa::Package &p, const std::string &key, const std::string &model) {
  if (!p.metadata.contains(key))
    fail(
        "{}: the model's metadata has no '{}': vacc eval needs a Fashion-MNIST model that "
        "records its input normalization (vacc.mean, vacc.std), like the bundled one",
        model, key);
  const auto &v = p.metadata[key];
  return v.is_string() ? std::stof(v.get<std::string>()) : v.get<float>();
}

std::vector<int64_t> predicted_classes(const runtime::HostTensor &t) {
  if (t.dtype != "f32" || t.shape.size() != 2) fail("the model's output is not float32 [N, K]");
  const int64_t n = t.shape[0], k = t.shape[1];
  const float *v = reinterpret_cast<const float *>(t.data.data());
  std::vector<int64_t> out;
  for (int64_t r = 0; r < n; ++r) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (v[r * k + j] > v[r * k + best]) best = j;
    out.push_back(best);
  }
  return out;
}

void eval(const EvalArgs &a) {
  using Clock = std::chrono::steady_clock;
  const std::string model = a.model.empty() ? bundled_model() : a.model;
  if (a.limit < 1) fail("--limit {}: must be at least 1", a.limit);
  if (a.batch < 1) fail("--batch {}: must be at least 1", a.batch);
  if (std::filesystem::path(model).extension() != ".onnx")
    fail("{}: vacc eval compares int8 with float and takes the ONNX model (.onnx)", model);
  const isa::HwConfig config = load_named_config(a.config);
  const std::string dir = graph::kFashionMnistDir;
  const graph::Tensor images = graph::read_idx(dir + "/t10k-images-idx3-ubyte.gz");
  const graph::Tensor labels = graph::read_idx(dir + "/t10k-labels-idx1-ubyte.gz");
  const int64_t total = std::min<int64_t>(a.limit, images.dim(0));
  const int64_t batch = std::min<int64_t>(a.batch, total);

  const auto t0 = Clock::now();
  compile::CompileOptions co;
  co.batch = batch;
  apply_calibration_options(a.calibration, &co);
  const isa::Package qp = load_model(model, config, co, true);
  co.quantize = false;
  const isa::Package fp = load_model(model, config, co, true);
  const double compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const float mean = metadata_float(qp, "vacc.mean", model);
  const float stddev = metadata_float(qp, "vacc.std", model);
  const isa::PackageTensor &in = qp.tensors[qp.inputs.at(0)];
  if (in.elements() != batch * 28 * 28)
    fail("{}: input '{}' is {}, not a batch of 28x28 images", model, in.name,
         graph::shape_str(in.shape));

  const bool has_accel = qp.accelerator_steps() > 0;
  std::unique_ptr<driver::Device> device;
  driver::DeviceOptions device_options;
  device_options.build_rtl_model = !a.no_build;
  if (has_accel) device = open_engine(a.engine, config, device_options);
  auto qhost = make_host_kernels(a.cpu, qp);
  auto fhost = make_host_kernels(a.cpu, fp);
  runtime::GraphExecutor qexec(qp, *qhost, device.get(), config);
  runtime::GraphExecutor fexec(fp, *fhost, nullptr, config);

  int64_t qcorrect = 0, fcorrect = 0, agree = 0;
  double qs = 0, fs = 0;
  uint64_t cycles = 0;
  bool have_cycles = false;
  for (int64_t start = 0; start < total; start += batch) {
    const int64_t n = std::min(batch, total - start);
    graph::Tensor u8(graph::DType::kUInt8, {batch, 28, 28});
    std::memcpy(u8.raw(), images.raw() + start * 28 * 28, n * 28 * 28);
    const graph::Tensor x = graph::normalize_images(u8, mean, stddev);
    runtime::HostTensor h;
    h.shape = in.shape;
    h.data.assign(x.raw(), x.raw() + x.nbytes());
    runtime::RunProfile qprof, fprof;
    const auto qpred = predicted_classes(qexec.run({h}, &qprof)[0]);
    const auto fpred = predicted_classes(fexec.run({h}, &fprof)[0]);
    qs += qprof.seconds;
    fs += fprof.seconds;
    if (auto c = qprof.cycles()) {
      cycles += *c;
      have_cycles = true;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t label = labels.as_int(start + i);
      qcorrect += qpred[i] == label;
      fcorrect += fpred[i] == label;
      agree += qpred[i] == fpred[i];
    }
  }
  const double qacc = 100.0 * qcorrect / total, facc = 100.0 * fcorrect / total;
  const bool ok = facc - qacc <= a.max_drop;
  const std::string engine = has_accel ? a.engine : "none";
  if (a.json) {
    nlohmann::ordered_json j;
    j["model"] = model;
    j["config"] = config.name;
    j["engine"] = engine;
    j["images"] = total;
    j["batch"] = batch;
    j["float_accuracy"] = facc;
    j["int8_accuracy"] = qacc;
    j["agreement"] = agree;
    j["max_drop"] = a.max_drop;
    j["within"] = ok;
    j["accel_cycles"] = have_cycles ? nlohmann::ordered_json(cycles) : nlohmann::ordered_json();
    j["compile_seconds"] = compile_s;
    j["int8_seconds"] = qs;
    j["float_seconds"] = fs;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("model    {} on {} Fashion-MNIST test images (batch {})\n", model, total, batch);
    fmt::print("float32  {:6.2f} %   (CPU: {}, {:.1f} s)\n", facc, fhost->name(), fs);
    fmt::print("int8     {:6.2f} %   (accelerator: {} on config '{}', CPU: {}, {:.1f} s)\n", qacc,
               engine, config.name, qhost->name(), qs);
    fmt::print(
        "agree    {} of {} predictions; int8 - float = {:+.2f} points (allowed drop "
        "{:.2f})\n",
        agree, total, qacc - facc, a.max_drop);
    if (have_cycles) fmt::print("cycles   {} accelerator cycles in all\n", cycles);
  }
  if (!ok)
    fail("int8 accuracy {:.2f} % is {:.2f} points below float {:.2f} %, more than --max-drop {}",
         qacc, facc - qacc, facc, a.max_drop);
}

}  // namespace

void add_eval_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "eval", "Accuracy on the Fashion-MNIST test set: int8 on the accelerator vs float");
  auto a = std::make_shared<EvalArgs>();
  cmd->add_option("model", a->model, "ONNX model (default: the bundled Fashion-MNIST CNN)");
  cmd->add_option("--config", a->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine, "Simulator for accelerator steps: fsim, perf or rtl")
      ->capture_default_str();
  cmd->add_option("--limit", a->limit, "Evaluate the first N test images")->capture_default_str();
  cmd->add_option("--batch", a->batch, "Images per run")->capture_default_str();
  cmd->add_option("--cpu", a->cpu, "CPU kernels: reference or llvm")->capture_default_str();
  add_calibration_options(cmd, &a->calibration);
  cmd->add_option("--max-drop", a->max_drop, "Fail when int8 is more points below float")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON instead of text");
  add_no_build_flag(cmd, &a->no_build);
  cmd->callback([a] { eval(*a); });
}

}  // namespace vacc::cli
