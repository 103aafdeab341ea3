#include "layer_bench.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "vacc/lower/host_layout.h"
#include "vacc/lower/lower.h"
#include "vacc/driver/device.h"
#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"

namespace vacc::bench {

extern const char *const kResnet18ConvsYaml;

namespace {

using lower::LoweredLayer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<int64_t> random_values(size_t n, int64_t lo, int64_t hi, std::mt19937 &rng) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(n);
  for (auto &x : v) x = d(rng);
  return v;
}

// The plain convolution every layer is checked against: NCHW data, OIHW weights, int32
// accumulation (wrapping), bias, arithmetic shift, clip, int8.
std::vector<int64_t> reference_conv(const lower::Conv2dParams &p, const std::vector<int64_t> &x,
                                    const std::vector<int64_t> &w,
                                    const std::vector<int64_t> &bias) {
  const int64_t N = p.batch, C = p.in_channels, O = p.out_channels, H = p.height, W = p.width;
  const int64_t KH = p.kernel_h, KW = p.kernel_w, OH = p.out_height(), OW = p.out_width();
  std::vector<int64_t> out(N * O * OH * OW);
  std::vector<int64_t> acc(OH * OW);
  const int64_t hi = 127, lo = p.requant.relu ? 0 : -128;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t wv = w[((o * C + c) * KH + kh) * KW + kw];
            for (int64_t oh = 0; oh < OH; ++oh) {
              const int64_t y = oh * p.stride_h + kh - p.pad_h;
              if (y < 0 || y >= H) continue;
              const int64_t *row = &x[((n * C + c) * H + y) * W];
              int64_t *arow = &acc[oh * OW];
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t xx = ow * p.stride_w + kw - p.pad_w;
                if (xx >= 0 && xx < W) arow[ow] += row[xx] * wv;
              }
            }
          }
      for (int64_t i = 0; i < OH * OW; ++i) {
        const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[i] + bias[o]));
        const int64_t v = int64_t{a} >> p.requant.shift;
        out[(n * O + o) * OH * OW + i] = std::min(std::max(v, lo), hi);
      }
    }
  return out;
}

std::vector<uint8_t> to_bytes(const std::vector<int64_t> &v, int bits) {
  const int nb = bits / 8;
  std::vector<uint8_t> out(v.size() * nb);
  for (size_t i = 0; i < v.size(); ++i)
    for (int b = 0; b < nb; ++b)
      out[i * nb + b] = static_cast<uint8_t>(static_cast<uint64_t>(v[i]) >> (8 * b));
  return out;
}

double roofline(uint64_t macs, uint64_t bytes, const isa::HwConfig &c) {
  if (bytes == 0) return 1.0;
  const double attainable = double(macs) / double(bytes) * c.mem_bytes_per_cycle;
  return std::min(1.0, attainable / double(c.peak_macs_per_cycle()));
}

}  // namespace

std::vector<ConvLayerSpec> parse_conv_layers(const std::string &text, const std::string &source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    fail("{}: {}", source, e.what());
  }
  if (!root["layers"] || !root["layers"].IsSequence())
    fail("{}: expected a `layers:` list", source);
  std::vector<ConvLayerSpec> out;
  for (const auto &n : root["layers"]) {
    ConvLayerSpec s;
    s.name = n["name"] ? n["name"].as<std::string>() : fmt::format("layer{}", out.size() + 1);
    auto get = [&](const char *key) -> int64_t {
      if (!n[key]) fail("{}: layer {} has no `{}`", source, s.name, key);
      try {
        return n[key].as<int64_t>();
      } catch (const YAML::Exception &) {
        fail("{}: layer {}: `{}` must be an integer", source, s.name, key);
      }
    };
    s.h = get("h");
    s.w = get("w");
    s.ic = get("ic");
    s.oc = get("oc");
    s.k = get("k");
    s.stride = get("stride");
    s.pad = get("pad");
    out.push_back(s);
  }
  return out;
}

std::vector<ConvLayerSpec> resnet18_convs() {
  return parse_conv_layers(kResnet18ConvsYaml, "bench/resnet18_convs.yaml");
}

lower::Conv2dParams plain_conv_params(const ConvLayerSpec &spec) {
  lower::Conv2dParams p;
  p.batch = 1;
  p.in_channels = spec.ic;
  p.out_channels = spec.oc;
  p.height = spec.h;
  p.width = spec.w;
  p.kernel_h = p.kernel_w = spec.k;
  p.stride_h = p.stride_w = spec.stride;
  p.pad_h = p.pad_w = spec.pad;
  const int64_t terms = spec.ic * spec.k * spec.k;
  // Outputs spread over the int8 range: products of two uniform int8 values have a standard
  // deviation near 5.5e3, a sum of `terms` of them sqrt(terms) times that.
  p.requant.shift =
      std::max(0, static_cast<int>(std::lround(std::log2(std::sqrt(double(terms)) * 5461 / 48))));
  p.requant.relu = true;
  if (p.out_height() <= 0 || p.out_width() <= 0)
    fail("layer {}: the kernel is larger than the padded input", spec.name);
  return p;
}

lower::Conv2dParams accel_conv_params(const isa::HwConfig &c, const ConvLayerSpec &spec,
                                      bool fold) {
  const lower::Conv2dParams p = plain_conv_params(spec);
  return fold && lower::should_fold(c, p) ? lower::folded_conv(c, p) : lower::blocked_conv(c, p);
}

LayerResult run_conv_layer(const isa::HwConfig &c, const ConvLayerSpec &spec,
                           const LayerBenchOptions &options) {
  const lower::Conv2dParams p = plain_conv_params(spec);
  const int64_t terms = spec.ic * spec.k * spec.k;
  LayerResult r;
  r.name = spec.name;
  r.macs = uint64_t(p.batch) * p.out_channels * terms * p.out_height() * p.out_width();
  std::mt19937 rng(options.seed * 7919u + static_cast<uint32_t>(spec.name.size() * 131 + spec.ic));
  const auto x = random_values(p.batch * p.in_channels * p.height * p.width, -128, 127, rng);
  const auto w = random_values(p.out_channels * terms, -128, 127, rng);
  const int64_t half = p.requant.shift > 0 ? int64_t{1} << (p.requant.shift - 1) : 0;
  auto bias = random_values(p.out_channels, -4 * half - 1, 4 * half + 1, rng);
  for (auto &b : bias) b += half;  // the rounding constant of docs/quantization.md

  const auto t0 = Clock::now();
  r.folded = options.fold && lower::should_fold(c, p);
  const lower::Conv2dParams acc_p = accel_conv_params(c, spec, options.fold);
  lower::LowerOptions lo;
  lo.vthreads = options.vthreads;
  lo.schedule = options.schedule;
  lo.verify = false;
  LoweredLayer layer = lower::compile_conv2d(c, acc_p, lo, spec.name);
  r.compile_s = seconds_since(t0);
  if (const char *dir = std::getenv("VACC_BENCH_DUMP")) {
    // The layer's command list as text, for looking at what a schedule generates.
    std::ofstream(fmt::format("{}/{}.txt", dir, spec.name)) << isa::to_text(layer.commands);
  }
  const auto &s = layer.schedule;
  r.schedule = fmt::format("{}x{} oc{} ic{} vt{}{}", s.tile_h, s.tile_w, s.tile_oc, s.tile_ic,
                           s.vthreads, s.vthread_rows ? " rows" : "");

  std::vector<std::vector<uint8_t>> buffers(4);
  buffers[0] = to_bytes(
      r.folded ? lower::fold_data(c, p, x)
               : lower::pack_data(c, p.batch, p.in_channels, p.height, p.width, x),
      c.inp_bits);
  buffers[1] = to_bytes(r.folded ? lower::fold_weight(c, p, w)
                                 : lower::pack_weight(c, p.out_channels, p.in_channels,
                                                               p.kernel_h, p.kernel_w, w),
                        c.wgt_bits);
  buffers[2] = to_bytes(lower::pack_bias(c, p.batch, p.out_channels, bias), c.acc_bits);
  const auto t1 = Clock::now();
  std::unique_ptr<driver::Device> owned;
  driver::Device *device = options.device;
  if (!device) {
    driver::DeviceOptions o;
    o.timing_only = options.timing_only;
    o.build_rtl_model = options.build_rtl_model;
    if (const char *dir = std::getenv("VACC_BENCH_TIMELINE"))
      o.timeline_path = fmt::format("{}/{}.json", dir, spec.name);  // rtl, perf: a timeline
    owned = driver::open_device(options.engine, c, o);
    device = owned.get();
  }
  runtime::ListRun run = runtime::run_command_list(*device, c, layer.commands, buffers);
  r.run_s = seconds_since(t1);
  r.counters = run.counters;

  std::vector<int64_t> out_blocked(run.buffers[3].size());
  for (size_t i = 0; i < out_blocked.size(); ++i)
    out_blocked[i] = static_cast<int8_t>(run.buffers[3][i]);
  const auto got = lower::unpack_output(c, p.batch, p.out_channels, p.out_height(),
                                                 p.out_width(), out_blocked);
  if (!options.timing_only) {
    const auto want = reference_conv(p, x, w, bias);
    r.outputs = want.size();
    for (size_t i = 0; i < want.size(); ++i) r.mismatches += got[i] != want[i];
  }

  if (auto it = run.counters.find("cycles"); it != run.counters.end() && it->second > 0) {
    r.cycles = it->second;
    r.utilization = double(r.macs) / (double(it->second) * c.peak_macs_per_cycle());
  }
  r.executed_macs = run.counters.count("macs")
                        ? run.counters.at("macs")
                        : uint64_t(acc_p.batch) * acc_p.out_channels * acc_p.in_channels *
                              acc_p.kernel_h * acc_p.kernel_w * acc_p.out_height() *
                              acc_p.out_width();
  r.insns = run.counters.count("runtime_insns") ? run.counters.at("runtime_insns") : 0;
  const auto &t = layer.traffic;
  r.moved_bytes = t.data_bytes() + t.uop_bytes + r.insns * isa::kInsnBytes;
  r.compulsory_bytes =
      uint64_t(p.batch) * p.in_channels * p.height * p.width * c.inp_bits / 8 +
      uint64_t(p.out_channels) * terms * c.wgt_bits / 8 +
      uint64_t(p.out_channels) * c.acc_bits / 8 +
      uint64_t(p.batch) * p.out_channels * p.out_height() * p.out_width() * c.out_bits() / 8;
  r.roofline = roofline(r.macs, r.moved_bytes, c);
  r.roofline_compulsory = roofline(r.macs, r.compulsory_bytes, c);
  return r;
}

}  // namespace vacc::bench
