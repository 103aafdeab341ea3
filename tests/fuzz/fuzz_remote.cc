// The remote-run messages (`vacc serve`, `vacc run --remote`): the bytes parsed as a run
// request, checked as the server does (protocol version, package against the default config,
// each input's dtype and size) and, when admitted, executed as the server executes it (fsim,
// the reference kernels, an operation limit); and as a run reply decoded as the client does. The
// embedded package's checksum is recomputed first, as in fuzz_package, so that mutations reach
// the package parser.
#include <cstring>
#include <memory>

#include "fuzz_targets.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/isa/package.h"
#include "vacc/remote/protocol.h"
#include "vacc/support/error.h"

namespace vacc::fuzz {
namespace {

// What the server does with an admitted request (remote/server.cc), on fsim with the
// reference kernels: a decoded request that passed every check must run to its outputs or stop
// with a vacc::Error, never crash. Its operations are bounded, as a server's cycle limit
// bounds a run.
void execute(const remote::RunJob &job) {
  driver::DeviceOptions o;
  o.cycle_limit = 2'000'000;
  std::unique_ptr<driver::Device> device =
      job.package.accelerator_steps() > 0 ? driver::open_device("fsim", default_config(), o) : nullptr;
  host::ReferenceKernels cpu(job.package);
  runtime::GraphExecutor exec(job.package, cpu, device.get(), default_config());
  exec.run(job.inputs);
}

}  // namespace

void fuzz_remote(const uint8_t *data, size_t size) {
  remote::v1::RunRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size))) {
    std::string package = request.package();
    if (package.size() >= 32) {
      const uint64_t sum = isa::package_checksum(package);
      std::memcpy(package.data() + 24, &sum, 8);
      request.set_package(package);
    }
    try {
      const remote::RunJob job = remote::decode_run_request(request, default_config(), "fuzz");
      execute(job);
    } catch (const Error &) {
      // A refused request or a run stopped with its reason; the reply reading below runs on
      // the same bytes.
    }
  }
  remote::v1::RunReply reply;
  if (reply.ParseFromArray(data, static_cast<int>(size))) remote::decode_run_reply(reply, "fuzz");
}

}  // namespace vacc::fuzz
