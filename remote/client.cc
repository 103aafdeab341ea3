// The gRPC client behind `vacc run --remote` (see client.h).
#include "vacc/remote/client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <limits>

#include "vacc/support/error.h"
#include "vacc_remote.grpc.pb.h"

namespace vacc::remote {

struct Client::Impl {
  ClientOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Accelerator::Stub> stub;

  void prepare(grpc::ClientContext &context) const {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(options.timeout_seconds)));
    if (!options.token.empty()) context.AddMetadata(kTokenKey, options.token);
  }

  [[noreturn]] void failed(const grpc::Status &status, const char *what) const {
    const std::string &a = options.address;
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        fail(
            "cannot reach the vacc server at {} ({}): is `vacc serve` running there, and the "
            "port open? If it serves TLS, give its certificate with --tls-ca FILE; if it does "
            "not, drop --tls-ca",
            a, status.error_message());
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        fail("the vacc server at {} did not answer the {} within {} s (--timeout): {}", a, what,
             options.timeout_seconds, status.error_message());
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        if (status.error_message().rfind("the server is busy", 0) == 0)
          fail("the vacc server at {} turned the {} away: {}", a, what, status.error_message());
        fail("the {} to or from {} is larger than the message limit: {}", what, a,
             status.error_message());
      default:
        fail("the vacc server at {} refused the {}: {}", a, what, status.error_message());
    }
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  Impl &c = *impl_;
  c.options = std::move(options);
  if (c.options.max_message_bytes <= 0) c.options.max_message_bytes = kDefaultMaxMessageBytes;
  if (c.options.address.find(':') == std::string::npos)
    fail("--remote '{}': give the server as HOST:PORT", c.options.address);
  grpc::ChannelArguments args;
  const int max = static_cast<int>(
      std::min<int64_t>(c.options.max_message_bytes, std::numeric_limits<int>::max()));
  args.SetMaxReceiveMessageSize(max);
  args.SetMaxSendMessageSize(max);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!c.options.tls_ca_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = c.options.tls_ca_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  c.channel = grpc::CreateCustomChannel(c.options.address, credentials, args);
  c.stub = v1::Accelerator::NewStub(c.channel);
}

Client::~Client() = default;

ServerInfo Client::info() {
  grpc::ClientContext context;
  impl_->prepare(context);
  v1::InfoRequest request;
  request.set_protocol_version(kProtocolVersion);
  v1::InfoReply reply;
  const grpc::Status status = impl_->stub->Info(&context, request, &reply);
  if (!status.ok()) impl_->failed(status, "info request");
  const std::string server = fmt::format("the vacc server at {}", impl_->options.address);
  if (std::string m = version_mismatch(reply.protocol_version(), server); !m.empty()) fail("{}", m);
  ServerInfo info;
  info.engine = reply.engine();
  info.config_name = reply.config_name();
  info.config_yaml = reply.config_yaml();
  info.cpu = reply.cpu();
  info.isa_fingerprint = reply.isa_fingerprint();
  info.max_message_bytes = static_cast<int64_t>(reply.max_message_bytes());
  return info;
}

RunResult Client::run(const isa::Package &package, const std::vector<runtime::HostTensor> &inputs) {
  const v1::RunRequest request = encode_run_request(package, inputs);
  grpc::ClientContext context;
  impl_->prepare(context);
  v1::RunReply reply;
  const grpc::Status status = impl_->stub->Run(&context, request, &reply);
  if (!status.ok()) impl_->failed(status, "run request");
  return decode_run_reply(reply, fmt::format("the vacc server at {}", impl_->options.address));
}

}  // namespace vacc::remote
