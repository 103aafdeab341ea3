// `vacc run --sim|--fpga [MODEL.onnx|MODEL.vpkg]`: runs a model through the runtime's graph
// executor — accelerator steps on a simulator (rtl by default; fsim or perf with --engine) or
// on a board through XRT, the rest on the CPU — and prints the per-layer table. With no
// model it classifies one bundled Fashion-MNIST image with the bundled model.
// `--engine perf --timing-only` counts cycles without computing any data: the table's cycles
// are exact, the outputs are not computed (and not printed). `--remote HOST:PORT` compiles
// here and runs the package on a `vacc serve` (a board), printing the same table and output
// with the board's cycles and counters.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "quant_report_output.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/cli/tuning_options.h"
#include "vacc/compile/quant_report.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/host/gpu_kernels.h"
#include "vacc/host/reference_check.h"
#include "vacc/remote/client.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/support/npy.h"

namespace vacc::cli {

namespace {

struct RunArgs {
  std::string model;
  bool sim = false, fpga = false, json = false, float_too = false, check = false;
  bool timing_only = false, no_build = false;
  std::string engine = "rtl", config = "default", input, output, float_output, cpu = "reference";
  std::string fallback = "cpu";
  CalibrationArgs calibration;
  TuningArgs tuning;
  std::string xclbin, device;
  std::string remote, token_file, tls_ca;
  double timeout = 600;
  int64_t sample = 0, batch = 0;
  uint64_t cycle_limit = sim::kDefaultCycleLimit;
};

// The options given on the command line, to refuse those that --remote leaves to the server.
struct GivenOptions {
  bool config = false, engine = false, cpu = false;
};

runtime::HostTensor host_tensor(const graph::Tensor &t) {
  runtime::HostTensor h;
  h.dtype = graph::dtype_name(t.dtype());
  h.shape = t.shape();
  h.data.assign(t.raw(), t.raw() + t.nbytes());
  return h;
}

std::vector<float> floats(const runtime::HostTensor &t) {
  if (t.dtype != "f32") fail("the model's output is {}, not float32", t.dtype);
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

// Cosine similarity of two outputs (1 for two all-zero outputs).
double cosine(const std::vector<float> &a, const std::vector<float> &b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

// Arg-max of every row of a [N, K] output (the whole tensor as one row otherwise).
std::vector<int64_t> argmax_rows(const runtime::HostTensor &t) {
  const std::vector<float> v = floats(t);
  const int64_t k = t.shape.size() == 2 ? t.shape[1] : int64_t(v.size());
  std::vector<int64_t> out;
  for (int64_t r = 0; k > 0 && r * k < int64_t(v.size()); ++r) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (v[r * k + j] > v[r * k + best]) best = j;
    out.push_back(best);
  }
  return out;
}

void run(const RunArgs &a, const GivenOptions &given) {
  const bool config_given = given.config;
  const bool remote = !a.remote.empty();
  if (remote) {
    if (a.sim || a.fpga) fail("--remote runs on the server's engine: drop --sim / --fpga");
    if (given.engine || given.cpu || a.fallback != "cpu" || a.timing_only || !a.xclbin.empty() ||
        !a.device.empty())
      fail(
          "--remote: the server chooses the engine and CPU kernels (vacc serve --engine, "
          "--cpu); drop --engine, --cpu, --fallback, --timing-only, --xclbin and --device");
    if (a.check) fail("--check compares every step here; it does not work with --remote");
  } else if (!a.token_file.empty()) {
    fail("--token-file needs --remote");
  } else if (!a.tls_ca.empty()) {
    fail("--tls-ca needs --remote: it names the certificate a vacc server presents");
  }
  if (!remote && a.sim == a.fpga)
    fail(
        "vacc run: choose where accelerator steps run: --sim [--engine rtl|perf|fsim], "
        "--fpga --xclbin FILE or --remote HOST:PORT");
  const bool bundled = a.model.empty();
  const std::string model = bundled ? bundled_model() : a.model;
  if (a.fpga) {
    if (a.xclbin.empty() && !std::getenv("VACC_XCLBIN"))
      fail("vacc run --fpga: give the bitstream with --xclbin FILE (or VACC_XCLBIN)");
  } else if (!a.xclbin.empty() || !a.device.empty()) {
    fail("--xclbin and --device need --fpga");
  }
  const std::string engine = a.fpga ? "xrt" : a.engine;
  if (a.timing_only && engine != "perf")
    fail("--timing-only needs --sim --engine perf (engine is '{}')", engine);
  if (a.timing_only && (a.check || a.float_too || !a.output.empty() || !a.float_output.empty()))
    fail("--timing-only computes no outputs: drop --check, --float, --output and --float-output");
  if (a.fallback != "cpu" && a.fallback != "gpu")
    fail("--fallback '{}': choose cpu or gpu", a.fallback);
  // CPU steps run on --cpu's kernels, or on the GPU where it has a kernel (the LLVM CPU backend
  // for the others).
  auto host_kernels = [&](const isa::Package &p) {
    return make_host_kernels(a.cpu, p, a.fallback);
  };
  // --float-output runs the float model as --float does, and writes its output.
  const bool run_float = a.float_too || !a.float_output.empty();
  if (run_float && isa::is_package_file(model))
    fail("--float{} runs the float model: give the .onnx model rather than the package {}",
         a.float_too ? "" : "-output", model);

  // A package compiled for a bundled config runs on that config unless --config says else;
  // remotely, a model is compiled for the config the server runs.
  std::optional<remote::Client> client;
  std::optional<remote::ServerInfo> server;
  if (remote) {
    remote::ClientOptions copt;
    copt.address = a.remote;
    if (!a.token_file.empty()) copt.token = remote::read_token_file(a.token_file);
    if (!a.tls_ca.empty()) copt.tls_ca_pem = read_file(a.tls_ca, "--tls-ca certificate");
    copt.timeout_seconds = a.timeout;
    client.emplace(copt);
    server = client->info();
  }
  std::string config_name = a.config;
  if (!config_given && isa::is_package_file(model))
    config_name = isa::load_package(model).config_name;
  const isa::HwConfig config =
      remote && !config_given && !isa::is_package_file(model)
          ? isa::parse_config(server->config_yaml,
                              fmt::format("config '{}' of {}", server->config_name, a.remote))
          : load_named_config(config_name);

  // Input: --input, or one bundled sample image.
  std::optional<NpyArray> input_npy;
  if (!a.input.empty()) input_npy = read_npy(a.input);
  compile::CompileOptions co;
  apply_calibration_options(a.calibration, &co);
  apply_tuning_options(a.tuning, &co);
  co.batch = a.batch > 0                                 ? a.batch
             : input_npy && input_npy->shape.size() >= 4 ? input_npy->shape[0]
                                                         : 1;
  if (a.fallback == "gpu") co.cpu_block = 0;  // the GPU's kernels read plain tensors
  if (input_npy) co.input_shape = input_npy->shape;
  const isa::Package pkg = load_model(model, config, co, /*quiet=*/true);
  if (pkg.inputs.size() != 1)
    fail("{}: the model has {} inputs; vacc run feeds one (--input X.npy)", model,
         pkg.inputs.size());
  const isa::PackageTensor &in = pkg.tensors[pkg.inputs[0]];
  const std::string what = fmt::format("input '{}' of {}", in.name, model);
  graph::Tensor x;
  int64_t label = -1;
  if (!a.input.empty()) {
    x = compile::read_input_npy(a.input, in.shape, what);
  } else if (bundled) {
    const graph::Tensor all =
        compile::read_input_npy(bundled_samples(), {256, 1, 28, 28}, "the bundled samples");
    if (a.sample < 0 || a.sample >= 256) fail("--sample {}: choose 0..255", a.sample);
    x = graph::Tensor(graph::DType::kFloat32, in.shape);
    if (x.size() != 28 * 28)
      fail("the bundled sample is one 28x28 image; {} needs {}", what, graph::shape_str(in.shape));
    std::memcpy(x.raw(), all.raw() + a.sample * 28 * 28 * 4, 28 * 28 * 4);
    const NpyArray labels = read_npy(bundled_labels());
    label = labels.as<int64_t>()[a.sample];
  } else {
    fail("{}: give the model's input with --input X.npy ({} {})", model, in.dtype,
         graph::shape_str(in.shape));
  }

  const bool has_accel = pkg.accelerator_steps() > 0;
  runtime::RunProfile profile;
  std::optional<host::ReferenceCheck> check;
  std::vector<runtime::HostTensor> outs;
  std::string where = a.fpga ? "fpga (xrt)" : engine, cpu_name;
  KernelPreparation prep;  // CPU kernels compiled here (a remote run's are the server's)
  if (remote) {
    remote::RunResult r = client->run(pkg, {host_tensor(x)});
    outs = std::move(r.outputs);
    profile = std::move(r.profile);
    where = fmt::format("{} at {}", r.engine, a.remote);
    cpu_name = fmt::format("{} (at {})", r.cpu, a.remote);
    if (outs.size() != pkg.outputs.size())
      fail("{} answered {} outputs; the model has {}", a.remote, outs.size(), pkg.outputs.size());
  } else {
    std::unique_ptr<driver::Device> device;
    driver::DeviceOptions device_options;
    device_options.xclbin = a.xclbin;
    device_options.xrt_device = a.device;
    device_options.timing_only = a.timing_only;
    device_options.build_rtl_model = !a.no_build;
    device_options.cycle_limit = a.cycle_limit;
    if (has_accel) device = open_engine(engine, config, device_options);
    auto host = host_kernels(pkg);
    prep = prepare_kernels(*host);
    cpu_name = host->name();
    runtime::GraphExecutor exec(pkg, *host, device.get(), config);
    if (a.check) {
      check.emplace(pkg);
      check->expect({x});
    }
    outs = exec.run({host_tensor(x)}, &profile,
                    check ? check->observer() : runtime::GraphExecutor::StepObserver());
  }
  if (a.timing_only) {
    // No data was computed: only the profile (cycles per layer) means anything.
    if (a.json) {
      nlohmann::ordered_json j;
      j["model"] = model;
      j["config"] = config.name;
      j["engine"] = "perf (timing only)";
      j["profile"] = profile_json(profile, config);
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("model   {} ({} steps)\nengine  perf, timing only, on config '{}'\n\n", model,
               pkg.steps.size(), config.name);
    fmt::print("{}", profile_table(profile, config));
    fmt::print("\n(timing only: no outputs were computed)\n");
    return;
  }
  const std::vector<int64_t> pred = argmax_rows(outs[0]);

  std::optional<std::vector<runtime::HostTensor>> float_outs;
  double float_seconds = 0;
  KernelPreparation float_prep;
  if (run_float) {
    compile::CompileOptions fo = co;
    fo.quantize = false;
    const isa::Package fp = load_model(model, config, fo, true);
    auto fhost = host_kernels(fp);
    float_prep = prepare_kernels(*fhost);
    runtime::GraphExecutor fexec(fp, *fhost, nullptr, config);
    runtime::RunProfile fprof;
    float_outs = fexec.run({host_tensor(x)}, &fprof);
    float_seconds = fprof.seconds;
  }
  // Which layers int8 costs most on this input (graph/quant_report.h), for a model vacc
  // quantized (one quantized by its author has no float form to compare with).
  std::optional<graph::QuantReport> layers;
  if (run_float && pkg.quantized && !graph::has_qdq(compile::import_model(model, co)))
    layers = compile::quant_report(model, config, co, {{x}}).report;

  auto write_output = [](const std::string &path, const runtime::HostTensor &t) {
    NpyArray o;
    o.dtype = "f4";
    o.shape = t.shape;
    o.data = t.data;
    write_npy(path, o);
  };
  if (!a.output.empty()) write_output(a.output, outs[0]);
  if (!a.float_output.empty()) write_output(a.float_output, (*float_outs)[0]);

  if (a.json) {
    nlohmann::ordered_json j;
    j["model"] = model;
    j["config"] = config.name;
    j["engine"] = has_accel ? where : "none (no accelerator steps)";
    j["cpu"] = cpu_name;
    if (!remote) j["cpu_kernels"] = prep.json();
    j["run_seconds"] = profile.seconds;
    j["profile"] = profile_json(profile, config);
    j["output"] = {{"shape", outs[0].shape}, {"values", floats(outs[0])}};
    j["predicted"] = pred;
    if (bundled) {
      j["class"] = fashion_mnist_class(pred.at(0));
      j["label"] = label;
    }
    if (float_outs) {
      j["float"] = {{"values", floats((*float_outs)[0])},
                    {"predicted", argmax_rows((*float_outs)[0])},
                    {"cosine", cosine(floats(outs[0]), floats((*float_outs)[0]))},
                    {"seconds", float_seconds},
                    {"cpu_kernels", float_prep.json()}};
      if (layers) {
        // The most costly layers, each as quant-report's JSON has it.
        const nlohmann::ordered_json all = quant_report_json({}, *layers)["layers"];
        nlohmann::ordered_json worst = nlohmann::ordered_json::array();
        for (size_t k = 0; worst.size() < 3 && k < layers->ranking.size(); ++k)
          if (!layers->layers[layers->ranking[k]].kept_float)
            worst.push_back(all[layers->ranking[k]]);
        j["float"]["worst_layers"] = worst;
      }
    }
    if (check) {
      j["check"]["compared"] = check->compared();
      j["check"]["mismatches"] = nlohmann::ordered_json::array();
      for (const auto &m : check->mismatches()) j["check"]["mismatches"].push_back(m.describe());
    }
    fmt::print("{}\n", j.dump(2));
    if (check && !check->mismatches().empty()) fail("{}", check->mismatches()[0].describe());
    return;
  }
  fmt::print("model   {} ({} steps, {})\n", model, pkg.steps.size(),
             pkg.quantized ? "int8" : "float");
  fmt::print("engine  {} on config '{}'; CPU steps: {}\n\n",
             has_accel ? where : "none (no accelerator steps)", config.name, cpu_name);
  fmt::print("{}", profile_table(profile, config));
  fmt::print("\ntime    CPU kernels: {}; run {:.3f} s\n",
             remote ? fmt::format("compiled at {}", a.remote) : prep.text(), profile.seconds);
  fmt::print("output  {} {}\n", outs[0].dtype, graph::shape_str(outs[0].shape));
  if (bundled) {
    fmt::print("predicted class {} ({}); label {} ({})\n", pred.at(0),
               fashion_mnist_class(pred.at(0)), label, fashion_mnist_class(label));
  } else {
    std::string list;
    for (size_t i = 0; i < pred.size() && i < 16; ++i)
      list += fmt::format("{}{}", i ? " " : "", pred[i]);
    fmt::print("arg-max per row: {}{}\n", list, pred.size() > 16 ? " ..." : "");
  }
  if (float_outs) {
    const std::vector<float> q = floats(outs[0]), f = floats((*float_outs)[0]);
    double err = 0, ref = 0;
    for (size_t i = 0; i < q.size() && i < f.size(); ++i) {
      err = std::max(err, double(std::abs(q[i] - f[i])));
      ref = std::max(ref, double(std::abs(f[i])));
    }
    const std::vector<int64_t> fpred = argmax_rows((*float_outs)[0]);
    size_t agree = 0;
    for (size_t i = 0; i < pred.size() && i < fpred.size(); ++i) agree += pred[i] == fpred[i];
    fmt::print(
        "float   the float model on the CPU (run {:.3f} s; CPU kernels: {}): max |int8 - float| = "
        "{:.4g} (float max {:.4g}), cosine {:.5f}; arg-max agrees on {} of {}{}\n",
        float_seconds, float_prep.text(), err, ref, cosine(q, f), agree, fpred.size(),
        bundled
            ? fmt::format("; float predicts {} ({})", fpred.at(0), fashion_mnist_class(fpred.at(0)))
            : "");
  }
  if (layers)
    fmt::print(
        "worst   the layers int8 costs most on this input (SQNR of each one's int8 output with "
        "float inputs; vacc quant-report for all): {}\n",
        worst_layers(*layers, 3));
  if (!a.output.empty()) fmt::print("wrote {}\n", a.output);
  if (!a.float_output.empty()) fmt::print("wrote {} (the float model's output)\n", a.float_output);
  if (check) {
    for (const auto &m : check->mismatches()) fmt::print("check   MISMATCH {}\n", m.describe());
    if (!check->mismatches().empty())
      fail("{} of {} step outputs differ from the compiler's reference execution; the first: {}",
           check->mismatches().size(), check->compared(), check->mismatches()[0].describe());
    fmt::print("check   all {} step outputs equal the compiler's reference execution bit for bit\n",
               check->compared());
  }
}

}  // namespace

void add_run_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "run", "Run a model: accelerator steps on a simulator or an FPGA, the rest on the CPU");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("model", a->model,
                  "Model (.onnx, compiled on the fly, or .vpkg from vacc compile); default: the "
                  "bundled Fashion-MNIST CNN on a bundled image");
  cmd->add_flag("--sim", a->sim, "Run accelerator steps on a simulator (--engine)");
  cmd->add_flag("--fpga", a->fpga, "Run accelerator steps on an FPGA board through XRT");
  auto *engine =
      cmd->add_option("--engine", a->engine,
                      "Simulator: rtl (cycle-accurate), perf (fsim plus the RTL's timing) or fsim "
                      "(functional)")
          ->capture_default_str();
  cmd->add_flag("--timing-only", a->timing_only,
                "--engine perf: count cycles without computing the data (no outputs)");
  add_no_build_flag(cmd, &a->no_build);
  auto *config = cmd->add_option("--config", a->config,
                                 "Hardware config (YAML path or bundled name); default: the "
                                 "package's, else default");
  cmd->add_option("--input", a->input, "Input tensor (.npy, float32, the model's input shape)");
  cmd->add_option("--output", a->output, "Write the model's output here (.npy)");
  cmd->add_flag("--json", a->json, "Print JSON instead of text");
  cmd->add_flag("--float", a->float_too, "Also run the float model on the CPU and compare");
  cmd->add_option("--float-output", a->float_output,
                  "Run the float model on the CPU too (as --float) and write its output here "
                  "(.npy), to compare with a framework's");
  cmd->add_flag("--check", a->check,
                "Compare every step's output with the compiler's reference execution");
  cmd->add_option("--cycle-limit", a->cycle_limit,
                  "--sim: stop an accelerator run after N cycles (fsim: N operations, i.e. "
                  "instructions, micro-ops and tiles moved; 0: no limit)")
      ->capture_default_str();
  auto *cpu =
      cmd->add_option("--cpu", a->cpu, "CPU kernels: reference or llvm")->capture_default_str();
  cmd->add_option("--fallback", a->fallback,
                  "Where steps the accelerator does not run go: cpu (--cpu's kernels) or gpu "
                  "(the GPU backend through the CUDA driver; the LLVM CPU backend for operators "
                  "it has no kernel for)")
      ->capture_default_str();
  add_calibration_options(cmd, &a->calibration, ".onnx models: ");
  add_tuning_options(cmd, &a->tuning);
  cmd->add_option("--batch", a->batch, ".onnx models: batch size (default: from --input)");
  cmd->add_option("--sample", a->sample, "Bundled model: which of the 256 bundled images")
      ->capture_default_str();
  cmd->add_option("--xclbin", a->xclbin, "--fpga: the bitstream (default: $VACC_XCLBIN)");
  cmd->add_option("--device", a->device, "--fpga: board index or BDF (sets VACC_XRT_DEVICE)");
  cmd->add_option("--remote", a->remote,
                  "Compile here, run on a `vacc serve` at HOST:PORT (a board); models compile "
                  "for the server's config");
  cmd->add_option("--token-file", a->token_file, "--remote: the server's shared secret");
  cmd->add_option("--tls-ca", a->tls_ca,
                  "--remote: speak TLS, trusting the server certificate (or CA) in this PEM file");
  cmd->add_option("--timeout", a->timeout, "--remote: seconds for the whole run, queueing included")
      ->capture_default_str();
  cmd->callback([a, config, engine, cpu] {
    run(*a, {config->count() > 0, engine->count() > 0, cpu->count() > 0});
  });
}

}  // namespace vacc::cli
