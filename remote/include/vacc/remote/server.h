// `vacc serve`: the board's side of remote runs, over gRPC (remote/proto/vacc_remote.proto).
// A host sends a compiled package and its inputs; the server runs it with the runtime's graph
// executor on its engine (xrt on a board; rtl, perf or fsim to test without one) and answers
// with the outputs and the per-step profile. One run at a time: later requests wait in
// arrival order (at most queue_timeout_seconds, and never past the client's deadline). With a
// token, every request must carry it. Bad requests (wrong token or version, a package that
// does not decode or was compiled for another config, inputs of the wrong shape) are refused
// with a message to the client and a line in the log; the server keeps serving.
//
// Secure by default: it listens on loopback unless told another address, and refuses an
// address other machines can reach without a token unless `insecure` says so (logged loudly).
// With a certificate and key it speaks TLS (gRPC's own credentials), so the token does not
// travel in clear. A request is admitted by its size before anything in it is decoded: the
// requests waiting or running hold at most max_queued_bytes between them, and one that would
// pass the bound is answered "busy" at once; a waiting request holds only its bytes, and is
// decoded when its turn comes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc::remote {

struct ServerOptions {
  std::string host = "127.0.0.1";  // the address to listen on
  int port = 0;                    // 0: one the OS picks (Server::port() says which)
  // Serve an address beyond loopback without a token (refused otherwise).
  bool insecure = false;
  // PEM text of the server's certificate (chain) and private key: both for TLS, or neither.
  std::string tls_cert_pem, tls_key_pem;
  std::string engine = "rtl";
  isa::HwConfig config;
  std::string config_yaml;        // the config file's text, sent to clients that ask (Info)
  std::string token;              // "" accepts requests without one
  int64_t max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  // Bytes of the requests waiting or running together; 0: twice max_message_bytes.
  int64_t max_queued_bytes = 0;
  double queue_timeout_seconds = 600;
  // Wall time one run may take on the accelerator, from its first step (0: none). rtl and xrt
  // stop a step that passes it; fsim and perf (whose steps the cycle limit bounds) are stopped
  // at the next step. The cycle limit is the device's own (open_device's DeviceOptions).
  double run_time_limit_seconds = 0;
  // The CPU kernels for CPU steps and the device for accelerator steps, one of each per run:
  // the command supplies them (the runtime does not link the compiler's kernels).
  std::string cpu = "reference";
  std::function<std::unique_ptr<runtime::HostKernels>(const isa::Package &)> host_kernels;
  std::function<std::unique_ptr<driver::Device>()> open_device;
  // One line per event (start, run, refusal); default: standard error.
  std::function<void(const std::string &)> log;
};

class Server {
 public:
  // Listens (throws vacc::Error when the address cannot be bound, or is not loopback without
  // a token or `insecure`) and serves in gRPC's threads until shutdown().
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  int port() const;  // the port it listens on
  bool tls() const;  // whether it speaks TLS
  void wait();       // blocks until shutdown() (from another thread or a signal handler's)
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vacc::remote
