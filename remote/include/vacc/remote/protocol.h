// The remote-run protocol's constants and every conversion between its messages
// (remote/proto/vacc_remote.proto) and vacc's own types, in one place: the server and the
// client decode only through these functions, and so can a fuzz target (decode_run_request
// takes a message parsed from untrusted bytes and either returns a checked job or throws
// vacc::Error naming what is wrong).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc_remote.pb.h"

namespace vacc::remote {

// Bumped whenever a message changes meaning; the proto package is vacc.remote.v<major>, renamed
// only when the messages stop being wire-compatible. 2: a device program may run several steps
// (StepProfile.program; its counters on its first step).
inline constexpr uint32_t kProtocolVersion = 2;
// The gRPC metadata key of the shared-secret token (lower case, as HTTP/2 wants).
inline constexpr const char *kTokenKey = "vacc-token";
// Default bound on one message (a package with its inputs, or a reply), both ways.
inline constexpr int64_t kDefaultMaxMessageBytes = int64_t{256} << 20;

// A run request, checked: the package (decoded and validated, compiled for `config`) and one
// input per graph input, each of the dtype and element count the package declares.
struct RunJob {
  isa::Package package;
  std::vector<runtime::HostTensor> inputs;
};
RunJob decode_run_request(const v1::RunRequest &request, const isa::HwConfig &config,
                          const std::string &peer);
v1::RunRequest encode_run_request(const isa::Package &package,
                                  const std::vector<runtime::HostTensor> &inputs);

// The result of a run, both ways.
struct RunResult {
  std::vector<runtime::HostTensor> outputs;
  runtime::RunProfile profile;
  std::string engine, config_name, cpu;
  double queue_seconds = 0;
};
v1::RunReply encode_run_reply(const RunResult &result);
// Throws vacc::Error naming `server` when the reply is malformed.
RunResult decode_run_reply(const v1::RunReply &reply, const std::string &server);

v1::Tensor encode_tensor(const runtime::HostTensor &tensor);
// Checks the dtype name and that the bytes match the shape; `what` names it in messages.
runtime::HostTensor decode_tensor(const v1::Tensor &tensor, const std::string &what);

// The shared secret in a token file (--token-file): its text without surrounding white
// space. Throws vacc::Error naming the file when it cannot be read or holds no token.
std::string read_token_file(const std::string &path);

// The message for a client of another protocol version ("" when it is this one).
std::string version_mismatch(uint32_t theirs, const std::string &who);

}  // namespace vacc::remote
