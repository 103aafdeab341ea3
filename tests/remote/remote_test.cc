// Remote runs on loopback, as a user runs them: `vacc serve --engine rtl` (the cycle-accurate
// RTL simulator standing in for a board) on a port the OS picks, and `vacc run --remote`
// against it. The remote output and every layer's cycles and counters must equal a local
// `vacc run --sim --engine rtl` byte for byte; a wrong or missing token, an oversized
// message, garbage and truncated transfers, a bad package, another protocol version, a client
// killed mid-run and two clients at once must each be handled, with the server still serving.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "remote_process.h"
#include "vacc/remote/client.h"
#include "vacc/remote/protocol.h"
#include "vacc/support/error.h"
#include "vacc_remote.grpc.pb.h"

namespace vacc::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Bytes to a TCP port on loopback, then the connection closed.
void send_raw(int port, const std::string &bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::this_thread::sleep_for(50ms);
  close(fd);
}

// One server for the whole suite (its start is the slow part), with a token and a 1 MiB
// message limit; each test checks that it still serves.
class Remote : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/vacc-remote-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = new fs::path(pattern);
    setenv("VACC_CACHE_DIR", (*dir_ / "cache").c_str(), 1);
    std::ofstream(*dir_ / "token") << "s3cret-for-tests\n";
    std::ofstream(*dir_ / "wrong") << "not-the-secret\n";
    server_ = new Proc(
        spawn({"serve", "--bind", "127.0.0.1", "--port", "0", "--engine", "rtl", "--token-file",
               (*dir_ / "token").string(), "--max-message-mib", "1", "--queue-timeout", "300"},
              *dir_, "server"));
    ASSERT_TRUE(serving_until([] { return server_->stdout_text().find('\n') != std::string::npos; }))
        << server_->stderr_text();
    const std::string line = server_->stdout_text();
    const size_t colon = line.rfind(':');
    ASSERT_EQ(line.rfind("listening on 127.0.0.1:", 0), 0u) << line;
    port_ = std::stoi(line.substr(colon + 1));
    address_ = "127.0.0.1:" + std::to_string(port_);

    // The local run every remote run must equal.
    Proc local = spawn(
        {"run", "--sim", "--engine", "rtl", "--json", "--output", (*dir_ / "local.npy").string()},
        *dir_, "local");
    ASSERT_EQ(wait_exit(local), 0) << local.stderr_text();
    local_ = new nlohmann::json(nlohmann::json::parse(local.stdout_text()));
  }

  static void TearDownTestSuite() {
    if (server_) {
      kill(server_->pid, SIGTERM);
      EXPECT_EQ(wait_exit(*server_, 60s), 0) << server_->stderr_text();
    }
    if (dir_) fs::remove_all(*dir_);
    delete server_;
    delete local_;
    delete dir_;
  }

  // A server that died in an earlier test fails each later one at once, not by a timeout.
  void SetUp() override {
    ASSERT_FALSE(has_exited(*server_)) << "the server has exited:\n" << server_->stderr_text();
  }

  // Waits until `pred` holds, at most `limit`; gives up as soon as the server has exited.
  template <typename Pred>
  static bool serving_until(Pred pred, std::chrono::seconds limit = 120s) {
    eventually([&] { return pred() || has_exited(*server_); }, limit);
    return pred();
  }

  void TearDown() override {
    EXPECT_EQ(waitpid(server_->pid, nullptr, WNOHANG), 0) << "the server has exited:\n"
                                                          << server_->stderr_text();
  }

  // `vacc run --remote` with the right token; returns the process (not yet waited for).
  static Proc remote_run(const std::string &tag, const std::string &token_file = "token") {
    return spawn({"run", "--remote", address_, "--token-file", (*dir_ / token_file).string(),
                  "--json", "--output", (*dir_ / (tag + ".npy")).string()},
                 *dir_, tag);
  }

  // The run's output and every layer's cycles and counters equal the local run's.
  static void expect_same_as_local(const Proc &p, const std::string &tag) {
    const nlohmann::json remote = nlohmann::json::parse(p.stdout_text());
    const nlohmann::json &local = *local_;
    EXPECT_EQ(slurp(*dir_ / (tag + ".npy")), slurp(*dir_ / "local.npy"));
    EXPECT_EQ(remote["output"], local["output"]);
    EXPECT_EQ(remote["predicted"], local["predicted"]);
    const auto &rl = remote["profile"]["layers"], &ll = local["profile"]["layers"];
    ASSERT_EQ(rl.size(), ll.size());
    int accel = 0, joined = 0;
    for (size_t i = 0; i < ll.size(); ++i) {
      for (const char *key :
           {"layer", "op", "where", "macs", "executed_macs", "cycles", "program", "overlap_cycles"})
        EXPECT_EQ(rl[i].value(key, nlohmann::json()), ll[i].value(key, nlohmann::json()))
            << "layer " << i << " " << key;
      // Every counter the engine reports, but the simulator's own speed (a wall-time figure).
      nlohmann::json rc = rl[i].value("counters", nlohmann::json::object());
      nlohmann::json lc = ll[i].value("counters", nlohmann::json::object());
      rc.erase("sim_cycles_per_second");
      lc.erase("sim_cycles_per_second");
      EXPECT_EQ(rc, lc) << "layer " << i;
      // A device program's counters come with its first step.
      if (ll[i]["where"] == "accel" && ll[i]["program"] == ll[i]["index"]) {
        EXPECT_GT(lc.size(), 5u) << "layer " << i;
      }
      accel += ll[i]["where"] == "accel";
      joined += ll[i]["where"] == "accel" && ll[i]["program"] != ll[i]["index"];
      if (ll[i]["where"] == "accel" && ll[i]["program"] != ll[i]["index"])
        EXPECT_TRUE(ll[i].contains("overlap_cycles")) << "layer " << i;
    }
    EXPECT_GT(joined, 0) << "no step ran in another's program: their shares prove nothing";
    EXPECT_GT(accel, 0) << "the model must have accelerator layers, or cycles prove nothing";
    EXPECT_EQ(remote["profile"]["total"]["cycles"], local["profile"]["total"]["cycles"]);
    EXPECT_GT(local["profile"]["total"]["cycles"].get<uint64_t>(), 0u);
    EXPECT_EQ(remote["engine"], "rtl at " + address_);
  }

  static remote::Client client(int64_t max_message_bytes = 0) {
    remote::ClientOptions o;
    o.address = address_;
    o.token = "s3cret-for-tests";
    o.timeout_seconds = 120;
    o.max_message_bytes = max_message_bytes;
    return remote::Client(o);
  }

  static inline fs::path *dir_ = nullptr;
  static inline Proc *server_ = nullptr;
  static inline nlohmann::json *local_ = nullptr;
  static inline int port_ = 0;
  static inline std::string address_;
};

TEST_F(Remote, RunEqualsALocalRunByteForByte) {
  const Proc p = remote_run("remote");
  ASSERT_EQ(wait_exit(p), 0) << p.stderr_text();
  expect_same_as_local(p, "remote");
  // The text form prints the same table rows and prediction (the ms column aside).
  const Proc text = spawn({"run", "--remote", address_, "--token-file", (*dir_ / "token").string()},
                          *dir_, "remote_text");
  ASSERT_EQ(wait_exit(text), 0) << text.stderr_text();
  EXPECT_NE(text.stdout_text().find("engine  rtl at " + address_ + " on config 'default'"),
            std::string::npos)
      << text.stdout_text();
  const std::string predicted =
      fmt::format("predicted class {}", local_->at("predicted")[0].get<int>());
  EXPECT_NE(text.stdout_text().find(predicted), std::string::npos) << text.stdout_text();
}

TEST_F(Remote, WrongOrMissingTokenIsRefusedOnBothSides) {
  const size_t refusals = count(server_->stderr_text(), "refused a request");
  const Proc wrong = remote_run("wrong", "wrong");
  EXPECT_EQ(wait_exit(wrong), 1);
  EXPECT_NE(wrong.stderr_text().find("wrong token"), std::string::npos) << wrong.stderr_text();
  const Proc none = spawn({"run", "--remote", address_}, *dir_, "none");
  EXPECT_EQ(wait_exit(none), 1);
  EXPECT_NE(none.stderr_text().find("requires a token"), std::string::npos) << none.stderr_text();
  EXPECT_TRUE(serving_until([&] {
    return count(server_->stderr_text(), "refused a request") >= refusals + 2;
  })) << server_->stderr_text();
}

TEST_F(Remote, OversizedMessageIsRefused) {
  isa::Package big;
  big.model = "oversized";
  big.add_blob(std::vector<uint8_t>(2 << 20, 7));  // 2 MiB, over the server's 1 MiB
  remote::Client c = client(64 << 20);
  try {
    c.run(big, {});
    FAIL() << "a 2 MiB request passed a 1 MiB limit";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("larger than the message limit"), std::string::npos)
        << e.what();
  }
  const Proc p = remote_run("after_oversized");
  ASSERT_EQ(wait_exit(p), 0) << p.stderr_text();
  expect_same_as_local(p, "after_oversized");
}

TEST_F(Remote, GarbageTruncatedAndMalformedRequestsLeaveTheServerServing) {
  // Not gRPC at all, and an HTTP/2 connection cut in the middle of a frame.
  send_raw(port_, "GET / HTTP/1.0\r\n\r\n\x01\x02\x03 garbage");
  send_raw(port_,
           std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\x00\x00\x12\x04", 4));
  // Well-formed gRPC, but a package that is not one, and another protocol version: each
  // refused with a message, and logged.
  auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  auto stub = remote::v1::Accelerator::NewStub(channel);
  {
    grpc::ClientContext context;
    context.AddMetadata(remote::kTokenKey, "s3cret-for-tests");
    remote::v1::RunRequest request;
    request.set_protocol_version(remote::kProtocolVersion);
    request.set_package("definitely not a package");
    remote::v1::RunReply reply;
    const grpc::Status s = stub->Run(&context, request, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("not a vacc package"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext context;
    context.AddMetadata(remote::kTokenKey, "s3cret-for-tests");
    remote::v1::InfoRequest request;
    request.set_protocol_version(99);
    remote::v1::InfoReply reply;
    const grpc::Status s = stub->Info(&context, request, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find("version 99"), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(serving_until([] {
    const std::string log = server_->stderr_text();
    return log.find("not a vacc package") != std::string::npos &&
           log.find("protocol version 99") != std::string::npos;
  })) << server_->stderr_text();
  const Proc p = remote_run("after_garbage");
  ASSERT_EQ(wait_exit(p), 0) << p.stderr_text();
  expect_same_as_local(p, "after_garbage");
}

TEST_F(Remote, ClientKilledMidRunLeavesTheServerServing) {
  // A long run: 64 bundled images at once (about 3 M cycles on the RTL, seconds), so the
  // client is surely killed while the server runs it.
  write_first_images(VACC_TEST_MODELS_DIR, *dir_ / "images64.npy", 64);
  const size_t runs = count(server_->stderr_text(), "running '");
  const Proc victim =
      spawn({"run", "--remote", address_, "--token-file", (*dir_ / "token").string(),
             VACC_TEST_MODELS_DIR "/fashion_mnist_cnn.onnx", "--input",
             (*dir_ / "images64.npy").string()},
            *dir_, "victim");
  ASSERT_TRUE(serving_until([&] { return count(server_->stderr_text(), "running '") > runs; }))
      << victim.stderr_text() << server_->stderr_text();
  kill(victim.pid, SIGKILL);
  EXPECT_EQ(wait_exit(victim), -SIGKILL);
  EXPECT_TRUE(serving_until(
      [] {
        return server_->stderr_text().find("the client went away before the answer") !=
               std::string::npos;
      },
      600s))
      << server_->stderr_text();
  const Proc p = remote_run("after_kill");
  ASSERT_EQ(wait_exit(p), 0) << p.stderr_text();
  expect_same_as_local(p, "after_kill");
}

// Requests are admitted by size before they are decoded: while a long run holds the line, a
// second request that fits the server's 2 MiB of queued bytes (twice its 1 MiB messages) waits
// for its turn, and a third that would pass them is turned away at once with "busy". Both
// carry bytes that are no package: the waiting one is decoded (and refused) only at its turn.
TEST_F(Remote, AFullQueueAnswersBusyBeforeDecoding) {
  write_first_images(VACC_TEST_MODELS_DIR, *dir_ / "images64.npy", 64);
  const size_t runs = count(server_->stderr_text(), "running '");
  const Proc longer =
      spawn({"run", "--remote", address_, "--token-file", (*dir_ / "token").string(),
             VACC_TEST_MODELS_DIR "/fashion_mnist_cnn.onnx", "--input",
             (*dir_ / "images64.npy").string()},
            *dir_, "long_run");
  ASSERT_TRUE(serving_until([&] { return count(server_->stderr_text(), "running '") > runs; }))
      << longer.stderr_text() << server_->stderr_text();
  auto send = [&](grpc::Status *status) {
    auto stub = remote::v1::Accelerator::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata(remote::kTokenKey, "s3cret-for-tests");
    context.set_deadline(std::chrono::system_clock::now() + 600s);
    remote::v1::RunRequest request;
    request.set_protocol_version(remote::kProtocolVersion);
    request.set_package(std::string((1 << 20) - 4096, 'x'));  // just under the 1 MiB limit
    remote::v1::RunReply reply;
    *status = stub->Run(&context, request, &reply);
  };
  const size_t queued = count(server_->stderr_text(), "queued a run request");
  grpc::Status waited;
  std::thread first([&] { send(&waited); });
  ASSERT_TRUE(serving_until(
      [&] { return count(server_->stderr_text(), "queued a run request") > queued; }))
      << server_->stderr_text();
  // The line holds the long run and the first garbage request: a third turned away at once.
  isa::Package big;
  big.model = "one too many";
  big.add_blob(std::vector<uint8_t>((1 << 20) - 8192, 7));
  try {
    client().run(big, {});
    ADD_FAILURE() << "a request past the queued-bytes bound was admitted";
  } catch (const Error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the vacc server at " + address_ +
                     " turned the run request away: the server is busy: the requests waiting "
                     "or running hold "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("would pass its bound of 2.0 MiB (--max-queued-mib)"), std::string::npos)
        << m;
  }
  first.join();
  EXPECT_EQ(waited.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << waited.error_message();
  EXPECT_NE(waited.error_message().find("not a vacc package"), std::string::npos)
      << waited.error_message();
  EXPECT_EQ(wait_exit(longer), 0) << longer.stderr_text();
  EXPECT_NE(server_->stderr_text().find("the server is busy"), std::string::npos);
}

TEST_F(Remote, TwoClientsAtOnceEachGetTheirRun) {
  const Proc a = remote_run("first");
  const Proc b = remote_run("second");
  ASSERT_EQ(wait_exit(a), 0) << a.stderr_text();
  ASSERT_EQ(wait_exit(b), 0) << b.stderr_text();
  expect_same_as_local(a, "first");
  expect_same_as_local(b, "second");
}

TEST_F(Remote, InfoNamesTheServersEngineAndConfig) {
  const remote::ServerInfo info = client().info();
  EXPECT_EQ(info.engine, "rtl");
  EXPECT_EQ(info.config_name, "default");
  EXPECT_EQ(info.max_message_bytes, 1 << 20);
  EXPECT_NE(info.config_yaml.find("block_in: 16"), std::string::npos);
}

TEST(RemoteClient, UnreachableServerIsNamed) {
  remote::ClientOptions o;
  o.address = "127.0.0.1:1";  // nothing listens on port 1
  o.timeout_seconds = 5;
  remote::Client c(o);
  try {
    c.info();
    FAIL() << "reached a server on port 1";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the vacc server at 127.0.0.1:1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vacc::test
