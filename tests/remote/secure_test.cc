// `vacc serve` secure by default, as a user meets it: it listens on loopback unless --bind
// says otherwise, refuses an address other machines reach without a token (or a loudly logged
// --insecure), speaks TLS with a certificate made here by openssl, and enforces a per-run cycle
// and time limit. Servers run the fsim engine (they start at once); one case per message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "remote_process.h"

namespace vacc::test {
namespace {

class Secure : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/vacc-secure-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = new fs::path(pattern);
    std::ofstream(*dir_ / "token") << "tls-s3cret\n";
    // A self-signed certificate for localhost, as a user would make one.
    const std::string openssl = fmt::format(
        "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext "
        "subjectAltName=DNS:localhost -days 2 -keyout {0}/key.pem -out {0}/cert.pem "
        ">{0}/openssl.log 2>&1",
        dir_->string());
    ASSERT_EQ(std::system(openssl.c_str()), 0) << slurp(*dir_ / "openssl.log");
    write_first_images(VACC_TEST_MODELS_DIR, *dir_ / "images64.npy", 64);
  }
  static void TearDownTestSuite() {
    if (dir_) fs::remove_all(*dir_);
    delete dir_;
  }

  static fs::path path(const std::string &name) { return *dir_ / name; }

  // `vacc serve --engine fsim --port 0 ARGS...`, once it has printed its address (or ended).
  struct Server {
    Proc proc;
    int port = 0;
    std::string line;
  };
  static Server serve(const std::vector<std::string> &args, const std::string &tag) {
    std::vector<std::string> all = {"serve", "--engine", "fsim", "--port", "0"};
    all.insert(all.end(), args.begin(), args.end());
    Server s{spawn(all, *dir_, tag)};
    eventually(
        [&] { return s.proc.stdout_text().find('\n') != std::string::npos || has_exited(s.proc); });
    s.line = s.proc.stdout_text();
    const size_t colon = s.line.find(':', s.line.find("listening on "));
    if (colon != std::string::npos) s.port = std::atoi(s.line.c_str() + colon + 1);
    return s;
  }
  static void stop(const Server &s) {
    kill(s.proc.pid, SIGTERM);
    EXPECT_EQ(wait_exit(s.proc, 60s), 0) << s.proc.stderr_text();
  }

  // `vacc run` to completion: its exit status, and its standard error.
  static int run(const std::vector<std::string> &args, const std::string &tag,
                 std::string *err = nullptr) {
    const Proc p = spawn(args, *dir_, tag);
    const int status = wait_exit(p);
    if (err) *err = p.stderr_text();
    return status;
  }

  static inline fs::path *dir_ = nullptr;
};

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST_F(Secure, ListensOnLoopbackByDefault) {
  const Server s = serve({}, "default");
  EXPECT_EQ(s.line.rfind("listening on 127.0.0.1:", 0), 0u) << s.line << s.proc.stderr_text();
  EXPECT_GT(s.port, 0);
  stop(s);
}

TEST_F(Secure, AnotherAddressWithoutATokenIsRefused) {
  const Server s = serve({"--bind", "0.0.0.0"}, "open");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "error: vacc serve: --bind 0.0.0.0 accepts connections from other machines, "
                  "but no --token-file was given, so anyone who reaches the port could run "
                  "programs on this fsim engine: give --token-file FILE"))
      << s.proc.stderr_text();
  EXPECT_TRUE(has(s.proc.stderr_text(), "or pass --insecure")) << s.proc.stderr_text();
}

TEST_F(Secure, InsecureServesAnotherAddressAndSaysSoLoudly) {
  const Server s = serve({"--bind", "0.0.0.0", "--insecure"}, "insecure");
  ASSERT_GT(s.port, 0) << s.proc.stderr_text();
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "WARNING: --insecure: serving 0.0.0.0 without a token: "
                  "anyone who can reach port 0 can run programs"))
      << s.proc.stderr_text();
  stop(s);
}

TEST_F(Secure, ATokenWithoutTlsOnAnotherAddressIsWarnedOf) {
  const Server s = serve({"--bind", "0.0.0.0", "--token-file", path("token")}, "cleartext");
  ASSERT_GT(s.port, 0) << s.proc.stderr_text();
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "WARNING: serving 0.0.0.0 without TLS: the token and "
                  "every package travel in clear"))
      << s.proc.stderr_text();
  stop(s);
}

TEST_F(Secure, ACertificateWithoutItsKeyIsRefused) {
  const Server s = serve({"--tls-cert", path("cert.pem")}, "half_tls");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "error: --tls-cert and --tls-key go together: give the "
                  "certificate and its private key, or neither"))
      << s.proc.stderr_text();
}

TEST_F(Secure, AMissingCertificateFileIsNamed) {
  const Server s = serve({"--tls-cert", path("nope.pem"), "--tls-key", path("key.pem")}, "no_pem");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(
      has(s.proc.stderr_text(), path("nope.pem").string() + ": cannot open --tls-cert certificate"))
      << s.proc.stderr_text();
}

TEST_F(Secure, ACertificateThatIsNotPemIsNamed) {
  std::ofstream(path("garbage.pem")) << "not a certificate\n";
  const Server s =
      serve({"--tls-cert", path("garbage.pem"), "--tls-key", path("garbage.pem")}, "garbage_pem");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "error: vacc serve: cannot listen on 127.0.0.1:0 (is the port in use, or the "
                  "address not this machine's, or are --tls-cert and --tls-key not a PEM "
                  "certificate and its key?)"))
      << s.proc.stderr_text();
}

TEST_F(Secure, AQueueBoundBelowTheMessageLimitIsRefused) {
  const Server s = serve({"--max-message-mib", "8", "--max-queued-mib", "4"}, "small_queue");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(has(s.proc.stderr_text(),
                  "error: --max-queued-mib 4: must be at least "
                  "--max-message-mib (8), or no request of the largest "
                  "size could ever be admitted"))
      << s.proc.stderr_text();
  const Server t = serve({"--max-queued-mib", "-1"}, "negative_queue");
  EXPECT_EQ(wait_exit(t.proc), 1);
  EXPECT_TRUE(has(t.proc.stderr_text(),
                  "error: --max-queued-mib -1: choose 0 (twice "
                  "--max-message-mib) .. 1048576"))
      << t.proc.stderr_text();
}

TEST_F(Secure, ANegativeTimeLimitIsRefused) {
  const Server s = serve({"--run-time-limit", "-2"}, "negative_time");
  EXPECT_EQ(wait_exit(s.proc), 1);
  EXPECT_TRUE(has(s.proc.stderr_text(), "error: --run-time-limit -2: give seconds (0: no limit)"))
      << s.proc.stderr_text();
}

// Over TLS on loopback, with a token: the run answers what a local run computes; a client that
// does not speak TLS is told to give --tls-ca.
TEST_F(Secure, TlsRunEqualsALocalRun) {
  const Server s = serve(
      {"--tls-cert", path("cert.pem"), "--tls-key", path("key.pem"), "--token-file", path("token")},
      "tls");
  ASSERT_GT(s.port, 0) << s.proc.stderr_text();
  EXPECT_TRUE(has(s.line, "(TLS)")) << s.line;
  const std::string address = fmt::format("localhost:{}", s.port);
  std::string err;
  ASSERT_EQ(run({"run", "--sim", "--engine", "fsim", "--output", path("local.npy")}, "local", &err),
            0)
      << err;
  ASSERT_EQ(run({"run", "--remote", address, "--tls-ca", path("cert.pem"), "--token-file",
                 path("token"), "--output", path("tls.npy")},
                "tls_run", &err),
            0)
      << err << s.proc.stderr_text();
  EXPECT_EQ(slurp(path("tls.npy")), slurp(path("local.npy")));
  EXPECT_FALSE(slurp(path("local.npy")).empty());

  EXPECT_NE(run({"run", "--remote", address, "--token-file", path("token"), "--timeout", "20"},
                "plain_to_tls", &err),
            0);
  EXPECT_TRUE(has(err, "cannot reach the vacc server at " + address)) << err;
  EXPECT_TRUE(has(err, "If it serves TLS, give its certificate with --tls-ca FILE")) << err;
  stop(s);
}

TEST_F(Secure, TlsCaNeedsRemote) {
  std::string err;
  EXPECT_EQ(
      run({"run", "--sim", "--engine", "fsim", "--tls-ca", path("cert.pem")}, "ca_local", &err), 1);
  EXPECT_TRUE(has(err,
                  "error: --tls-ca needs --remote: it names the certificate a vacc server "
                  "presents"))
      << err;
}

TEST_F(Secure, TheServersCycleLimitStopsARun) {
  const Server s = serve({"--run-cycle-limit", "100"}, "cycle_limit");
  ASSERT_GT(s.port, 0) << s.proc.stderr_text();
  std::string err;
  EXPECT_EQ(run({"run", "--remote", fmt::format("127.0.0.1:{}", s.port)}, "over_cycles", &err), 1);
  EXPECT_TRUE(has(err, "refused the run request: the run failed on the server: step ")) << err;
  EXPECT_TRUE(has(err, "over its limit of 100 ")) << err;
  stop(s);
}

TEST_F(Secure, TheServersTimeLimitStopsARun) {
  // 64 images: the first accelerator step alone takes far more than a millisecond on fsim.
  const Server s = serve({"--run-time-limit", "0.001"}, "time_limit");
  ASSERT_GT(s.port, 0) << s.proc.stderr_text();
  std::string err;
  EXPECT_EQ(run({"run", "--remote", fmt::format("127.0.0.1:{}", s.port),
                 VACC_TEST_MODELS_DIR "/fashion_mnist_cnn.onnx", "--input", path("images64.npy")},
                "over_time", &err),
            1);
  EXPECT_TRUE(has(err, "refused the run request: the run failed on the server: step ")) << err;
  EXPECT_TRUE(has(err,
                  "the run passed the server's time limit of 0.001 s per run (vacc serve "
                  "--run-time-limit)"))
      << err;
  EXPECT_FALSE(has_exited(s.proc)) << s.proc.stderr_text();
  stop(s);
}

}  // namespace
}  // namespace vacc::test
