// The gRPC service behind `vacc serve` (see server.h).
#include "vacc/remote/server.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "run_time_limit.h"
#include "vacc/remote/protocol.h"
#include "vacc/support/error.h"
#include "vacc_remote.grpc.pb.h"

namespace vacc::remote {

namespace {

using Clock = std::chrono::steady_clock;

// Compares without an early exit, so the time taken does not tell how much of a guess was
// right.
bool same_token(const std::string &a, const std::string &b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ (i < b.size() ? b[i] : 0);
  return diff == 0;
}

// One run at a time, in arrival order. A request is admitted by its size first: the requests
// in the line (waiting or running) hold at most `max_bytes` between them, so memory under
// load is bounded; one that does not fit is turned away at once. A waiter leaves the line when
// its client goes away or its wait runs out.
class RunLine {
 public:
  explicit RunLine(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Admits `bytes` unless the line holds too much already (then false, and `*held` is what
  // it holds). An admitted request then waits for its turn, and leave()s once it has run.
  bool admit(int64_t bytes, int64_t *held) {
    std::lock_guard<std::mutex> lock(mutex_);
    *held = bytes_;
    // One request alone is always admitted (it passed the message size bound).
    if (bytes_ > 0 && bytes_ + bytes > max_bytes_) return false;
    bytes_ += bytes;
    return true;
  }
  // Waits for this request's turn; false (and its bytes leave) when `give_up` said so first.
  bool wait_turn(int64_t bytes, const std::function<bool()> &give_up) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t ticket = next_ticket_++;
    waiting_.push_back(ticket);
    while (running_ || waiting_.front() != ticket) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if ((running_ || waiting_.front() != ticket) && give_up()) {
        std::erase(waiting_, ticket);
        bytes_ -= bytes;
        cv_.notify_all();
        return false;
      }
    }
    waiting_.pop_front();
    running_ = true;
    return true;
  }
  // The running request is done; its bytes leave the line.
  void leave(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    bytes_ -= bytes;
    cv_.notify_all();
  }

 private:
  const int64_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<uint64_t> waiting_;
  uint64_t next_ticket_ = 0;
  int64_t bytes_ = 0;  // of the requests waiting or running
  bool running_ = false;
};

std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// Whether an address to listen on is reachable from this machine only.
bool is_loopback(const std::string &host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

// The one thread every run executes on, for the server's life. The engines keep state on the
// thread that made it (the RTL engine's SystemC kernel switches between its own coroutine
// stacks there), so runs do not move between gRPC's worker threads; and a run's exceptions
// are caught where they were thrown: only its message crosses back to the gRPC thread.
class RunThread {
 public:
  RunThread() : thread_([this] { loop(); }) {}
  ~RunThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // Runs `job` on the run thread and waits for it: no value, or what it threw.
  std::optional<std::string> run(const std::function<void()> &job) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &job;
    error_.reset();
    cv_.notify_all();
    cv_.wait(lock, [this] { return job_ == nullptr; });
    return error_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || job_ != nullptr; });
      if (stop_) return;
      const std::function<void()> &job = *job_;
      lock.unlock();
      std::optional<std::string> error;
      try {
        job();
      } catch (const std::exception &e) {
        // vacc::Error for what the package or the engine reports; anything else (an XRT
        // exception, memory) is still one failed run, not the server's end.
        error = e.what();
      }
      lock.lock();
      error_ = std::move(error);
      job_ = nullptr;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void()> *job_ = nullptr;  // the run waiting for the thread, if any
  std::optional<std::string> error_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

class Service final : public v1::Accelerator::Service {
 public:
  explicit Service(const ServerOptions &options)
      : o_(options), line_(options.max_queued_bytes) {}

  grpc::Status Info(grpc::ServerContext *context, const v1::InfoRequest *request,
                    v1::InfoReply *reply) override {
    if (grpc::Status s = admit(*context, request->protocol_version(), "info"); !s.ok()) return s;
    reply->set_protocol_version(kProtocolVersion);
    reply->set_engine(o_.engine);
    reply->set_config_name(o_.config.name);
    reply->set_config_yaml(o_.config_yaml);
    reply->set_isa_fingerprint(o_.config.isa_fingerprint());
    reply->set_cpu(o_.cpu);
    reply->set_max_message_bytes(static_cast<uint64_t>(o_.max_message_bytes));
    return grpc::Status::OK;
  }

  grpc::Status Run(grpc::ServerContext *context, const v1::RunRequest *request,
                   v1::RunReply *reply) override {
    if (grpc::Status s = admit(*context, request->protocol_version(), "run"); !s.ok()) return s;
    const std::string peer = context->peer();
    // Admitted by size before anything in it is decoded; decoded once it is its turn.
    const auto bytes = static_cast<int64_t>(request->ByteSizeLong());
    const auto queued = Clock::now();
    const auto limit = queued + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o_.queue_timeout_seconds));
    int64_t held = 0;
    if (!line_.admit(bytes, &held))
      return refuse(peer, grpc::StatusCode::RESOURCE_EXHAUSTED,
                    fmt::format("the server is busy: the requests waiting or running hold {}, "
                                "and this one's {} would pass its bound of {} (--max-queued-mib); "
                                "try again when the runs before it are done",
                                mib(held), mib(bytes), mib(o_.max_queued_bytes)));
    log(fmt::format("queued a run request of {} from {} ({} in the line)", mib(bytes), peer,
                    mib(held + bytes)));
    if (!line_.wait_turn(bytes, [&] { return context->IsCancelled() || Clock::now() > limit; })) {
      if (context->IsCancelled()) {
        log(fmt::format("client {} went away while its run waited", peer));
        return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      }
      return refuse(peer, grpc::StatusCode::DEADLINE_EXCEEDED,
                    fmt::format("the server is busy: the run waited {:.0f} s (--queue-timeout) "
                                "for the runs before it",
                                o_.queue_timeout_seconds));
    }
    struct Leave {
      RunLine &line;
      int64_t bytes;
      ~Leave() { line.leave(bytes); }
    } leave{line_, bytes};
    RunJob job;
    try {
      job = decode_run_request(*request, o_.config, peer);
    } catch (const std::exception &e) {
      return refuse(peer, grpc::StatusCode::INVALID_ARGUMENT, e.what());
    }
    log(fmt::format("running '{}' for {}", job.package.model, peer));
    RunResult result;
    result.queue_seconds = std::chrono::duration<double>(Clock::now() - queued).count();
    result.engine = o_.engine;
    result.config_name = o_.config.name;
    result.cpu = o_.cpu;
    const std::optional<std::string> failed = run_thread_.run([&] {
      std::unique_ptr<driver::Device> device =
          job.package.accelerator_steps() > 0 ? limit_run_time(o_.open_device(), o_.run_time_limit_seconds) : nullptr;
      std::unique_ptr<runtime::HostKernels> host = o_.host_kernels(job.package);
      runtime::GraphExecutor exec(job.package, *host, device.get(), o_.config);
      result.outputs = exec.run(job.inputs, &result.profile);
    });
    if (failed)
      return refuse(peer, grpc::StatusCode::ABORTED,
                    fmt::format("the run failed on the server: {}", *failed));
    *reply = encode_run_reply(result);
    std::optional<uint64_t> cycles = result.profile.cycles();
    log(fmt::format("ran '{}' for {}: {} steps, {} cycles, {:.3f} s (waited {:.3f} s){}",
                    job.package.model, peer, result.profile.steps.size(),
                    cycles ? std::to_string(*cycles) : "-", result.profile.seconds,
                    result.queue_seconds,
                    context->IsCancelled() ? "; the client went away before the answer" : ""));
    return grpc::Status::OK;
  }

  void log(const std::string &line) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    if (o_.log)
      o_.log(line);
    else
      fmt::print(stderr, "vacc serve: {}\n", line);
  }

 private:
  grpc::Status refuse(const std::string &peer, grpc::StatusCode code, const std::string &why) {
    log(fmt::format("refused a request from {}: {}", peer, why));
    return grpc::Status(code, why);
  }

  // The checks every request passes first: the token, then the protocol version.
  grpc::Status admit(const grpc::ServerContext &context, uint32_t version, const char *what) {
    const std::string peer = context.peer();
    if (!o_.token.empty()) {
      const auto &md = context.client_metadata();
      auto it = md.find(kTokenKey);
      if (it == md.end())
        return refuse(peer, grpc::StatusCode::UNAUTHENTICATED,
                      fmt::format("this vacc server requires a token ({} request without one): "
                                  "give the server's token with --token-file FILE",
                                  what));
      if (!same_token(std::string(it->second.data(), it->second.size()), o_.token))
        return refuse(peer, grpc::StatusCode::UNAUTHENTICATED,
                      fmt::format("wrong token ({} request): the token from --token-file is not "
                                  "the one this server was started with",
                                  what));
    }
    if (std::string m = version_mismatch(version, "the client"); !m.empty())
      return refuse(peer, grpc::StatusCode::FAILED_PRECONDITION, m);
    return grpc::Status::OK;
  }

  const ServerOptions &o_;
  RunLine line_;
  RunThread run_thread_;
  std::mutex log_mutex_;
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  bool tls = false;
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  Impl &s = *impl_;
  s.options = std::move(options);
  if (s.options.max_message_bytes <= 0) s.options.max_message_bytes = kDefaultMaxMessageBytes;
  if (s.options.max_message_bytes > std::numeric_limits<int>::max())
    fail("--max-message-mib: at most {} MiB (gRPC counts message sizes in an int)",
         std::numeric_limits<int>::max() >> 20);
  if (s.options.max_queued_bytes <= 0) s.options.max_queued_bytes = 2 * s.options.max_message_bytes;
  if (s.options.max_queued_bytes < s.options.max_message_bytes)
    fail("--max-queued-mib {}: must be at least --max-message-mib ({}), or no request of the "
         "largest size could ever be admitted",
         s.options.max_queued_bytes >> 20, s.options.max_message_bytes >> 20);
  VACC_CHECK(s.options.host_kernels && s.options.open_device) << "the server needs its factories";
  const std::string &host = s.options.host;
  const bool tls = !s.options.tls_cert_pem.empty() || !s.options.tls_key_pem.empty();
  if (tls && (s.options.tls_cert_pem.empty() || s.options.tls_key_pem.empty()))
    fail("--tls-cert and --tls-key go together: give the certificate and its private key, or "
         "neither");
  if (!is_loopback(host) && s.options.token.empty() && !s.options.insecure)
    fail(
        "vacc serve: --bind {} accepts connections from other machines, but no --token-file was "
        "given, so anyone who reaches the port could run programs on this {} engine: give "
        "--token-file FILE (with --tls-cert and --tls-key, so that the token is not sent in "
        "clear), bind 127.0.0.1 and tunnel (ssh -L), or pass --insecure to serve without a token "
        "anyway",
        host, s.options.engine);
  s.service = std::make_unique<Service>(s.options);
  if (!is_loopback(host) && s.options.token.empty())
    s.service->log(fmt::format(
        "WARNING: --insecure: serving {} without a token: anyone who can reach port {} can run "
        "programs on this engine and read what they compute",
        host, s.options.port));
  else if (!is_loopback(host) && !tls)
    s.service->log(fmt::format(
        "WARNING: serving {} without TLS: the token and every package travel in clear (give "
        "--tls-cert and --tls-key)",
        host));
  grpc::ServerBuilder builder;
  const std::string address = fmt::format("{}:{}", host, s.options.port);
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({s.options.tls_key_pem, s.options.tls_cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(address, credentials, &s.port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(s.options.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(s.options.max_message_bytes));
  builder.RegisterService(s.service.get());
  s.server = builder.BuildAndStart();
  if (!s.server || s.port == 0)
    fail(
        "vacc serve: cannot listen on {} (is the port in use, or the address not this "
        "machine's{}?)",
        address, tls ? ", or are --tls-cert and --tls-key not a PEM certificate and its key" : "");
  s.tls = tls;
  s.service->log(fmt::format(
      "serving config '{}' on engine {} (CPU steps: {}) at {}:{}, {}, {}; messages up to {} MiB, "
      "{} MiB queued",
      s.options.config.name, s.options.engine, s.options.cpu, host, s.port,
      s.options.token.empty() ? "no token required" : "token required",
      tls ? "TLS" : "plaintext", s.options.max_message_bytes >> 20,
      s.options.max_queued_bytes >> 20));
}

Server::~Server() {
  if (impl_ && impl_->server) impl_->server->Shutdown();
}

int Server::port() const {
  return impl_->port;
}
bool Server::tls() const {
  return impl_->tls;
}
void Server::wait() {
  impl_->server->Wait();
}
void Server::shutdown() {
  impl_->server->Shutdown();
}

}  // namespace vacc::remote
