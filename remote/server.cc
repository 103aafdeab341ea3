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

// One run at a time, in arrival order. A waiter leaves the line when its client goes away or
// its wait runs out.
class RunLine {
 public:
  // Waits for this request's turn; false when `give_up` said so first.
  bool enter(const std::function<bool()> &give_up) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t ticket = next_ticket_++;
    waiting_.push_back(ticket);
    while (running_ || waiting_.front() != ticket) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if ((running_ || waiting_.front() != ticket) && give_up()) {
        std::erase(waiting_, ticket);
        cv_.notify_all();
        return false;
      }
    }
    waiting_.pop_front();
    running_ = true;
    return true;
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<uint64_t> waiting_;
  uint64_t next_ticket_ = 0;
  bool running_ = false;
};

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
  explicit Service(const ServerOptions &options) : o_(options) {}

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
    RunJob job;
    try {
      job = decode_run_request(*request, o_.config, peer);
    } catch (const std::exception &e) {
      return refuse(peer, grpc::StatusCode::INVALID_ARGUMENT, e.what());
    }
    const auto queued = Clock::now();
    const auto limit = queued + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o_.queue_timeout_seconds));
    const bool entered =
        line_.enter([&] { return context->IsCancelled() || Clock::now() > limit; });
    if (!entered) {
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
      ~Leave() { line.leave(); }
    } leave{line_};
    log(fmt::format("running '{}' for {}", job.package.model, peer));
    RunResult result;
    result.queue_seconds = std::chrono::duration<double>(Clock::now() - queued).count();
    result.engine = o_.engine;
    result.config_name = o_.config.name;
    result.cpu = o_.cpu;
    const std::optional<std::string> failed = run_thread_.run([&] {
      bool has_accel = false;
      for (const auto &s : job.package.steps) has_accel |= s.commands.has_value();
      std::unique_ptr<driver::Device> device = has_accel ? o_.open_device() : nullptr;
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
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  Impl &s = *impl_;
  s.options = std::move(options);
  if (s.options.max_message_bytes <= 0) s.options.max_message_bytes = kDefaultMaxMessageBytes;
  if (s.options.max_message_bytes > std::numeric_limits<int>::max())
    fail("--max-message-mib: at most {} MiB (gRPC counts message sizes in an int)",
         std::numeric_limits<int>::max() >> 20);
  VACC_CHECK(s.options.host_kernels && s.options.open_device) << "the server needs its factories";
  s.service = std::make_unique<Service>(s.options);
  grpc::ServerBuilder builder;
  const std::string address = fmt::format("{}:{}", s.options.host, s.options.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &s.port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(s.options.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(s.options.max_message_bytes));
  builder.RegisterService(s.service.get());
  s.server = builder.BuildAndStart();
  if (!s.server || s.port == 0)
    fail(
        "vacc serve: cannot listen on {} (is the port in use, or the address not this "
        "machine's?)",
        address);
  s.service->log(fmt::format(
      "serving config '{}' on engine {} (CPU steps: {}) at {}:{}, {}; messages up to {} MiB",
      s.options.config.name, s.options.engine, s.options.cpu, s.options.host, s.port,
      s.options.token.empty() ? "no token required" : "token required",
      s.options.max_message_bytes >> 20));
}

Server::~Server() {
  if (impl_ && impl_->server) impl_->server->Shutdown();
}

int Server::port() const {
  return impl_->port;
}
void Server::wait() {
  impl_->server->Wait();
}
void Server::shutdown() {
  impl_->server->Shutdown();
}

}  // namespace vacc::remote
