#include "vacc/isa/config.h"
#include "vacc/isa/config_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include "vacc/isa/encoding.h"
#include "vacc/isa/yaml_octal.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::isa {

const char *mem_id_name(MemId id) {
  switch (id) {
    case MemId::kUop: return "uop";
    case MemId::kWgt: return "wgt";
    case MemId::kInp: return "inp";
    case MemId::kAcc: return "acc";
    case MemId::kOut: return "out";
  }
  return "?";
}

const char *dsp_packing_name(DspPacking packing) {
  switch (packing) {
    case DspPacking::kAuto:
      return "auto";
    case DspPacking::kOff:
      return "off";
    case DspPacking::kOn:
      return "on";
  }
  return "?";
}

namespace {

int log2_ceil(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// One accepted key: where its value goes and which rule it obeys.
struct KeySpec {
  std::function<void(HwConfig &, const YAML::Node &, const std::string &key)> parse;
};

class ConfigReader {
 public:
  explicit ConfigReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void error(const std::string &key, const std::string &rule) const {
    fail("{}: key '{}': {}", source_, key, rule);
  }

  int integer(const YAML::Node &node, const std::string &key) const {
    if (!node.IsScalar()) error(key, "expected an integer, found a " + kind(node));
    if (has_octal_spelling(node.Scalar())) error(key, octal_spelling_message(node.Scalar()));
    try {
      return node.as<int>();
    } catch (const YAML::Exception &) {
      error(key, fmt::format("expected an integer, found '{}'", node.Scalar()));
    }
  }

  double number(const YAML::Node &node, const std::string &key) const {
    if (!node.IsScalar()) error(key, "expected a number, found a " + kind(node));
    try {
      return node.as<double>();
    } catch (const YAML::Exception &) {
      error(key, fmt::format("expected a number, found '{}'", node.Scalar()));
    }
  }

  std::string text(const YAML::Node &node, const std::string &key) const {
    if (!node.IsScalar()) error(key, "expected a string, found a " + kind(node));
    return node.Scalar();
  }

  static std::string kind(const YAML::Node &node) {
    if (node.IsMap()) return "mapping";
    if (node.IsSequence()) return "list";
    if (node.IsNull()) return "null";
    return "scalar";
  }

 private:
  std::string source_;
};

using IntField = int HwConfig::*;

// The schema: section -> key -> field. Everything not listed is an unknown key.
const std::map<std::string, std::map<std::string, IntField>> &int_schema() {
  static const std::map<std::string, std::map<std::string, IntField>> schema = {
      {"gemm",
       {{"batch", &HwConfig::batch},
        {"block_in", &HwConfig::block_in},
        {"block_out", &HwConfig::block_out}}},
      {"dtype",
       {{"inp_bits", &HwConfig::inp_bits},
        {"wgt_bits", &HwConfig::wgt_bits},
        {"acc_bits", &HwConfig::acc_bits}}},
      {"buffers",
       {{"uop_kib", &HwConfig::uop_kib},
        {"inp_kib", &HwConfig::inp_kib},
        {"wgt_kib", &HwConfig::wgt_kib},
        {"acc_kib", &HwConfig::acc_kib}}},
      {"memory",
       {{"bus_bits", &HwConfig::bus_bits},
        {"latency_cycles", &HwConfig::mem_latency_cycles},
        {"bytes_per_cycle", &HwConfig::mem_bytes_per_cycle}}},
      {"queues",
       {{"insn_depth", &HwConfig::insn_queue_depth},
        {"token_depth", &HwConfig::token_queue_depth}}},
  };
  return schema;
}

// Keys of a section whose value is a word rather than an integer.
const std::map<std::string, std::vector<std::string>> &word_keys() {
  static const std::map<std::string, std::vector<std::string>> keys = {{"gemm", {"dsp_packing"}}};
  return keys;
}

std::string known_keys(const std::string &section, const std::map<std::string, IntField> &keys) {
  std::vector<std::string> names;
  for (const auto &[k, _] : keys) names.push_back(k);
  if (auto words = word_keys().find(section); words != word_keys().end())
    names.insert(names.end(), words->second.begin(), words->second.end());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto &k : names) out += (out.empty() ? "" : ", ") + k;
  return out;
}

DspPacking parse_dsp_packing(const ConfigReader &reader, const YAML::Node &node,
                             const std::string &key) {
  const std::string word = reader.text(node, key);
  for (DspPacking p : {DspPacking::kAuto, DspPacking::kOff, DspPacking::kOn}) {
    if (word == dsp_packing_name(p)) return p;
  }
  // YAML 1.1 tools (PyYAML) read on/off as booleans and write them back as true/false.
  if (word == "true") return DspPacking::kOn;
  if (word == "false") return DspPacking::kOff;
  reader.error(key, fmt::format("must be auto, off or on (or true or false), got '{}'", word));
}

// The ISA extensions: key under `extensions` -> field; each takes `on` or `off`.
const std::map<std::string, bool HwConfig::*> &extension_keys() {
  static const std::map<std::string, bool HwConfig::*> keys = {
      {"alu_clip", &HwConfig::alu_clip},
      {"alu_hold", &HwConfig::alu_hold},
      {"alu_shr_clip", &HwConfig::alu_shr_clip},
      {"gemm_assign", &HwConfig::gemm_assign},
      {"store_inp", &HwConfig::store_inp}};
  return keys;
}

void parse_extensions(const ConfigReader &reader, const YAML::Node &value, HwConfig &config) {
  std::string known;
  for (const auto &[k, _] : extension_keys()) known += (known.empty() ? "" : ", ") + k;
  if (!value.IsMap()) reader.error("extensions", "expected a mapping with keys " + known);
  for (const auto &f : value) {
    const std::string sub = f.first.Scalar(), key = "extensions." + sub;
    auto field = extension_keys().find(sub);
    if (field == extension_keys().end())
      reader.error(key, fmt::format("unknown key (known: {})", known));
    // true/false too: YAML 1.1 tools (PyYAML) read on/off as booleans and write them so.
    const std::string word = reader.text(f.second, key);
    if (word != "on" && word != "off" && word != "true" && word != "false")
      reader.error(key, fmt::format("must be on or off (or true or false), got '{}'", word));
    config.*(field->second) = word == "on" || word == "true";
  }
}

// Rule checks, each naming the key it concerns.
void check_rules(const HwConfig &c, const std::string &src) {
  auto bad = [&](const std::string &key, const std::string &rule) {
    fail("{}: key '{}': {}", src, key, rule);
  };
  auto pow2 = [&](const std::string &key, int64_t v, int64_t lo, int64_t hi) {
    if (!is_pow2(v) || v < lo || v > hi)
      bad(key, fmt::format("must be a power of two between {} and {}, got {}", lo, hi, v));
  };
  pow2("gemm.batch", c.batch, 1, 64);
  pow2("gemm.block_in", c.block_in, 1, 256);
  pow2("gemm.block_out", c.block_out, 1, 256);
  if (c.dsp_packing == DspPacking::kOn && c.block_out < 2 && c.batch < 2)
    bad("gemm.dsp_packing",
        fmt::format("'on' pairs two products that share an operand, which needs gemm.block_out "
                    "or gemm.batch of at least 2 (got {}x{}x{}); use 'off' or 'auto'",
                    c.batch, c.block_in, c.block_out));
  if (c.inp_bits != 8)
    bad("dtype.inp_bits", fmt::format("must be 8 (vacc's data path is int8), got {}", c.inp_bits));
  if (c.wgt_bits != 8)
    bad("dtype.wgt_bits", fmt::format("must be 8 (vacc's data path is int8), got {}", c.wgt_bits));
  if (c.acc_bits != 16 && c.acc_bits != 32)
    bad("dtype.acc_bits", fmt::format("must be 16 or 32, got {}", c.acc_bits));
  if (c.store_inp && c.block_in != c.block_out)
    bad("extensions.store_inp",
        fmt::format("STORE INP narrows an accumulator tile into an input tile, which needs "
                    "gemm.block_in equal to gemm.block_out (got {} and {}); switch it off or "
                    "make the GEMM core square",
                    c.block_in, c.block_out));
  pow2("buffers.uop_kib", c.uop_kib, 1, 1 << 16);
  pow2("buffers.inp_kib", c.inp_kib, 1, 1 << 16);
  pow2("buffers.wgt_kib", c.wgt_kib, 1, 1 << 16);
  pow2("buffers.acc_kib", c.acc_kib, 1, 1 << 16);
  auto fits = [&](const std::string &key, int kib, int tile, const char *what) {
    if (int64_t{kib} * 1024 < tile)
      bad(key, fmt::format("{} KiB is smaller than one {} tile ({} bytes); make it at least {} KiB",
                           kib, what, tile, (tile + 1023) / 1024));
  };
  fits("buffers.inp_kib", c.inp_kib, c.inp_tile_bytes(), "input");
  fits("buffers.wgt_kib", c.wgt_kib, c.wgt_tile_bytes(), "weight");
  fits("buffers.acc_kib", c.acc_kib, c.acc_tile_bytes(), "accumulator");
  pow2("memory.bus_bits", c.bus_bits, 32, 1024);
  if (c.mem_latency_cycles < 1 || c.mem_latency_cycles > 100000)
    bad("memory.latency_cycles",
        fmt::format("must be between 1 and 100000, got {}", c.mem_latency_cycles));
  pow2("memory.bytes_per_cycle", c.mem_bytes_per_cycle, 1, c.bus_bits / 8);
  pow2("queues.insn_depth", c.insn_queue_depth, 2, 4096);
  pow2("queues.token_depth", c.token_queue_depth, 2, 1 << 16);
  if (!(c.clock_mhz > 0 && c.clock_mhz <= 2000))
    bad("clock_mhz", fmt::format("must be in (0, 2000], got {}", c.clock_mhz));
  // Micro-ops must fit 64 bits and every instruction kind 128 bits.
  int uop_bits = c.uop_dst_bits() + c.uop_src_bits() + c.uop_wgt_bits();
  if (uop_bits > 64)
    bad("buffers", fmt::format("a micro-op needs {} bits (> 64): reduce the scratchpad depths",
                               uop_bits));
  for (Opcode op : {Opcode::kLoad, Opcode::kGemm, Opcode::kAlu}) {
    int bits = insn_bits(c, op);
    if (bits > 128)
      bad("buffers", fmt::format("{} instructions would need {} bits, more than the 128 of an "
                                 "instruction word: reduce the scratchpad depths (buffer sizes "
                                 "or more elements per tile)",
                                 opcode_name(op), bits));
  }
}

}  // namespace

int HwConfig::uop_index_bits() const { return log2_ceil(uop_depth()); }
int HwConfig::inp_index_bits() const { return log2_ceil(inp_depth()); }
int HwConfig::wgt_index_bits() const { return log2_ceil(wgt_depth()); }
int HwConfig::acc_index_bits() const { return log2_ceil(acc_depth()); }
int HwConfig::uop_src_bits() const { return std::max(inp_index_bits(), acc_index_bits()); }

int HwConfig::uop_bytes() const {
  int bits = uop_dst_bits() + uop_src_bits() + uop_wgt_bits();
  return bits <= 32 ? 4 : 8;
}

int HwConfig::tile_bytes(MemId id) const {
  switch (id) {
    case MemId::kUop: return uop_bytes();
    case MemId::kWgt: return wgt_tile_bytes();
    case MemId::kInp: return inp_tile_bytes();
    case MemId::kAcc: return acc_tile_bytes();
    case MemId::kOut: return out_tile_bytes();
  }
  return 0;
}

int HwConfig::depth(MemId id) const {
  switch (id) {
    case MemId::kUop: return uop_depth();
    case MemId::kWgt: return wgt_depth();
    case MemId::kInp: return inp_depth();
    case MemId::kAcc:
    case MemId::kOut: return acc_depth();
  }
  return 0;
}

uint64_t HwConfig::isa_fingerprint() const {
  // FNV-1a over the parameters that change how a program's bytes are read.
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : {batch, block_in, block_out, inp_bits, wgt_bits, acc_bits, uop_kib, inp_kib,
                    wgt_kib, acc_kib}) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  // An extension that is on makes more operations legal; off leaves the fingerprint as it was
  // before extensions existed. Each has the bit it was given when it came (alu_hold's 1 unused:
  // it changes timing only, a program reads the same).
  const std::pair<bool HwConfig::*, int> bits[] = {{&HwConfig::alu_clip, 0},
                                                   {&HwConfig::gemm_assign, 2},
                                                   {&HwConfig::alu_shr_clip, 3},
                                                   {&HwConfig::store_inp, 4}};
  for (const auto &[field, bit] : bits) {
    if (this->*field) {
      h ^= 0x100u + static_cast<uint64_t>(bit);
      h *= 1099511628211ull;
    }
  }
  return h;
}

void validate_config(const HwConfig &config) {
  check_rules(config, config.source.empty() ? "config" : config.source);
}

HwConfig parse_config(const std::string &yaml_text, const std::string &source_name) {
  ConfigReader reader(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException &e) {
    fail("{}:{}:{}: invalid YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  HwConfig config;
  config.source = source_name;
  config.name = std::filesystem::path(source_name).stem().string();
  if (root.IsNull()) return (validate_config(config), config);
  if (!root.IsMap())
    fail("{}: expected a mapping of sections (gemm, dtype, buffers, memory, ...) at the top",
         source_name);

  for (const auto &entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node &value = entry.second;
    if (key == "name") {
      config.name = reader.text(value, key);
    } else if (key == "clock_mhz") {
      config.clock_mhz = reader.number(value, key);
    } else if (key == "fpga") {
      if (!value.IsMap()) reader.error(key, "expected a mapping with keys part, platform");
      for (const auto &f : value) {
        const std::string sub = f.first.Scalar();
        if (sub == "part") config.fpga_part = reader.text(f.second, "fpga.part");
        else if (sub == "platform") config.fpga_platform = reader.text(f.second, "fpga.platform");
        else reader.error("fpga." + sub, "unknown key (known: part, platform)");
      }
    } else if (key == "extensions") {
      parse_extensions(reader, value, config);
    } else if (auto section = int_schema().find(key); section != int_schema().end()) {
      if (!value.IsMap())
        reader.error(
            key, fmt::format("expected a mapping with keys {}", known_keys(key, section->second)));
      for (const auto &f : value) {
        const std::string sub = f.first.Scalar();
        if (key == "gemm" && sub == "dsp_packing") {
          config.dsp_packing = parse_dsp_packing(reader, f.second, "gemm.dsp_packing");
          continue;
        }
        auto field = section->second.find(sub);
        if (field == section->second.end())
          reader.error(key + "." + sub,
                       fmt::format("unknown key (known: {})", known_keys(key, section->second)));
        config.*(field->second) = reader.integer(f.second, key + "." + sub);
      }
    } else {
      reader.error(key,
                   "unknown key (known: name, gemm, dtype, buffers, memory, queues, clock_mhz, "
                   "fpga, extensions)");
    }
  }
  validate_config(config);
  return config;
}

const std::vector<ConfigKey> &config_keys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> out;
    for (const auto &[section, fields] : int_schema())
      for (const auto &[key, _] : fields) out.push_back({section + "." + key});
    out.push_back({"clock_mhz", ConfigKey::Kind::kNumber});
    out.push_back({"fpga.part", ConfigKey::Kind::kText});
    out.push_back({"fpga.platform", ConfigKey::Kind::kText});
    for (const auto &[key, _] : extension_keys())
      out.push_back({"extensions." + key, ConfigKey::Kind::kText});
    return out;
  }();
  return keys;
}

std::string to_yaml(const HwConfig &config) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << config.name;
  for (const auto &[section, fields] : int_schema()) {
    out << YAML::Key << section << YAML::Value << YAML::BeginMap;
    for (const auto &[key, field] : fields) out << YAML::Key << key << YAML::Value << config.*field;
    if (section == "gemm")
      out << YAML::Key << "dsp_packing" << YAML::Value << dsp_packing_name(config.dsp_packing);
    out << YAML::EndMap;
  }
  out << YAML::Key << "clock_mhz" << YAML::Value << config.clock_mhz;
  out << YAML::Key << "fpga" << YAML::Value << YAML::BeginMap << YAML::Key << "part"
      << YAML::Value << config.fpga_part << YAML::Key << "platform" << YAML::Value
      << config.fpga_platform << YAML::EndMap;
  // Written only when one is on, so that the text of a config without extensions (tuning
  // records key on it) is what it was before they existed.
  bool any = false;
  for (const auto &[_, field] : extension_keys()) any = any || config.*field;
  if (any) {
    out << YAML::Key << "extensions" << YAML::Value << YAML::BeginMap;
    for (const auto &[key, field] : extension_keys()) {
      // store_inp came after configs with extensions were recorded: written only when on, so
      // their texts stay as they were.
      if (key == "store_inp" && !(config.*field)) continue;
      out << YAML::Key << key << YAML::Value << (config.*field ? "on" : "off");
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return out.c_str();
}

std::string set_config_keys(const std::string &yaml_text,
                            const std::vector<std::pair<std::string, std::string>> &values,
                            const std::string &source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException &e) {
    fail("{}:{}:{}: invalid YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    fail("{}: expected a mapping of sections (gemm, dtype, buffers, memory, ...) at the top",
         source_name);
  for (const auto &[key, value] : values) {
    // The value is a scalar, not YAML text to parse again ("a: b" stays text).
    const YAML::Node scalar(value);
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      root[key] = scalar;
      continue;
    }
    YAML::Node section = root[key.substr(0, dot)];
    if (section.IsDefined() && !section.IsNull() && !section.IsMap())
      fail("{}: key '{}': '{}' is not a section", source_name, key, key.substr(0, dot));
    section[key.substr(dot + 1)] = scalar;
  }
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

HwConfig load_config(const std::string &path) {
  return parse_config(read_file(path, "config file"), path);
}

std::string resolve_config_path(const std::string &name_or_path) {
  namespace fs = std::filesystem;
  if (path_exists(name_or_path)) return name_or_path;
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("VACC_CONFIG_DIR")) dirs.push_back(env);
  dirs.push_back(VACC_CONFIG_DIR);
  for (const auto &dir : dirs) {
    fs::path candidate = fs::path(dir) / (name_or_path + ".yaml");
    if (path_exists(candidate)) return candidate.string();
  }
  fail("config '{}' not found: give a path to a YAML file or a name in {}", name_or_path,
       VACC_CONFIG_DIR);
}

}  // namespace vacc::isa
