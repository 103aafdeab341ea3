// A `vacc tune` run as one library call, for the command and the Python module alike (vacc.tune):
// the argument checks, the tasks (a model's accelerator workloads or the ResNet-18 conv layers),
// the search (tune/tuner.h; worker processes with jobs > 1), --verify on the RTL, the tuning
// database update and the summary the command prints.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "vacc/cli/calibration_options.h"
#include "vacc/isa/config.h"
#include "vacc/tune/tuner.h"

namespace vacc::sweep {
class RankBatches;  // mpi_transport.h
}  // namespace vacc::sweep

namespace vacc::cli {

struct TuneRequest {
  std::string model;  // an .onnx path, or
  std::string bench;  // "resnet18-convs"
  std::string log;    // the tuning log (JSON lines; resumed when it exists)
  CalibrationArgs calibration;
  int64_t batch = 1;
  tune::TuneOptions options;  // its log_path is `log`
  int jobs = 1;
  int verify = 0;
  bool update_db = true;
  std::string worker_executable;  // the vacc command the workers run ("" = this executable)
  sweep::RankBatches *ranks = nullptr;  // rank 0 under mpirun: the other ranks measure too
};

struct TuneSummary {
  std::string heading;          // "tuning N workloads ..." (printed before the search)
  nlohmann::ordered_json json;  // what `vacc tune --json` prints
  std::string text;             // the table and totals the command prints after the search
};

// Where the worker processes of a tune writing `log` keep their logs.
inline std::string tune_worker_log_dir(const std::string &log) { return log + ".workers"; }

// One line: a bar, trials, rate, and each task's best so far against its heuristic.
std::string tune_progress_line(const tune::TuneReport &r, int64_t total);

// Runs the tuning; `started` gets the heading and the total trial budget once the tasks are
// known, `progress` the report after every round. Errors are vacc::Error with the command's
// messages.
TuneSummary run_tune_session(
    const TuneRequest &request, const isa::HwConfig &config,
    const std::function<void(const std::string &heading, int64_t total)> &started = {},
    const tune::TuneProgress &progress = {});

}  // namespace vacc::cli
