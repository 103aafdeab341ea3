// vacc.tune: a `vacc tune` run (cli/tune_session.h, the command's own) searching a model's
// accelerator schedules, its trials measured in worker processes of the `vacc` command built
// beside this module when jobs > 1; the summary comes back as Python objects.
#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "config.h"
#include "vacc/cli/tune_session.h"

namespace py = pybind11;

namespace vacc::python {

void bind_tune(py::module_ &m) {
  m.def(
      "_tune",
      [](const std::string &model, const std::string &bench, const Config &config,
         const std::string &log, int64_t trials, double time_budget, int jobs,
         const std::string &strategy, uint64_t seed, bool tails, int verify, bool update_db,
         const std::string &calibration, const std::string &calibrate_method, double percentile,
         int64_t batch, bool verbose) {
        cli::TuneRequest r;
        r.model = model;
        r.bench = bench;
        r.log = log;
        r.options.trials = trials;
        r.options.time_budget = time_budget;
        r.options.strategy = strategy;
        r.options.seed = seed;
        r.options.tails = tails;
        r.jobs = jobs;
        r.verify = verify;
        r.update_db = update_db;
        r.calibration.npy = calibration;
        r.calibration.method = calibrate_method;
        r.calibration.percentile = percentile;
        r.batch = batch;
        r.worker_executable = VACC_EXECUTABLE;
        cli::TuneSummary s;
        {
          py::gil_scoped_release release;
          int64_t total = 0;
          s = cli::run_tune_session(
              r, config.config,
              [&](const std::string &heading, int64_t n) {
                total = n;
                if (verbose) fmt::print("{}\n", heading);
              },
              [&](const tune::TuneReport &now) {
                if (verbose) fmt::print("{}\n", cli::tune_progress_line(now, total));
              });
        }
        py::dict d;
        d["heading"] = s.heading;
        d["summary"] = from_json(s.json.dump());
        d["text"] = s.text;
        return d;
      },
      py::arg("model"), py::arg("bench"), py::arg("config"), py::arg("log"), py::arg("trials"),
      py::arg("time_budget"), py::arg("jobs"), py::arg("strategy"), py::arg("seed"),
      py::arg("tails"), py::arg("verify"), py::arg("update_db"), py::arg("calibration"),
      py::arg("calibrate_method"), py::arg("percentile"), py::arg("batch"), py::arg("verbose"));
}

}  // namespace vacc::python
