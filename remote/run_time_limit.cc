#include "run_time_limit.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "vacc/driver/registers.h"
#include "vacc/support/error.h"

namespace vacc::remote {

namespace {

using Clock = std::chrono::steady_clock;

class TimeLimitedDevice final : public driver::Device {
 public:
  TimeLimitedDevice(std::unique_ptr<driver::Device> device, double seconds)
      : device_(std::move(device)), seconds_(seconds) {}

  std::string name() const override { return device_->name(); }
  uint64_t allocate(uint64_t bytes) override { return device_->allocate(bytes); }
  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) override {
    device_->write_memory(address, data, bytes);
  }
  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) override {
    device_->read_memory(address, data, bytes);
  }
  uint32_t read_register(uint32_t offset) override { return device_->read_register(offset); }
  driver::Counters counters() override { return device_->counters(); }
  bool record_spans(bool on) override { return device_->record_spans(on); }
  std::vector<driver::InsnSpan> spans() override { return device_->spans(); }

  void write_register(uint32_t offset, uint32_t value) override {
    const bool start = offset == driver::reg::kControl && (value & driver::reg::kControlStart);
    if (start) {
      if (!deadline_)
        deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(seconds_));
      if (Clock::now() >= *deadline_) over("before an accelerator step could start");
    }
    // fsim and perf run the whole step here.
    try {
      device_->write_register(offset, value);
    } catch (const Error &e) {
      if (start && Clock::now() >= *deadline_) over(e.what());
      throw;
    }
  }

  void wait(double timeout_seconds) override {
    const double left = deadline_ ? std::chrono::duration<double>(*deadline_ - Clock::now()).count()
                                  : timeout_seconds;
    try {
      device_->wait(std::max(0.0, std::min(timeout_seconds, left)));
    } catch (const Error &e) {
      if (deadline_ && Clock::now() >= *deadline_) over(e.what());
      throw;
    }
  }

 private:
  [[noreturn]] void over(const std::string &what) {
    fail(
        "the run passed the server's time limit of {} s per run (vacc serve --run-time-limit): "
        "{}",
        seconds_, what);
  }

  std::unique_ptr<driver::Device> device_;
  const double seconds_;
  std::optional<Clock::time_point> deadline_;  // set by the first start
};

}  // namespace

std::unique_ptr<driver::Device> limit_run_time(std::unique_ptr<driver::Device> device,
                                               double seconds) {
  if (seconds <= 0 || !device) return device;
  return std::make_unique<TimeLimitedDevice>(std::move(device), seconds);
}

}  // namespace vacc::remote
