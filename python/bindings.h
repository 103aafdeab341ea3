// The Python module vacc._vacc (pybind11): each file binds one part of the library the `vacc`
// command uses; nothing here decides what the command would decide otherwise.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace vacc::python {

void bind_config(pybind11::module_ &m);   // config.cc: vacc.Config
void bind_package(pybind11::module_ &m);  // package.cc: compile, vacc.Package, Package.run
void bind_sweep(pybind11::module_ &m);    // sweep.cc: vacc.sweep
void bind_tune(pybind11::module_ &m);     // tune.cc: vacc.tune

// A JSON document (as the command's --json prints it) as Python objects: dict, list, str...
pybind11::object from_json(const std::string &json_text);

}  // namespace vacc::python
