#include "vacc/sweep/tune_pool.h"

#include <deque>

#include "vacc/lower/schedule_space.h"
#include "vacc/sweep/mpi_transport.h"
#include "vacc/support/error.h"
#include "vacc/tune/measure.h"

namespace vacc::sweep {
namespace {

// The batch's requests as tasks, their trials back in request order.
class TrialSource : public TaskSource {
 public:
  TrialSource(const isa::HwConfig &config, const std::vector<tune::Measurer::Request> &requests)
      : config_(config), requests_(requests), trials_(requests.size()) {
    for (size_t i = 0; i < requests.size(); ++i) pending_.push_back(i);
  }
  std::optional<Task> next() override {
    if (pending_.empty()) return std::nullopt;
    const size_t i = pending_.front();
    pending_.pop_front();
    Task t;
    t.key = {static_cast<int64_t>(i), "", "tune-trial"};
    t.config_name = config_.name;
    t.workload = tune::measure_request(config_, *requests_[i].first, requests_[i].second);
    return t;
  }
  void done(const TaskOutcome &o) override {
    const size_t i = static_cast<size_t>(o.key.point);
    VACC_CHECK(i < trials_.size()) << "an outcome for request " << i;
    tuning::Trial &t = trials_[i];
    if (o.ok) {
      t = tuning::trial_from_json(o.result, "tuning worker");
    } else {
      // The worker failed or died: the candidate's trial says so.
      t.hw = tuning::hw_key(config_);
      t.workload = lower::workload_key(*requests_[i].first);
      t.schedule = requests_[i].second;
      t.error = o.message.empty() ? "the worker failed" : o.message;
    }
    t.seconds = o.seconds;
  }
  bool exhausted() override { return pending_.empty(); }
  std::vector<tuning::Trial> take() { return std::move(trials_); }

 private:
  const isa::HwConfig &config_;
  const std::vector<tune::Measurer::Request> &requests_;
  std::vector<tuning::Trial> trials_;
  std::deque<size_t> pending_;
};

}  // namespace

PoolMeasurer::PoolMeasurer(int workers, const std::string &log_dir, const std::string &executable,
                           RankBatches *ranks)
    : pool_(workers, executable.empty() ? self_executable() : executable, log_dir, "tune-"),
      ranks_(ranks) {}

std::vector<tuning::Trial> PoolMeasurer::measure(const isa::HwConfig &config,
                                                 const std::vector<Request> &requests) {
  TrialSource source(config, requests);
  if (ranks_)
    pool_.run(*ranks_->serve(source));
  else
    pool_.run(source);
  return source.take();
}

}  // namespace vacc::sweep
