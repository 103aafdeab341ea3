#include "sc_system.h"

#include <systemc.h>

#include <cstdlib>
#include <exception>

#include "vacc/support/error.h"

// libsystemc's own main() refers to sc_main; vacc has its own entry points and never calls it.
int sc_main(int, char **) {
  std::abort();
}

namespace vacc::sim {
namespace {

// The core thread evaluates the Verilated model, whose functions keep every wide temporary of
// a process on the stack: their frames grow with the config (a 4x16x16 core with packed DSPs
// has one of 510 KiB), past SystemC's default coroutine stack of 256 KiB, which then overflows
// into its guard page (SIGSEGV). Give it the stack of a main thread and more; the pages are
// only committed as they are touched.
constexpr size_t kCoreStackBytes = size_t{64} << 20;

SC_MODULE(SystemTop), public HostPort {
  SC_CTOR(SystemTop) {
    SC_THREAD(host_thread);
    SC_THREAD(core_thread);
    set_stack_size(kCoreStackBytes);
  }

  // ---- state shared by the two threads and the caller ----
  RtlModel *model = nullptr;
  sc_time period{10, SC_NS};
  uint64_t quantum = 256;
  const std::function<void(HostPort &)> *job = nullptr;
  std::exception_ptr job_error;
  sc_event job_event;
  LiteTransaction *txn = nullptr;  // posted by the host, started by the core
  bool txn_started = false;
  sc_event txn_done;

  // ---- HostPort, used from the host thread ----
  void write(uint32_t addr, uint32_t data) override {
    LiteTransaction t;
    t.write = true;
    t.addr = addr;
    t.data = data;
    transact(t);
  }
  uint32_t read(uint32_t addr) override {
    LiteTransaction t;
    t.addr = addr;
    transact(t);
    return t.data;
  }
  void wait_cycles(uint64_t cycles) override { wait(period * static_cast<double>(cycles)); }
  uint64_t cycle() const override { return model->cycle(); }

  void transact(LiteTransaction &t) {
    VACC_CHECK(txn == nullptr);
    txn = &t;
    txn_started = false;
    while (!t.done) wait(txn_done);
  }

  void host_thread() {
    for (;;) {
      while (job == nullptr) wait(job_event);
      try {
        (*job)(*this);
      } catch (...) {
        job_error = std::current_exception();
      }
      job = nullptr;
      sc_pause();
    }
  }

  void core_thread() {
    for (;;) {
      if (model == nullptr) {
        wait(job_event);
        continue;
      }
      if (txn != nullptr && !txn_started) {
        model->begin_transaction(txn);
        txn_started = true;
      }
      const uint64_t ran = model->run(quantum);
      wait(period * static_cast<double>(ran));
      if (txn != nullptr && txn->done) {
        txn = nullptr;
        txn_done.notify(SC_ZERO_TIME);
      }
    }
  }
};

class ScSystemImpl final : public ScSystem {
 public:
  ScSystemImpl() {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    top_ = new SystemTop("vacc_rtl_system");
  }

  void run_host(RtlModel &model, double period_ns, uint64_t quantum,
                const std::function<void(HostPort &)> &job) override {
    top_->model = &model;
    top_->period = sc_time(period_ns, SC_NS);
    top_->quantum = quantum;
    top_->job = &job;
    top_->job_error = nullptr;
    if (started_) top_->job_event.notify(SC_ZERO_TIME);
    started_ = true;
    sc_start();
    VACC_CHECK(top_->job == nullptr) << "SystemC returned before the host job finished";
    // The core may have started a batch; it is parked in wait() and resumes with the next job.
    top_->model = nullptr;
    if (top_->job_error) std::rethrow_exception(top_->job_error);
  }

  double now_ns() const override { return sc_time_stamp().to_seconds() * 1e9; }

 private:
  SystemTop *top_;  // owned by the SystemC kernel for the life of the process
  bool started_ = false;
};

}  // namespace

ScSystem &ScSystem::get() {
  static ScSystemImpl *system = new ScSystemImpl();
  return *system;
}

}  // namespace vacc::sim
