// The remote-run messages (`vacc serve`, `vacc run --remote`): the bytes parsed as a run
// request and checked as the server does (protocol version, package against the default
// config, each input's dtype and size), and as a run reply decoded as the client does. The
// embedded package's checksum is recomputed first, as in fuzz_package, so that mutations reach
// the package parser.
#include <cstring>

#include "fuzz_targets.h"
#include "vacc/isa/package.h"
#include "vacc/remote/protocol.h"
#include "vacc/support/error.h"

namespace vacc::fuzz {

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
      remote::decode_run_request(request, default_config(), "fuzz");
    } catch (const Error &) {
      // A refused request; the reply reading below runs on the same bytes.
    }
  }
  remote::v1::RunReply reply;
  if (reply.ParseFromArray(data, static_cast<int>(size))) remote::decode_run_reply(reply, "fuzz");
}

}  // namespace vacc::fuzz
