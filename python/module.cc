// PYBIND11_MODULE for vacc._vacc: vacc.Error (vacc::Error, a diagnostic with the command's
// message), the version, and each part's bindings.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "vacc/support/error.h"

namespace py = pybind11;

namespace vacc::python {

py::object from_json(const std::string &json_text) {
  return py::module_::import("json").attr("loads")(json_text);
}

}  // namespace vacc::python

PYBIND11_MODULE(_vacc, m) {
  m.doc() = "vacc: compile, run and sweep deep-learning accelerators (the vacc command's library)";
  m.attr("__version__") = VACC_VERSION;
  // Every diagnostic the command prints as "error: MESSAGE" is raised as vacc.Error(MESSAGE).
  py::register_exception<vacc::Error>(m, "Error", PyExc_RuntimeError);
  vacc::python::bind_config(m);
  vacc::python::bind_package(m);
  vacc::python::bind_sweep(m);
  vacc::python::bind_tune(m);
}
