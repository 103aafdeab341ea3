// `vacc run --remote HOST:PORT`: the host's side of remote runs (see server.h).
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/remote/protocol.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc::remote {

struct ClientOptions {
  std::string address;            // HOST:PORT
  std::string token;              // "" sends none
  double timeout_seconds = 600;   // the whole call, queueing included
  int64_t max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  // PEM text of the certificate (or its CA) the server must present: TLS. "" speaks plaintext.
  std::string tls_ca_pem;
};

// What a server runs, from its Info answer.
struct ServerInfo {
  std::string engine, config_name, config_yaml, cpu;
  uint64_t isa_fingerprint = 0;
  int64_t max_message_bytes = 0;
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  // Each throws vacc::Error with the server's message (or why it could not be reached).
  ServerInfo info();
  RunResult run(const isa::Package &package, const std::vector<runtime::HostTensor> &inputs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vacc::remote
