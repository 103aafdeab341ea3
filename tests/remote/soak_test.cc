// Load and faults on loopback: `vacc serve --engine fsim` with a token and a 1 MiB message
// limit, and C clients at once (threads of this process, each its own channel), R requests
// each, most of them good runs of the bundled CNN and the rest, at random, a wrong token, an
// oversized message or a client that gives up mid-run (a 64-image run with a deadline of
// 20 ms: its call is cancelled while the server has it, waiting or running; the count the
// server logs is printed). Every good run must equal a local
// `vacc run` of the same package byte for byte, every fault get its error, and the server's
// resident memory and open descriptors after the soak stay within 10 % and 4 of what they
// were after a warm-up round of the same concurrency.
//
// C and R: VACC_SOAK_CLIENTS and VACC_SOAK_RUNS (4 x 12 in `make test`; `make soak`: 8 x 50).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "remote_process.h"
#include "vacc/isa/package.h"
#include "vacc/remote/client.h"
#include "vacc/remote/protocol.h"
#include "vacc/support/error.h"
#include "vacc_remote.grpc.pb.h"

// Under AddressSanitizer (make test-asan) freed memory sits in its quarantine, so the
// server's resident set grows by design: the memory bound is checked in normal builds only.
#if defined(__SANITIZE_ADDRESS__)
#define VACC_SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VACC_SOAK_SANITIZED 1
#endif
#endif
#ifndef VACC_SOAK_SANITIZED
#define VACC_SOAK_SANITIZED 0
#endif

namespace vacc::test {
namespace {

int env_int(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// The server's resident set (kB) and open descriptors, from /proc.
struct Usage {
  int64_t rss_kb = 0;
  int64_t fds = 0;
};
Usage usage_of(pid_t pid) {
  Usage u;
  std::istringstream status(slurp(fmt::format("/proc/{}/status", pid)));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) u.rss_kb = std::stoll(line.substr(6));
  for ([[maybe_unused]] const auto &e : fs::directory_iterator(fmt::format("/proc/{}/fd", pid)))
    ++u.fds;
  return u;
}

// The data of a float32 .npy file (after its header).
std::string npy_data(const fs::path &path) {
  const std::string all = slurp(path);
  const size_t header = 10 + (static_cast<uint8_t>(all[8]) | static_cast<uint8_t>(all[9]) << 8);
  return all.substr(header);
}

TEST(RemoteSoak, ClientsWithFaultsGetTheirRunsAndTheServerStaysFlat) {
  const int clients = env_int("VACC_SOAK_CLIENTS", 4), runs = env_int("VACC_SOAK_RUNS", 12);
  char pattern[] = "/tmp/vacc-soak-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  setenv("VACC_CACHE_DIR", (dir / "cache").c_str(), 1);
  std::ofstream(dir / "token") << "soak-secret\n";
  const std::string model = VACC_TEST_MODELS_DIR "/fashion_mnist_cnn.onnx";
  write_first_images(VACC_TEST_MODELS_DIR, dir / "image.npy", 1);

  // The package every client sends, and the local run each remote run must equal.
  const Proc compile =
      spawn({"compile", model, "-o", (dir / "fm.vpkg").string(), "-q", "--no-tuning-db"}, dir,
            "compile");
  ASSERT_EQ(wait_exit(compile), 0) << compile.stderr_text();
  // The run a client gives up on: 64 images at once (tens of milliseconds on fsim, a deadline
  // of 20 ms), so that the server mostly has the call, waiting or running, when it is cancelled.
  write_first_images(VACC_TEST_MODELS_DIR, dir / "images64.npy", 64);
  const Proc compile64 = spawn({"compile", model, "--batch", "64", "-o",
                                (dir / "fm64.vpkg").string(), "-q", "--no-tuning-db"},
                               dir, "compile64");
  ASSERT_EQ(wait_exit(compile64), 0) << compile64.stderr_text();
  const Proc local = spawn({"run", (dir / "fm.vpkg").string(), "--sim", "--engine", "fsim",
                            "--input", (dir / "image.npy").string(), "--output",
                            (dir / "local.npy").string()},
                           dir, "local");
  ASSERT_EQ(wait_exit(local), 0) << local.stderr_text();
  const std::string want = npy_data(dir / "local.npy");
  ASSERT_EQ(want.size(), 40u);  // ten float32 scores
  const isa::Package package = isa::load_package((dir / "fm.vpkg").string());
  runtime::HostTensor image;
  image.shape = {1, 1, 28, 28};
  const std::string pixels = npy_data(dir / "image.npy");
  image.data.assign(pixels.begin(), pixels.end());
  const isa::Package package64 = isa::load_package((dir / "fm64.vpkg").string());
  runtime::HostTensor images64;
  images64.shape = {64, 1, 28, 28};
  const std::string pixels64 = npy_data(dir / "images64.npy");
  images64.data.assign(pixels64.begin(), pixels64.end());
  isa::Package big;
  big.model = "oversized";
  big.add_blob(std::vector<uint8_t>(2 << 20, 7));  // 2 MiB, over the server's 1 MiB

  Proc server = spawn({"serve", "--bind", "127.0.0.1", "--port", "0", "--engine", "fsim",
                       "--token-file", (dir / "token").string(), "--max-message-mib", "1"},
                      dir, "server");
  ASSERT_TRUE(eventually([&] { return server.stdout_text().find('\n') != std::string::npos; }))
      << server.stderr_text();
  const std::string line = server.stdout_text();
  ASSERT_EQ(line.rfind("listening on 127.0.0.1:", 0), 0u) << line;
  const std::string address =
      "127.0.0.1:" + std::to_string(std::stoi(line.substr(line.rfind(':') + 1)));

  auto client = [&](const std::string &token) {
    remote::ClientOptions o;
    o.address = address;
    o.token = token;
    o.timeout_seconds = 300;
    o.max_message_bytes = 64 << 20;
    return std::make_unique<remote::Client>(o);
  };
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto fail_with = [&](std::string what) {
    std::lock_guard<std::mutex> lock(failures_mutex);
    failures.push_back(std::move(what));
  };
  // gave_up: the deadline passed while the server had the call; in_time: the run finished
  // within the deadline (the client did not give up after all).
  // busy: a good run turned away because the queued bytes would pass the server's bound
  // (abandoned runs hold theirs until they end); the client tries again, as a user's would.
  std::atomic<int> good{0}, wrong_token{0}, oversized{0}, gave_up{0}, in_time{0}, busy{0};
  auto good_run = [&](remote::Client &c, const std::string &who) {
    for (int attempt = 0;; ++attempt) {
      try {
        const remote::RunResult r = c.run(package, {image});
        if (r.outputs.size() != 1 ||
            std::string(r.outputs[0].data.begin(), r.outputs[0].data.end()) != want)
          fail_with(who + ": the output differs from the local run's");
        ++good;
        return;
      } catch (const Error &e) {
        const bool turned_away =
            std::string(e.what()).find("the server is busy") != std::string::npos;
        if (!turned_away || attempt == 200) {
          fail_with(who + ": " + e.what());
          return;
        }
        ++busy;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  };
  // One client: `n` requests, each good or (with `faults`) a fault drawn at random; the
  // warm-up (no faults) makes one good run and one given up, the soak's two heaviest kinds.
  auto one_client = [&](int id, int n, bool faults) {
    std::mt19937 rng(1000 + id);
    auto c = client("soak-secret");
    for (int k = 0; k < n; ++k) {
      const std::string who = fmt::format("client {} request {}", id, k);
      const int pick = faults ? std::uniform_int_distribution<int>(0, 9)(rng) : (k == 0 ? 0 : 9);
      if (pick <= 6) {
        good_run(*c, who);
      } else if (pick == 7) {
        try {
          client("not-the-secret")->run(package, {image});
          fail_with(who + ": a wrong token ran");
        } catch (const Error &e) {
          if (std::string(e.what()).find("wrong token") == std::string::npos)
            fail_with(who + ": wrong token: " + e.what());
          ++wrong_token;
        }
      } else if (pick == 8) {
        try {
          c->run(big, {});
          fail_with(who + ": a 2 MiB request passed a 1 MiB limit");
        } catch (const Error &e) {
          if (std::string(e.what()).find("larger than the message limit") == std::string::npos)
            fail_with(who + ": oversized: " + e.what());
          ++oversized;
        }
      } else {
        // A client that gives up: its call cancelled after 20 ms, while the server has it.
        auto stub = remote::v1::Accelerator::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
        grpc::ClientContext context;
        context.AddMetadata(remote::kTokenKey, "soak-secret");
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(20));
        const remote::v1::RunRequest request = remote::encode_run_request(package64, {images64});
        remote::v1::RunReply reply;
        const grpc::Status s = stub->Run(&context, request, &reply);
        // Turned away as busy before it was queued (RESOURCE_EXHAUSTED): it ends without a
        // run all the same.
        if (s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED &&
            s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED && !s.ok())
          fail_with(fmt::format("{}: gave up, but the status was {}: {}", who,
                                static_cast<int>(s.error_code()), s.error_message()));
        ++(s.ok() ? in_time : gave_up);
      }
    }
  };
  auto round = [&](int n, bool faults) {
    std::vector<std::thread> threads;
    for (int id = 0; id < clients; ++id) threads.emplace_back(one_client, id, n, faults);
    for (std::thread &t : threads) t.join();
  };

  round(2, false);  // warm-up: the same concurrency, a good run and a given-up one each
  const Usage warm = usage_of(server.pid);
  const auto start = std::chrono::steady_clock::now();
  round(runs, true);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The cancelled calls' runs may still be finishing: a good run after them waits its turn.
  good_run(*client("soak-secret"), "after the soak");
  // gRPC closes the clients' connections lazily: give the descriptors a moment to go.
  Usage after = usage_of(server.pid);
  eventually([&] { return (after = usage_of(server.pid)).fds <= warm.fds + 4; },
             std::chrono::seconds(20));
  std::printf(
      "%d clients x %d requests in %.1f s: %d good runs, %d wrong tokens, %d oversized, %d gave "
      "up (%d more finished within their deadline; the server saw %zu clients go away before "
      "their answer), %d busy answers retried; server RSS %lld -> %lld kB, descriptors %lld -> "
      "%lld\n",
      clients, runs, seconds, good.load(), wrong_token.load(), oversized.load(), gave_up.load(),
      in_time.load(),
      count(server.stderr_text(), "went away before the answer") +
          count(server.stderr_text(), "went away while its run waited"),
      busy.load(),
      static_cast<long long>(warm.rss_kb), static_cast<long long>(after.rss_kb),
      static_cast<long long>(warm.fds), static_cast<long long>(after.fds));
  for (const std::string &f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(good + wrong_token + oversized + gave_up + in_time, 2 * clients + clients * runs + 1);
  EXPECT_GT(wrong_token + oversized + gave_up, 0) << "no fault was drawn";
  if (!VACC_SOAK_SANITIZED)
    EXPECT_LE(after.rss_kb, warm.rss_kb * 11 / 10) << "the server's memory grew";
  EXPECT_LE(after.fds, warm.fds + 4) << "the server keeps descriptors";
  EXPECT_FALSE(has_exited(server)) << server.stderr_text();
  kill(server.pid, SIGTERM);
  EXPECT_EQ(wait_exit(server, std::chrono::seconds(60)), 0) << server.stderr_text();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vacc::test
