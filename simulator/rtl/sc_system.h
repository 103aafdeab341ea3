// The SystemC side of the cycle-accurate simulator: simulated time, a host processor and the
// thread that owns the Verilated model. This header does not include SystemC (its global
// `using namespace` stays inside sc_system.cc).
//
// Two SC_THREADs in one module, elaborated once per process:
//  - the host thread runs host jobs (functions using HostPort: register writes and reads as
//    AXI4-Lite transactions, waits in clock cycles), one per call of ScSystem::run_host();
//  - the core thread clocks the current RtlModel in batches of `quantum` cycles (the model,
//    its AXI4 memory and the AXI4-Lite pins are plain C++ inside that batch) and then
//    advances SystemC time by the cycles it ran (loosely-timed: the model runs at most one
//    quantum ahead of SystemC time). A host transaction starts at the next batch boundary
//    and ends its batch early, so the host sees it complete at the right cycle.
// Models are plain C++ objects, so any number of configs can be simulated one after the
// other in the same process although SystemC elaborates only once.
#pragma once

#include <cstdint>
#include <functional>

#include "rtl_model.h"

namespace vacc::sim {

// What a host job can do; valid only inside the job.
class HostPort {
 public:
  virtual ~HostPort() = default;
  virtual void write(uint32_t addr, uint32_t data) = 0;
  virtual uint32_t read(uint32_t addr) = 0;
  virtual void wait_cycles(uint64_t cycles) = 0;
  virtual uint64_t cycle() const = 0;  // the model's cycle count
};

class ScSystem {
 public:
  // The process-wide system (created and elaborated on first use).
  static ScSystem &get();

  // Runs `job` on the host thread against `model` clocked at `period_ns`, in `quantum`-cycle
  // batches; returns when the job returns. Exceptions thrown by the job are rethrown here.
  virtual void run_host(RtlModel &model, double period_ns, uint64_t quantum,
                        const std::function<void(HostPort &)> &job) = 0;
  // Simulated SystemC time in nanoseconds.
  virtual double now_ns() const = 0;

 protected:
  virtual ~ScSystem() = default;
};

}  // namespace vacc::sim
