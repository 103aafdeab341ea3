// `vacc serve`: runs packages sent by `vacc run --remote` on this machine's engine (xrt on a
// board with an FPGA; rtl, perf or fsim without one), one at a time, over gRPC
// (remote/server.h). Prints "listening on HOST:PORT" once ready; stops on SIGINT or SIGTERM.
#include <fmt/format.h>
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "commands.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/remote/protocol.h"
#include "vacc/remote/server.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {

namespace {

struct ServeArgs {
  std::string bind = "127.0.0.1", engine = "rtl", config = "default", token_file;
  std::string cpu = "reference", xclbin, device, tls_cert, tls_key;
  int port = 9091;
  bool insecure = false;
  int64_t max_message_mib = remote::kDefaultMaxMessageBytes >> 20, max_queued_mib = 0;
  double queue_timeout = 600, run_time_limit = 600;
  uint64_t run_cycle_limit = sim::kDefaultCycleLimit;
};

void serve(const ServeArgs &a) {
  // gRPC's handler threads would each grow a malloc arena of their own with the requests'
  // buffers, which glibc keeps: with 8 clients, some giving up mid-run, the server's resident
  // memory grew 90 -> 106 MB over 1 600 requests; with two arenas it stays flat (remote_soak).
  mallopt(M_ARENA_MAX, 2);
  const std::string config_path = isa::resolve_config_path(a.config);
  const isa::HwConfig config = isa::load_config(config_path);
  if (a.port < 0 || a.port > 65535) fail("--port {}: choose 0..65535 (0: any free port)", a.port);
  if (a.max_message_mib < 1 || a.max_message_mib > 2047)
    fail("--max-message-mib {}: choose 1..2047", a.max_message_mib);
  if (!(a.queue_timeout > 0)) fail("--queue-timeout {}: must be positive", a.queue_timeout);
  if (!(a.run_time_limit >= 0))
    fail("--run-time-limit {}: give seconds (0: no limit)", a.run_time_limit);
  if (a.max_queued_mib < 0 || a.max_queued_mib > (int64_t{1} << 20))
    fail("--max-queued-mib {}: choose 0 (twice --max-message-mib) .. 1048576",
         a.max_queued_mib);
  if (a.engine != "xrt" && (!a.xclbin.empty() || !a.device.empty()))
    fail("--xclbin and --device need --engine xrt");

  driver::DeviceOptions device_options;
  device_options.xclbin = a.xclbin;
  device_options.xrt_device = a.device;
  device_options.cycle_limit = a.run_cycle_limit;
  // Open the engine once now, so that a missing board or model is reported at start, not to
  // the first client.
  open_engine(a.engine, config, device_options);

  remote::ServerOptions o;
  o.host = a.bind;
  o.insecure = a.insecure;
  if (!a.tls_cert.empty()) o.tls_cert_pem = read_file(a.tls_cert, "--tls-cert certificate");
  if (!a.tls_key.empty()) o.tls_key_pem = read_file(a.tls_key, "--tls-key private key");
  o.port = a.port;
  o.engine = a.engine;
  o.config = config;
  o.config_yaml = read_file(config_path, "config file");
  if (!a.token_file.empty()) o.token = remote::read_token_file(a.token_file);
  o.max_message_bytes = a.max_message_mib << 20;
  o.max_queued_bytes = a.max_queued_mib << 20;
  o.queue_timeout_seconds = a.queue_timeout;
  o.run_time_limit_seconds = a.run_time_limit;
  o.cpu = a.cpu;
  if (a.cpu != "reference" && a.cpu != "llvm") fail("--cpu '{}': choose reference or llvm", a.cpu);
  o.host_kernels = [cpu = a.cpu](const isa::Package &p) { return make_host_kernels(cpu, p); };
  o.open_device = [engine = a.engine, config, device_options] {
    return open_engine(engine, config, device_options);
  };

  // SIGINT / SIGTERM end the server from a thread of its own (gRPC's Shutdown is not
  // async-signal-safe). Blocked before gRPC starts its threads, so they inherit the mask.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  remote::Server server(std::move(o));
  fmt::print("listening on {}:{}{}\n", a.bind, server.port(), server.tls() ? " (TLS)" : "");
  std::fflush(stdout);
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop, &sig);
    fmt::print(stderr, "vacc serve: {} received, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    server.shutdown();
  });
  server.wait();
  stopper.join();
}

}  // namespace

void add_serve_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "serve", "Run packages sent by `vacc run --remote` on this machine's engine (gRPC)");
  auto a = std::make_shared<ServeArgs>();
  cmd->add_option("--port", a->port, "TCP port (0: any free port, printed at start)")
      ->capture_default_str();
  cmd->add_option("--bind", a->bind,
                  "Address to listen on; another than loopback needs --token-file (or "
                  "--insecure)")
      ->capture_default_str();
  cmd->add_flag("--insecure", a->insecure,
                "Serve an address other machines reach without a token (anyone there can run "
                "programs)");
  cmd->add_option("--tls-cert", a->tls_cert, "TLS: the server's certificate (PEM)");
  cmd->add_option("--tls-key", a->tls_key, "TLS: the certificate's private key (PEM)");
  cmd->add_option("--max-queued-mib", a->max_queued_mib,
                  "Requests waiting or running together, MiB; more are answered busy (0: twice "
                  "--max-message-mib)")
      ->capture_default_str();
  cmd->add_option("--run-cycle-limit", a->run_cycle_limit,
                  "Cycles one accelerator step may take before the run is stopped (0: none)")
      ->capture_default_str();
  cmd->add_option("--run-time-limit", a->run_time_limit,
                  "Seconds of wall time one run may take on the accelerator (0: none)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine,
                  "xrt (the FPGA board), rtl (cycle-accurate simulator), perf or fsim")
      ->capture_default_str();
  cmd->add_option("--config", a->config,
                  "The hardware config the engine implements (clients compile for it)")
      ->capture_default_str();
  cmd->add_option("--token-file", a->token_file,
                  "A file holding a shared secret that every request must carry");
  cmd->add_option("--cpu", a->cpu, "CPU kernels for CPU steps: reference or llvm")
      ->capture_default_str();
  cmd->add_option("--max-message-mib", a->max_message_mib,
                  "Largest request or answer (a package with its inputs), MiB")
      ->capture_default_str();
  cmd->add_option("--queue-timeout", a->queue_timeout,
                  "Seconds a request may wait for the runs before it")
      ->capture_default_str();
  cmd->add_option("--xclbin", a->xclbin, "--engine xrt: the bitstream (default: $VACC_XCLBIN)");
  cmd->add_option("--device", a->device, "--engine xrt: board index or BDF");
  cmd->callback([a] { serve(*a); });
}

}  // namespace vacc::cli
