#include "vacc/sweep/resources.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <optional>

#include "vacc/hw/dsp_packing.h"
#include "vacc/support/error.h"

namespace vacc::sweep {

std::vector<RtlMemory> rtl_memories(const isa::HwConfig &c) {
  // vacc_top: INP and WGT; vacc_compute: UOP once per unit, ACC as two half-depth banks, each
  // kept twice (one copy for the units, one read by the store engine).
  const int64_t uop_bits = c.uop_dst_bits() + c.uop_src_bits() + c.uop_wgt_bits();
  return {
      {"inp", int64_t{c.inp_tile_bytes()} * 8, c.inp_depth(), 1},
      {"wgt", int64_t{c.wgt_tile_bytes()} * 8, c.wgt_depth(), 1},
      {"acc", int64_t{c.acc_tile_bytes()} * 8, c.acc_depth() / 2, 4},
      {"uop", uop_bits <= 32 ? 32 : 64, c.uop_depth(), 2},
  };
}

BramTiles bram_tiles(int64_t width, int64_t depth) {
  // 7-series simple-dual-port aspect ratios (UG473): RAMB18 up to 512x36, RAMB36 up to 512x72.
  static const int64_t kRamb18[][2] = {{512, 36}, {1024, 18}, {2048, 9},
                                       {4096, 4}, {8192, 2},  {16384, 1}};
  static const int64_t kRamb36[][2] = {{512, 72}, {1024, 36}, {2048, 18}, {4096, 9},
                                       {8192, 4}, {16384, 2}, {32768, 1}};
  auto tiles = [&](const int64_t(&shape)[2]) {
    return ((width + shape[1] - 1) / shape[1]) * ((depth + shape[0] - 1) / shape[0]);
  };
  int64_t best18 = INT64_MAX, best36 = INT64_MAX;
  for (const auto &s : kRamb18) best18 = std::min(best18, tiles(s));
  for (const auto &s : kRamb36) best36 = std::min(best36, tiles(s));
  // Fewest RAMB36 equivalents; on a tie the RAMB36s (fewer primitives).
  if (2 * best36 <= best18) return {best36, 0};
  return {0, best18};
}

namespace {

enum Resource { kLut, kFf, kDsp };

// DSP48E1s of one ALU lane's acc x acc multiplier keeping the low acc bits: 25x18 partial
// products, less the one that only reaches above bit acc (16 bits: 1; 32 bits: 3).
double alu_multiplier_dsps(int acc_bits) {
  const int a = (acc_bits + 24) / 25, b = (acc_bits + 17) / 18;
  return a * b - (a > 1 && b > 1 ? 1 : 0);
}

// The quantities each resource is linear in (resources.h). A packed core (gemm.dsp_packing,
// resolved as the RTL generator does) multiplies two products per DSP48 and adds the upper
// product's sign correction in fabric: half the array's DSPs, LUTs and FFs per packed MAC. The
// ALU's CLIP (extensions.alu_clip) adds two comparators per lane bit; its held operand
// (extensions.alu_hold) a register and a multiplexer per lane bit; GEMM assign
// (extensions.gemm_assign) a gate on the accumulator operand of each lane bit's adder. SHR_CLIP
// (extensions.alu_shr_clip) clamps the shifter's output with CLIP's comparators: alone it costs
// what CLIP does (the clip column counts either), with CLIP a multiplexer per lane bit in front
// of the shared comparators. STORE INP (extensions.store_inp) puts a multiplexer on each bit
// of INP's write data and address and adds the store engine's INP counters and the fetch
// unit's check of its rows.
std::vector<double> features(Resource r, const isa::HwConfig &c) {
  const double macs = static_cast<double>(c.peak_macs_per_cycle());
  const double lanes = static_cast<double>(c.batch) * c.block_out;
  const bool packed = hw::plan_dsp_packing(c).packed;
  switch (r) {
    case kLut:
    case kFf:
      return {1.0,
              macs,
              lanes * c.acc_bits,
              static_cast<double>(c.bus_bits),
              packed ? macs : 0.0,
              c.alu_clip || c.alu_shr_clip ? lanes * c.acc_bits : 0.0,
              c.alu_hold ? lanes * c.acc_bits : 0.0,
              c.gemm_assign ? lanes * c.acc_bits : 0.0,
              c.alu_clip && c.alu_shr_clip ? lanes * c.acc_bits : 0.0,
              c.store_inp ? c.inp_tile_bytes() * 8.0 + c.inp_index_bits() : 0.0};
    case kDsp:
      return {1.0, packed ? std::ceil(macs / 2) : macs, lanes * alu_multiplier_dsps(c.acc_bits)};
  }
  return {};
}

const char *const kFeatureNames[3][10] = {
    {"1", "macs", "lanes*acc_bits", "bus_bits", "packed_macs", "clip_lanes*acc_bits",
     "hold_lanes*acc_bits", "assign_lanes*acc_bits", "shared_clamp_lanes*acc_bits",
     "store_inp_port_bits"},
    {"1", "macs", "lanes*acc_bits", "bus_bits", "packed_macs", "clip_lanes*acc_bits",
     "hold_lanes*acc_bits", "assign_lanes*acc_bits", "shared_clamp_lanes*acc_bits",
     "store_inp_port_bits"},
    {"1", "gemm_multipliers", "lanes*multiplier_dsps(acc_bits)", "", "", "", "", "", "", ""},
};
const char *const kResourceNames[] = {"LUT", "FF", "DSP"};

double measured(Resource r, const Resources &y) {
  return r == kLut ? y.lut : r == kFf ? y.ff : y.dsp;
}

// Least squares on relative error (each row divided by its measurement); nullopt when the
// samples do not determine every coefficient.
std::optional<std::vector<double>> solve(Resource r, const std::vector<SynthSample> &samples) {
  const int cols =
      static_cast<int>(features(r, samples.empty() ? isa::HwConfig{} : samples[0].config).size());
  const int rows = static_cast<int>(samples.size());
  if (rows < cols) return std::nullopt;
  Eigen::MatrixXd a(rows, cols);
  Eigen::VectorXd b(rows);
  for (int i = 0; i < rows; ++i) {
    const double y = std::max(1.0, measured(r, samples[i].yosys));
    const auto f = features(r, samples[i].config);
    for (int j = 0; j < cols; ++j) a(i, j) = f[j] / y;
    b(i) = measured(r, samples[i].yosys) / y;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  if (qr.rank() < cols) return std::nullopt;
  Eigen::VectorXd x = qr.solve(b);
  return std::vector<double>(x.data(), x.data() + cols);
}

double linear(const std::vector<double> &coef, const std::vector<double> &f) {
  double v = 0;
  for (size_t i = 0; i < coef.size(); ++i) v += coef[i] * f[i];
  return std::max(0.0, v);
}

double bram_count(const isa::HwConfig &c) {
  double total = 0;
  for (const RtlMemory &m : rtl_memories(c))
    total += m.copies * bram_tiles(m.width, m.depth).equivalent();
  return total;
}

void accumulate(ModelError &e, const Resources &est, const Resources &y) {
  auto pct = [](double est, double ref) {
    return 100.0 * std::abs(est - ref) / std::max(1.0, ref);
  };
  const double p[4] = {pct(est.lut, y.lut), pct(est.ff, y.ff), pct(est.dsp, y.dsp),
                       pct(est.bram, y.bram)};
  double *mean[4] = {&e.mean_pct.lut, &e.mean_pct.ff, &e.mean_pct.dsp, &e.mean_pct.bram};
  double *worst[4] = {&e.max_pct.lut, &e.max_pct.ff, &e.max_pct.dsp, &e.max_pct.bram};
  for (int i = 0; i < 4; ++i) {
    *mean[i] += p[i];
    *worst[i] = std::max(*worst[i], p[i]);
  }
  ++e.samples;
}

void finish(ModelError &e) {
  if (!e.samples) return;
  for (double *m : {&e.mean_pct.lut, &e.mean_pct.ff, &e.mean_pct.dsp, &e.mean_pct.bram})
    *m /= e.samples;
}

}  // namespace

ResourceModel ResourceModel::fit(const std::vector<SynthSample> &samples) {
  ResourceModel m;
  for (Resource r : {kLut, kFf, kDsp}) {
    auto coef = solve(r, samples);
    if (!coef) {
      std::vector<std::string> varied;
      for (size_t i = 1; i < features(r, isa::HwConfig{}).size(); ++i)
        varied.push_back(kFeatureNames[r][i]);
      fail("the resource model's {} fit is undetermined by {} Yosys samples: they must vary {}",
           kResourceNames[r], samples.size(), fmt::join(varied, ", "));
    }
    (r == kLut ? m.lut_ : r == kFf ? m.ff_ : m.dsp_) = *coef;
  }
  return m;
}

Resources ResourceModel::estimate(const isa::HwConfig &c) const {
  Resources r;
  r.lut = linear(lut_, features(kLut, c));
  r.ff = linear(ff_, features(kFf, c));
  r.dsp = linear(dsp_, features(kDsp, c));
  r.bram = bram_count(c);
  return r;
}

ModelError ResourceModel::cross_validate(const std::vector<SynthSample> &samples) {
  ModelError e;
  for (size_t i = 0; i < samples.size(); ++i) {
    std::vector<SynthSample> rest = samples;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    ResourceModel m;
    bool determined = true;
    for (Resource r : {kLut, kFf, kDsp}) {
      auto coef = solve(r, rest);
      if (!coef)
        determined = false;
      else
        (r == kLut ? m.lut_ : r == kFf ? m.ff_ : m.dsp_) = *coef;
    }
    if (determined) accumulate(e, m.estimate(samples[i].config), samples[i].yosys);
  }
  finish(e);
  return e;
}

ModelError ResourceModel::error_on(const std::vector<SynthSample> &samples) const {
  ModelError e;
  for (const auto &s : samples) accumulate(e, estimate(s.config), s.yosys);
  finish(e);
  return e;
}

std::string ResourceModel::describe() const {
  std::string out;
  const std::vector<double> *coefs[] = {&lut_, &ff_, &dsp_};
  for (int r = 0; r < 3; ++r) {
    out += fmt::format("{} =", kResourceNames[r]);
    for (size_t i = 0; i < coefs[r]->size(); ++i)
      out += fmt::format(" {:+.4g}*{}", (*coefs[r])[i], kFeatureNames[r][i]);
    out += "\n";
  }
  out += "BRAM = sum over the RTL's memories of their RAMB36/RAMB18 tiling\n";
  return out;
}

std::vector<SynthSample> parse_samples(const std::string &yaml_text, const std::string &source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException &e) {
    fail("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg);
  }
  const YAML::Node &list = root["samples"];
  if (!list || !list.IsSequence()) fail("{}: expected a list under 'samples'", source);
  std::vector<SynthSample> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node &s = list[i];
    const std::string where = fmt::format("{}: samples[{}]", source, i);
    if (!s["config"] || !s["yosys"]) fail("{}: needs 'config' and 'yosys'", where);
    SynthSample sample;
    sample.name = s["name"] ? s["name"].as<std::string>() : fmt::format("sample{}", i);
    YAML::Emitter config;
    config << s["config"];
    sample.config = isa::parse_config(config.c_str(), where + " (" + sample.name + ")");
    try {
      const YAML::Node &y = s["yosys"];
      sample.yosys.lut = y["lut"].as<double>();
      sample.yosys.ff = y["ff"].as<double>();
      sample.yosys.dsp = y["dsp"].as<double>();
      sample.yosys.bram = y["ramb36"].as<double>() + y["ramb18"].as<double>() / 2;
    } catch (const YAML::Exception &) {
      fail("{} ({}): 'yosys' needs numbers lut, ff, dsp, ramb36, ramb18", where, sample.name);
    }
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace vacc::sweep
