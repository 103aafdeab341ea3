// vacc.compile and vacc.Package: the compiler driver (compile::compile_model, as `vacc
// compile`) and a package run through the runtime's graph executor (as `vacc run`): the same
// checks of inputs, CPU kernels, engines and per-layer profile as the command, with the GIL
// released while compiling and while a simulator runs.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "bindings.h"
#include "config.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/cli/tuning_options.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/graph/tensor.h"
#include "vacc/isa/package.h"
#include "vacc/remote/client.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace py = pybind11;

namespace vacc::python {

namespace {

// The engine, CPU kernels and executor of a package's last run, kept for the next run with
// the same settings (so a loop of runs compiles kernels and uploads weights once).
struct Runner {
  std::string key;
  isa::HwConfig config;
  std::unique_ptr<runtime::HostKernels> host;
  std::unique_ptr<driver::Device> device;
  std::unique_ptr<runtime::GraphExecutor> exec;
  cli::KernelPreparation prep;
};

struct Package {
  std::shared_ptr<const isa::Package> package;
  std::optional<isa::HwConfig> config;  // what it was compiled for, when compiled here
  std::string source;                   // the file or model it came from, for messages
  std::optional<compile::CompiledModel> compiled;  // stages etc., when compiled here (no package)
  std::mutex mutex;                     // one run at a time (the GIL is released meanwhile)
  std::unique_ptr<Runner> runner;
};

// NumPy's dtype code of an array ("f4", "i8", ...), as in a .npy header.
std::string npy_code(const py::array &a) {
  return fmt::format("{}{}", a.dtype().kind(), a.dtype().itemsize());
}

py::dtype numpy_dtype(const std::string &package_dtype) {
  if (package_dtype == "f32") return py::dtype::of<float>();
  if (package_dtype == "f64") return py::dtype::of<double>();
  if (package_dtype == "i8") return py::dtype::of<int8_t>();
  if (package_dtype == "u8") return py::dtype::of<uint8_t>();
  if (package_dtype == "i16") return py::dtype::of<int16_t>();
  if (package_dtype == "i32") return py::dtype::of<int32_t>();
  if (package_dtype == "i64") return py::dtype::of<int64_t>();
  if (package_dtype == "bool") return py::dtype::of<bool>();
  fail("an output of dtype {} has no NumPy equivalent here", package_dtype);
}

// A graph output as a NumPy array that owns the runtime's buffer (no copy).
py::array to_numpy(runtime::HostTensor &&t) {
  auto *data = new std::vector<uint8_t>(std::move(t.data));
  py::capsule owner(data, [](void *p) { delete static_cast<std::vector<uint8_t> *>(p); });
  return py::array(numpy_dtype(t.dtype), t.shape, {}, data->data(), owner);
}

// The model's inputs from NumPy arrays, refused as `vacc run --input` refuses a .npy: the shape
// (up to dimensions of 1) and float32 (float64 converted), named "inputs[i]".
std::vector<runtime::HostTensor> host_inputs(const Package &p, const py::object &inputs) {
  std::vector<py::object> arrays;
  if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
    for (const auto &x : inputs) arrays.push_back(py::reinterpret_borrow<py::object>(x));
  } else {
    arrays.push_back(inputs);
  }
  const isa::Package &pkg = *p.package;
  if (arrays.size() != pkg.inputs.size())
    fail("{}: the model has {} inputs; {} given", p.source, pkg.inputs.size(), arrays.size());
  std::vector<runtime::HostTensor> out;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const isa::PackageTensor &in = pkg.tensors[pkg.inputs[i]];
    const py::array a = py::array::ensure(arrays[i]);
    if (!a) fail("inputs[{}]: not an array (give a NumPy array)", i);
    const graph::Shape shape(a.shape(), a.shape() + a.ndim());
    compile::check_input_array(fmt::format("inputs[{}]", i), npy_code(a), shape, in.shape,
                               fmt::format("input '{}' of {}", in.name, p.source));
    runtime::HostTensor h;
    h.dtype = "f32";
    h.shape = in.shape;
    const auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    const auto *bytes = reinterpret_cast<const uint8_t *>(f.data());
    h.data.assign(bytes, bytes + f.size() * sizeof(float));
    out.push_back(std::move(h));
  }
  return out;
}

struct RunOptions {
  std::string engine = "fsim";
  std::optional<Config> config;
  std::string cpu = "reference", fallback = "cpu";
  bool timing_only = false, no_build = false;
  uint64_t cycle_limit = sim::kDefaultCycleLimit;
  std::string xclbin, device, token_file;
  double timeout = 600;
};

struct RunOutcome {
  std::vector<runtime::HostTensor> outputs;
  runtime::RunProfile profile;
  isa::HwConfig config;
  std::string engine, cpu;
  cli::KernelPreparation prep;
};

// The config a package runs on: the one given, else the one it was compiled for here, else its
// config by name (as `vacc run PKG.vpkg` without --config), checked against the package.
isa::HwConfig run_config(const Package &p, const RunOptions &o) {
  isa::HwConfig c = o.config ? o.config->config
                    : p.config ? *p.config
                               : cli::load_named_config(p.package->config_name);
  p.package->check_config(c, p.source);
  return c;
}

// One run (the GIL released by the caller). `engine` HOST:PORT runs on a `vacc serve`.
RunOutcome run_package(Package &p, std::vector<runtime::HostTensor> inputs, const RunOptions &o) {
  RunOutcome r;
  const bool remote = o.engine.find(':') != std::string::npos;
  if (remote) {
    remote::ClientOptions copt;
    copt.address = o.engine;
    if (!o.token_file.empty()) copt.token = remote::read_token_file(o.token_file);
    copt.timeout_seconds = o.timeout;
    remote::Client client(copt);
    remote::RunResult rr = client.run(*p.package, inputs);
    r.outputs = std::move(rr.outputs);
    r.profile = std::move(rr.profile);
    r.config = o.config ? o.config->config
               : p.config ? *p.config
                          : cli::load_named_config(p.package->config_name);
    r.engine = fmt::format("{} at {}", rr.engine, o.engine);
    r.cpu = fmt::format("{} (at {})", rr.cpu, o.engine);
    return r;
  }
  if (o.timing_only && o.engine != "perf")
    fail("--timing-only needs --sim --engine perf (engine is '{}')", o.engine);
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", o.engine, o.cpu, o.fallback, o.timing_only,
                  o.no_build, o.cycle_limit, o.xclbin, o.device,
                  o.config ? o.config->yaml : std::string());
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.runner || p.runner->key != key) {
    p.runner.reset();
    auto runner = std::make_unique<Runner>();
    runner->key = key;
    runner->config = run_config(p, o);
    if (p.package->accelerator_steps() > 0) {
      driver::DeviceOptions d;
      d.xclbin = o.xclbin;
      d.xrt_device = o.device;
      d.timing_only = o.timing_only;
      d.build_rtl_model = !o.no_build;
      d.cycle_limit = o.cycle_limit;
      runner->device = cli::open_engine(o.engine, runner->config, d);
    }
    runner->host = cli::make_host_kernels(o.cpu, *p.package, o.fallback);
    runner->prep = cli::prepare_kernels(*runner->host);
    runner->exec = std::make_unique<runtime::GraphExecutor>(*p.package, *runner->host,
                                                            runner->device.get(), runner->config);
    p.runner = std::move(runner);
  }
  Runner &run = *p.runner;
  r.outputs = run.exec->run(inputs, &r.profile);
  r.config = run.config;
  r.engine = run.device ? o.engine : "none (no accelerator steps)";
  r.cpu = run.host->name();
  r.prep = run.prep;
  return r;
}

py::dict run(Package &p, const py::object &inputs, const RunOptions &o) {
  std::vector<runtime::HostTensor> in = host_inputs(p, inputs);
  RunOutcome r;
  {
    py::gil_scoped_release release;
    r = run_package(p, std::move(in), o);
  }
  py::list outputs;
  if (!o.timing_only)
    for (auto &t : r.outputs) outputs.append(to_numpy(std::move(t)));
  py::dict d;
  d["outputs"] = outputs;
  d["profile"] = from_json(cli::profile_json(r.profile, r.config).dump());
  d["table"] = cli::profile_table(r.profile, r.config);
  d["engine"] = r.engine;
  d["cpu"] = r.cpu;
  d["cpu_kernels"] = from_json(r.prep.json().dump());
  d["seconds"] = r.profile.seconds;
  return d;
}

struct CompileArgs {
  Config config;
  cli::CalibrationArgs calibration;
  py::object calibration_data;  // a NumPy array, or None
  bool float_model = false, verbose = false;
  int64_t batch = 1;
  std::vector<int64_t> input_shape;
  int vthreads = 2;
  std::string dump_ir;
  cli::TuningArgs tuning;
};

std::shared_ptr<Package> compile(const std::string &path_or_bytes, bool is_bytes,
                                 const std::string &source, const CompileArgs &a) {
  compile::CompileOptions o;
  o.batch = a.batch;
  o.input_shape = a.input_shape;
  o.quantize = !a.float_model;
  cli::apply_calibration_options(a.calibration, &o);
  cli::apply_tuning_options(a.tuning, &o);
  if (!a.calibration_data.is_none()) {
    const auto f = py::array::ensure(a.calibration_data, py::array::c_style);
    if (!f) fail("calibration: give a NumPy array of sample inputs, or a .npy path");
    NpyArray data;
    data.dtype = npy_code(f);
    data.shape.assign(f.shape(), f.shape() + f.ndim());
    const auto *bytes = static_cast<const uint8_t *>(f.data());
    data.data.assign(bytes, bytes + f.nbytes());
    o.calibration_data = std::move(data);
  }
  o.dump_dir = a.dump_ir;
  o.vthreads = a.vthreads;
  if (a.verbose) o.log = [](const std::string &line) { fmt::print("{}\n", line); };
  auto p = std::make_shared<Package>();
  {
    py::gil_scoped_release release;
    if (!is_bytes) cli::check_compile_args(path_or_bytes, a.batch, a.vthreads);
    compile::CompiledModel m =
        is_bytes ? compile::compile_model_bytes(path_or_bytes, source, a.config.config, o)
                 : compile::compile_model(path_or_bytes, a.config.config, o);
    p->package = std::make_shared<const isa::Package>(std::move(m.package));
    m.package = {};
    p->compiled = std::move(m);
  }
  p->config = a.config.config;
  p->source = source;
  return p;
}

template <typename Ids>
py::list tensors(const isa::Package &p, const Ids &ids) {
  py::list l;
  for (const auto i : ids) {
    const isa::PackageTensor &t = p.tensors[i];
    py::dict d;
    d["name"] = t.name;
    d["dtype"] = t.dtype;
    d["shape"] = py::tuple(py::cast(t.shape));
    l.append(d);
  }
  return l;
}

}  // namespace

void bind_package(py::module_ &m) {
  py::class_<Package, std::shared_ptr<Package>>(m, "Package", "A compiled model (.vpkg)")
      .def_static(
          "load",
          [](const std::string &path) {
            auto p = std::make_shared<Package>();
            {
              py::gil_scoped_release release;
              if (!path_exists(path)) fail("{}: no such package file", path);
              p->package = std::make_shared<const isa::Package>(isa::load_package(path));
            }
            p->source = path;
            return p;
          },
          py::arg("path"), "Loads a package written by Package.save or `vacc compile`")
      .def(
          "save", [](const Package &p, const std::string &path) { isa::save_package(*p.package, path); },
          py::arg("path"))
      .def_property_readonly("model", [](const Package &p) { return p.package->model; })
      .def_property_readonly("config_name", [](const Package &p) { return p.package->config_name; })
      .def_property_readonly("quantized", [](const Package &p) { return p.package->quantized; })
      .def_property_readonly("source", [](const Package &p) { return p.source; })
      .def_property_readonly("steps", [](const Package &p) { return p.package->steps.size(); })
      .def_property_readonly("accelerator_steps",
                             [](const Package &p) { return p.package->accelerator_steps(); })
      .def_property_readonly("arena_bytes", [](const Package &p) { return p.package->arena_bytes; })
      .def_property_readonly("inputs", [](const Package &p) { return tensors(*p.package, p.package->inputs); })
      .def_property_readonly("outputs", [](const Package &p) { return tensors(*p.package, p.package->outputs); })
      .def_property_readonly("compile_stats",
                             [](const Package &p) -> py::object {
                               if (!p.compiled) return py::none();
                               py::dict d;
                               py::list stages;
                               for (const auto &s : p.compiled->stages) {
                                 py::dict st;
                                 st["name"] = s.name;
                                 st["ms"] = s.milliseconds;
                                 st["summary"] = s.summary;
                                 stages.append(st);
                               }
                               d["stages"] = stages;
                               d["seconds"] = p.compiled->seconds;
                               d["calibration"] = p.compiled->calibration_source;
                               return d;
                             })
      .def(
          "_run",
          [](Package &p, const py::object &inputs, const std::string &engine,
             std::optional<Config> config, const std::string &cpu, const std::string &fallback,
             bool timing_only, bool no_build, uint64_t cycle_limit, const std::string &xclbin,
             const std::string &device, const std::string &token_file, double timeout) {
            RunOptions o;
            o.engine = engine;
            o.config = std::move(config);
            o.cpu = cpu;
            o.fallback = fallback;
            o.timing_only = timing_only;
            o.no_build = no_build;
            o.cycle_limit = cycle_limit;
            o.xclbin = xclbin;
            o.device = device;
            o.token_file = token_file;
            o.timeout = timeout;
            return run(p, inputs, o);
          },
          py::arg("inputs"), py::arg("engine") = "fsim", py::arg("config") = py::none(),
          py::arg("cpu") = "reference", py::arg("fallback") = "cpu",
          py::arg("timing_only") = false, py::arg("no_build") = false,
          py::arg("cycle_limit") = sim::kDefaultCycleLimit, py::arg("xclbin") = "",
          py::arg("device") = "", py::arg("token_file") = "", py::arg("timeout") = 600.0);

  m.def(
      "_compile",
      [](const py::object &model, bool is_bytes, const std::string &source, const Config &config,
         const py::object &calibration, const std::string &calibrate_method, double percentile,
         bool float_model, int64_t batch, std::vector<int64_t> input_shape, int vthreads,
         const std::string &dump_ir, bool verbose, std::vector<std::string> tuning_logs,
         bool tuning_db, bool program_per_layer, bool bias_correction, bool align_scales,
         bool equalize, bool unsigned_activations, const std::string &weight_scales,
         const std::string &rounding, const std::string &rounding_seconds,
         std::vector<std::string> keep_float, const std::string &max_layer_loss) {
        CompileArgs a{config};
        if (py::isinstance<py::str>(calibration)) {
          a.calibration.npy = calibration.cast<std::string>();
          a.calibration_data = py::none();
        } else {
          a.calibration_data = calibration;
        }
        a.calibration.method = calibrate_method;
        a.calibration.percentile = percentile;
        a.calibration.bias_correction = bias_correction ? "on" : "off";
        a.calibration.align_scales = align_scales ? "on" : "off";
        a.calibration.equalize = equalize ? "on" : "off";
        a.calibration.unsigned_activations = unsigned_activations ? "on" : "off";
        a.calibration.weight_scales = weight_scales;
        a.calibration.rounding = rounding;
        a.calibration.rounding_seconds = rounding_seconds;
        a.calibration.keep_float = std::move(keep_float);
        a.calibration.max_layer_loss = max_layer_loss;
        a.float_model = float_model;
        a.batch = batch;
        a.input_shape = std::move(input_shape);
        a.vthreads = vthreads;
        a.dump_ir = dump_ir;
        a.verbose = verbose;
        a.tuning.logs = std::move(tuning_logs);
        a.tuning.no_db = !tuning_db;
        a.tuning.program_per_layer = program_per_layer;
        const std::string text =
            is_bytes ? std::string(model.cast<py::bytes>()) : model.cast<std::string>();
        return compile(text, is_bytes, is_bytes ? source : text, a);
      },
      py::arg("model"), py::arg("is_bytes"), py::arg("source"), py::arg("config"),
      py::arg("calibration"), py::arg("calibrate_method"), py::arg("percentile"),
      py::arg("float_model"), py::arg("batch"), py::arg("input_shape"), py::arg("vthreads"),
      py::arg("dump_ir"), py::arg("verbose"), py::arg("tuning_logs"), py::arg("tuning_db"),
      py::arg("program_per_layer"), py::arg("bias_correction"), py::arg("align_scales"),
      py::arg("equalize"), py::arg("unsigned_activations"), py::arg("weight_scales"),
      py::arg("rounding"), py::arg("rounding_seconds"), py::arg("keep_float"),
      py::arg("max_layer_loss"));
}

}  // namespace vacc::python
