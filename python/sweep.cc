// vacc.sweep: an architecture sweep (sweep::run_sweep, as `vacc sweep`) into its resumable
// results database, its tasks run by worker processes of the `vacc` command built beside this
// module; the result rows come back as Python objects.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "vacc/support/error.h"
#include "vacc/sweep/runner.h"

namespace py = pybind11;

namespace vacc::python {

void bind_sweep(py::module_ &m) {
  m.def(
      "_sweep",
      [](const std::string &spec_path, const std::string &spec_text, const std::string &out_dir,
         int jobs, int verify, int synth, const std::string &energy, const std::string &area,
         bool retry_failed, bool report, bool json) {
        sweep::SweepOptions o;
        o.spec_path = spec_path;
        o.spec_text = spec_text;
        o.out_dir = out_dir;
        o.jobs = jobs;
        o.verify = verify;
        o.synth = synth;
        o.energy_table = energy;
        o.area_table = area;
        o.retry_failed = retry_failed;
        o.report = report;
        o.json = json;
        o.worker_executable = VACC_EXECUTABLE;
        sweep::SweepSummary summary;
        int rc = 0;
        {
          py::gil_scoped_release release;
          rc = sweep::run_sweep(o, &summary);
        }
        if (rc) fail("the sweep stopped with status {}", rc);
        py::dict d;
        d["summary"] = from_json(summary.json.dump());
        d["text"] = summary.text;
        d["results"] = from_json(summary.results.dump());
        return d;
      },
      py::arg("spec_path"), py::arg("spec_text"), py::arg("out_dir"), py::arg("jobs"),
      py::arg("verify"), py::arg("synth"), py::arg("energy"), py::arg("area"),
      py::arg("retry_failed"), py::arg("report"), py::arg("json"));
}

}  // namespace vacc::python
