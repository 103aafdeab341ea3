// vacc.Config: a hardware config loaded by bundled name or path as `--config` loads it
// (cli::load_named_config), derived with changed keys (isa::set_config_keys, the config file
// reader's rules), checked by the same rules; errors are vacc.Error with the command's message.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "config.h"
#include "vacc/cli/output.h"
#include "vacc/isa/config.h"
#include "vacc/support/file.h"

namespace py = pybind11;

namespace vacc::python {

Config Config::load(const std::string &name_or_path) {
  Config c;
  c.config = cli::load_named_config(name_or_path);
  c.yaml = read_file(isa::resolve_config_path(name_or_path), "config file");
  return c;
}

Config Config::parse(const std::string &yaml, const std::string &source) {
  return {isa::parse_config(yaml, source), yaml};
}

namespace {

// A Python value as the YAML scalar a config file would hold.
std::string scalar(const py::handle &v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  return py::str(v).cast<std::string>();
}

Config derive(const Config &base, const py::dict &changes, const py::kwargs &more) {
  // The derived config keeps the base's name unless a change names it.
  std::vector<std::pair<std::string, std::string>> values = {{"name", base.config.name}};
  std::string what;
  for (const py::dict *d : {&changes, static_cast<const py::dict *>(&more)})
    for (const auto &[k, v] : *d) {
      values.emplace_back(py::str(k).cast<std::string>(), scalar(v));
      what += fmt::format("{}{}={}", what.empty() ? "" : ", ", values.back().first,
                          values.back().second);
    }
  const std::string source =
      fmt::format("{} with {}", base.config.source.empty() ? base.config.name : base.config.source,
                  what.empty() ? "no change" : what);
  return Config::parse(isa::set_config_keys(base.yaml, values, source), source);
}

}  // namespace

void bind_config(py::module_ &m) {
  py::class_<Config>(m, "Config",
                     "A hardware config (configs/*.yaml): Config('default') or Config(path)")
      .def(py::init([](const std::string &name_or_path) { return Config::load(name_or_path); }),
           py::arg("name_or_path") = "default")
      .def_static("from_yaml", &Config::parse, py::arg("yaml"), py::arg("source") = "<yaml>",
                  "A config from YAML text, read and checked as a config file")
      .def("derive", &derive, py::arg("changes") = py::dict(),
           "A config with keys changed, e.g. derive({'gemm.block_in': 32}, clock_mhz=200); "
           "checked as a config file would be")
      .def(
          "check", [](const Config &c) { isa::validate_config(c.config); },
          "Checks the config's rules (vacc.Error naming the key and the rule)")
      .def_property_readonly("name", [](const Config &c) { return c.config.name; })
      .def_property_readonly("source", [](const Config &c) { return c.config.source; })
      .def_property_readonly("yaml", [](const Config &c) { return c.yaml; })
      .def_property_readonly("batch", [](const Config &c) { return c.config.batch; })
      .def_property_readonly("block_in", [](const Config &c) { return c.config.block_in; })
      .def_property_readonly("block_out", [](const Config &c) { return c.config.block_out; })
      .def_property_readonly("clock_mhz", [](const Config &c) { return c.config.clock_mhz; })
      .def_property_readonly("peak_macs_per_cycle",
                             [](const Config &c) { return c.config.peak_macs_per_cycle(); })
      .def_property_readonly("peak_gops", [](const Config &c) { return c.config.peak_gops(); })
      .def_static(
          "keys",
          [] {
            std::vector<std::string> keys;
            for (const auto &k : isa::config_keys()) keys.push_back(k.path);
            return keys;
          },
          "Every key a config file accepts")
      .def("__repr__", [](const Config &c) {
        return fmt::format("<vacc.Config '{}' {}x{}x{} at {} MHz>", c.config.name, c.config.batch,
                           c.config.block_in, c.config.block_out, c.config.clock_mhz);
      });
}

}  // namespace vacc::python
