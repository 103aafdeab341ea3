// Conv chains against their two convolutions run apart: MobileNetV2's depthwise -> project
// pairs and ResNet-50's 3x3 -> 1x1 pairs (their shapes at 224x224, batch 1), each compiled with
// its default schedule(s) for a config with extensions.store_inp, run on perf with random int8
// data, the chain's output checked bit for bit against the pair's. Prints per pair the perf
// cycles and DRAM bytes (the counters) of both, the cost model's ratio (chain / apart, what
// chain_convs decides by without tuned cycles) and the chain's schedule; a chain that does not
// fit the config's scratchpads says so.
// Usage: bench_conv_chain [CONFIG.yaml]   (default: configs/default.yaml with store_inp on)
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"

namespace {

using namespace vacc;  // NOLINT: a benchmark program

struct Pair {
  std::string name;
  int64_t hw, in_c, mid_c, out_c, k, stride, groups;
};

lower::ConvChainParams params(const isa::HwConfig &c, const Pair &p) {
  // Channels padded to the blocks as pack_layout pads them; a depthwise convolution is one
  // group per channel block (its weight tiles diagonal in a model; random here).
  auto padded = [](int64_t ch, int64_t block) { return (ch + block - 1) / block * block; };
  lower::ConvChainParams ch;
  lower::Conv2dParams &a = ch.first;
  a.batch = c.batch;
  a.in_channels = padded(p.in_c, c.block_in);
  a.out_channels = padded(p.mid_c, c.block_out);
  a.height = a.width = p.hw;
  a.kernel_h = a.kernel_w = p.k;
  a.stride_h = a.stride_w = p.stride;
  a.pad_h = a.pad_w = p.k / 2;
  a.groups = p.groups == 1 ? 1 : a.out_channels / c.block_out;
  a.requant = {8, true};
  lower::Conv2dParams &b = ch.second;
  b.batch = a.batch;
  b.in_channels = a.out_channels;
  b.out_channels = padded(p.out_c, c.block_out);
  b.height = a.out_height();
  b.width = a.out_width();
  b.kernel_h = b.kernel_w = 1;
  b.pad_h = b.pad_w = 0;
  b.requant = {8, false};
  return ch;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, bool small) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto &x : v) x = static_cast<uint8_t>(small ? rng() % 8 : rng());
  return v;
}

struct Run {
  uint64_t cycles = 0, dram_bytes = 0;
  std::vector<uint8_t> out;
};

// Runs `layer` on perf with `inputs` (one per argument but the output, which starts zeroed).
Run run(const isa::HwConfig &c, const lower::LoweredLayer &layer,
        std::vector<std::vector<uint8_t>> inputs) {
  const isa::CommandBuffer &out = layer.commands.buffers.back();
  inputs.emplace_back(out.elements * c.tile_bytes(out.mem), 0);
  auto device = driver::open_device("perf", c);
  const runtime::ListRun r = runtime::run_command_list(*device, c, layer.commands, inputs);
  return {r.counters.at("cycles"),
          r.counters.at("dram_read_bytes") + r.counters.at("dram_write_bytes"), r.buffers.back()};
}

// Bytes of argument `i` of `layer` (its elements of its memory kind).
size_t arg_bytes(const isa::HwConfig &c, const lower::LoweredLayer &layer, size_t i) {
  const isa::CommandBuffer &b = layer.commands.buffers[i];
  return b.elements * c.tile_bytes(b.mem);
}

}  // namespace

int main(int argc, char **argv) {
  try {
    isa::HwConfig c =
        isa::load_config(argc > 1 ? argv[1] : std::string(VACC_BENCH_CONFIG_DIR) + "/default.yaml");
    c.store_inp = true;
    const std::vector<Pair> pairs = {
        {"mbv2 dw 144@56 -> 24", 56, 144, 144, 24, 3, 1, 144},
        {"mbv2 dw 192@28 -> 32", 28, 192, 192, 32, 3, 1, 192},
        {"mbv2 dw 384@14 -> 64", 14, 384, 384, 64, 3, 1, 384},
        {"mbv2 dw 576@14 -> 96", 14, 576, 576, 96, 3, 1, 576},
        {"mbv2 dw 960@7 -> 160", 7, 960, 960, 160, 3, 1, 960},
        {"mbv2 dw 96@112 s2 -> 24", 112, 96, 96, 24, 3, 2, 96},
        {"mbv2 dw 576@14 s2 -> 160", 14, 576, 576, 160, 3, 2, 576},
        {"r50 3x3 64@56 -> 256", 56, 64, 64, 256, 3, 1, 1},
        {"r50 3x3 128@28 -> 512", 28, 128, 128, 512, 3, 1, 1},
        {"r50 3x3 256@14 -> 1024", 14, 256, 256, 1024, 3, 1, 1},
        {"r50 3x3 512@7 -> 2048", 7, 512, 512, 2048, 3, 1, 1},
    };
    fmt::print("config {} (store_inp on): perf cycles and DRAM bytes, apart vs chained\n", c.name);
    fmt::print("{:<26} {:>10} {:>10} {:>7} {:>11} {:>11} {:>7}  {}\n", "pair", "apart", "chain",
               "ratio", "bytes apart", "bytes chain", "ratio", "chain schedule");
    uint64_t total_apart = 0, total_chain = 0;
    for (const Pair &p : pairs) {
      const lower::ConvChainParams ch = params(c, p);
      const lower::LoweredLayer first = lower::compile_conv2d(c, ch.first, {}, "first");
      const lower::LoweredLayer second = lower::compile_conv2d(c, ch.second, {}, "second");
      std::vector<std::vector<uint8_t>> a_in;
      for (size_t i = 0; i + 1 < first.commands.buffers.size(); ++i)
        a_in.push_back(random_bytes(arg_bytes(c, first, i), 10 + i, i == 2));
      std::vector<std::vector<uint8_t>> b_w;
      for (size_t i = 1; i + 1 < second.commands.buffers.size(); ++i)
        b_w.push_back(random_bytes(arg_bytes(c, second, i), 20 + i, i == 2));
      const Run ra = run(c, first, a_in);
      std::vector<std::vector<uint8_t>> b_in = {ra.out};
      b_in.insert(b_in.end(), b_w.begin(), b_w.end());
      const Run rb = run(c, second, b_in);
      const uint64_t apart = ra.cycles + rb.cycles, apart_bytes = ra.dram_bytes + rb.dram_bytes;
      std::string chained = "does not fit", ratio = "-", bytes = "-", bratio = "-", sched;
      try {
        const lower::LoweredLayer chain = lower::lower(c, lower::Layer{"chain", ch}, {});
        std::vector<std::vector<uint8_t>> c_in = a_in;
        c_in.insert(c_in.end(), b_w.begin(), b_w.end());
        const Run rc = run(c, chain, c_in);
        if (rc.out != rb.out) fail("{}: the chain's output differs from the pair's", p.name);
        chained = fmt::format("{}", rc.cycles);
        ratio = fmt::format("{:.3f}", double(rc.cycles) / double(apart));
        bytes = fmt::format("{}", rc.dram_bytes);
        bratio = fmt::format("{:.3f}", double(rc.dram_bytes) / double(apart_bytes));
        const double m_apart = lower::modelled_cycles(c, ch.first, 2, "first") +
                               lower::modelled_cycles(c, ch.second, 2, "second");
        sched = fmt::format("model {:.3f}  {}", lower::modelled_cycles(c, ch, 2, "chain") / m_apart,
                            lower::describe(chain.schedule));
        total_apart += apart;
        total_chain += rc.cycles;
      } catch (const Error &e) {
        sched = e.what();
      }
      fmt::print("{:<26} {:>10} {:>10} {:>7} {:>11} {:>11} {:>7}  {}\n", p.name, apart, chained,
                 ratio, apart_bytes, bytes, bratio, sched);
    }
    if (total_apart)
      fmt::print("pairs that fit: {} cycles apart, {} chained ({:.3f})\n", total_apart, total_chain,
                 double(total_chain) / double(total_apart));
  } catch (const Error &e) {
    fmt::print(stderr, "bench_conv_chain: {}\n", e.what());
    return 1;
  }
  return 0;
}
