#include "vacc/isa/package.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "json_integer.h"
#include "vacc/support/align.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/support/hash.h"
#include "vacc/support/limits.h"

namespace vacc::isa {

namespace {

constexpr char kPackageMagic[8] = {'V', 'A', 'C', 'C', 'P', 'K', 'G', '\0'};
constexpr uint64_t kAlign = 64;
constexpr size_t kFixedHeader = 8 + 4 + 4 + 8 + 8;

// The payload checksum's seed (not FNV's usual offset basis; kept so packages stay readable).
constexpr uint64_t kChecksumSeed = 1469598103934665603ull;

const char *kTargets[] = {"cpu", "accel"};

nlohmann::ordered_json tensor_json(const PackageTensor &t) {
  nlohmann::ordered_json j;
  j["name"] = t.name;
  j["dtype"] = t.dtype;
  j["shape"] = t.shape;
  if (t.blocked) j["layout"] = {{"block_n", t.block_n}, {"block_c", t.block_c}};
  if (t.frac_bits) j["frac_bits"] = *t.frac_bits;
  if (t.zero_point) j["zero_point"] = t.zero_point;  // absent when 0: older packages' bytes
  if (t.blob) j["blob"] = *t.blob;
  if (t.arena_offset >= 0) j["arena_offset"] = t.arena_offset;
  return j;
}

PackageTensor tensor_from_json(const nlohmann::json &j) {
  PackageTensor t;
  t.name = j.at("name").get<std::string>();
  t.dtype = j.at("dtype").get<std::string>();
  t.shape = json_integers<int64_t>(j.at("shape"), "tensor " + t.name + " shape");
  if (j.contains("layout")) {
    t.blocked = true;
    t.block_n = json_integer<int>(j["layout"].at("block_n"), "block_n");
    t.block_c = json_integer<int>(j["layout"].at("block_c"), "block_c");
  }
  if (j.contains("frac_bits")) t.frac_bits = json_integer<int>(j["frac_bits"], "frac_bits");
  if (j.contains("zero_point"))
    t.zero_point = json_integer<int>(j["zero_point"], "tensor " + t.name + " zero_point");
  if (j.contains("blob")) t.blob = json_integer<uint32_t>(j["blob"], "blob");
  t.arena_offset =
      j.contains("arena_offset") ? json_integer<int64_t>(j["arena_offset"], "arena_offset") : -1;
  return t;
}

nlohmann::ordered_json step_json(const PackageStep &s) {
  nlohmann::ordered_json j;
  j["op"] = s.op;
  j["name"] = s.name;
  j["target"] = step_target_name(s.target);
  j["inputs"] = s.inputs;
  j["outputs"] = s.outputs;
  j["attrs"] = s.attrs;
  j["macs"] = s.macs;
  j["model_macs"] = s.model_macs;
  if (s.commands) {
    j["commands"] = *s.commands;
    j["bindings"] = s.bindings;
  }
  if (!s.note.empty()) j["note"] = s.note;
  if (!s.schedule.empty()) j["schedule"] = s.schedule;
  if (s.joins_previous) j["joins_previous"] = true;
  return j;
}

PackageStep step_from_json(const nlohmann::json &j) {
  PackageStep s;
  s.op = j.at("op").get<std::string>();
  s.name = j.at("name").get<std::string>();
  const std::string target = j.at("target").get<std::string>();
  if (target == "cpu") {
    s.target = StepTarget::kCpu;
  } else if (target == "accel") {
    s.target = StepTarget::kAccel;
  } else {
    fail("step '{}' has an unknown target '{}'", s.name, target);
  }
  s.inputs = json_integers<int32_t>(j.at("inputs"), "step inputs");
  s.outputs = json_integers<int32_t>(j.at("outputs"), "step outputs");
  s.attrs = j.at("attrs");
  s.macs = j.contains("macs") ? json_integer<int64_t>(j["macs"], "macs") : 0;
  s.model_macs =
      j.contains("model_macs") ? json_integer<int64_t>(j["model_macs"], "model_macs") : 0;
  if (j.contains("commands")) {
    s.commands = json_integer<uint32_t>(j["commands"], "commands");
    s.bindings = json_integers<int32_t>(j.at("bindings"), "bindings");
  }
  s.note = j.value("note", std::string());
  s.schedule = j.value("schedule", std::string());
  if (j.contains("joins_previous")) {
    if (!j["joins_previous"].is_boolean())
      fail("step '{}': joins_previous must be true or false", s.name);
    s.joins_previous = j["joins_previous"].get<bool>();
  }
  return s;
}

}  // namespace

const char *step_target_name(StepTarget target) {
  return kTargets[static_cast<int>(target)];
}

int package_dtype_size(const std::string &dtype) {
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "f64" || dtype == "i64") return 8;
  if (dtype == "i16") return 2;
  if (dtype == "i8" || dtype == "u8" || dtype == "bool") return 1;
  fail("unknown tensor dtype '{}'", dtype);
}

int64_t PackageTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t PackageTensor::bytes() const {
  return elements() * package_dtype_size(dtype);
}

int Package::accelerator_steps() const {
  int n = 0;
  for (const PackageStep &s : steps) n += s.commands.has_value();
  return n;
}

uint32_t Package::add_blob(std::vector<uint8_t> bytes) {
  blobs.push_back(std::move(bytes));
  return static_cast<uint32_t>(blobs.size() - 1);
}

void Package::check_config(const isa::HwConfig &config, const std::string &path) const {
  if (config.isa_fingerprint() != isa_fingerprint)
    fail(
        "{}: the package was compiled for config '{}', whose accelerator differs from config "
        "'{}' ({}): recompile it with `vacc compile --config {}` or run it with --config {}",
        path, config_name, config.name, config.source.empty() ? "built in" : config.source,
        config.source.empty() ? config.name : config.source, config_name);
}

void Package::validate(const std::string &path) const {
  const auto tensor_ok = [&](int32_t i) { return i >= 0 && size_t(i) < tensors.size(); };
  if (arena_bytes < 0 || uint64_t(arena_bytes) > max_tensor_bytes())
    fail(
        "{}: the activation arena of {} bytes is outside [0, {}] (set VACC_MAX_TENSOR_BYTES to "
        "raise the limit)",
        path, arena_bytes, max_tensor_bytes());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PackageTensor &t = tensors[i];
    if (t.zero_point < -128 || t.zero_point > 127)
      fail("{}: tensor '{}' has zero point {}, outside an int8's [-128, 127]: recompile the model",
           path, t.name, t.zero_point);
    const int64_t bytes = int64_t(checked_tensor_bytes(
        t.shape, package_dtype_size(t.dtype), fmt::format("{}: tensor '{}'", path, t.name)));
    if (t.blob) {
      if (*t.blob >= blobs.size())
        fail("{}: constant '{}' refers to blob {} of {}", path, t.name, *t.blob, blobs.size());
      if (int64_t(blobs[*t.blob].size()) != bytes)
        fail("{}: constant '{}' holds {} bytes, its shape needs {}", path, t.name,
             blobs[*t.blob].size(), bytes);
    } else if (t.arena_offset >= 0 && t.arena_offset > arena_bytes - bytes) {
      fail("{}: tensor '{}' lies outside the {}-byte arena", path, t.name, arena_bytes);
    }
  }
  for (int32_t i : inputs)
    if (!tensor_ok(i)) fail("{}: graph input refers to tensor {} of {}", path, i, tensors.size());
  for (int32_t i : outputs)
    if (!tensor_ok(i)) fail("{}: graph output refers to tensor {} of {}", path, i, tensors.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    const PackageStep &step = steps[s];
    for (const auto *list : {&step.inputs, &step.outputs})
      for (int32_t i : *list)
        if (i != -1 && !tensor_ok(i))
          fail("{}: step {} ('{}', {}) refers to tensor {} of {}", path, s, step.name, step.op, i,
               tensors.size());
    if (step.commands && *step.commands >= blobs.size())
      fail("{}: step {} ('{}') refers to command blob {} of {}", path, s, step.name, *step.commands,
           blobs.size());
    for (int32_t i : step.bindings)
      if (!tensor_ok(i)) fail("{}: step {} ('{}') binds tensor {}", path, s, step.name, i);
    if (step.joins_previous && (!step.commands || s == 0 || !steps[s - 1].commands))
      fail(
          "{}: step {} ('{}') joins the program of the step before it, but only an accelerator "
          "step that follows one can: recompile the package",
          path, s, step.name);
  }
}

std::vector<uint8_t> encode_package(const Package &package) {
  nlohmann::ordered_json j;
  j["format"] = "vacc package";
  j["model"] = package.model;
  j["config"] = package.config_name;
  j["isa_fingerprint"] = package.isa_fingerprint;
  j["quantized"] = package.quantized;
  j["arena_bytes"] = package.arena_bytes;
  j["inputs"] = package.inputs;
  j["outputs"] = package.outputs;
  j["metadata"] = package.metadata;
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const auto &t : package.tensors) tensors.push_back(tensor_json(t));
  j["tensors"] = std::move(tensors);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto &s : package.steps) steps.push_back(step_json(s));
  j["steps"] = std::move(steps);
  nlohmann::ordered_json blobs = nlohmann::ordered_json::array();
  uint64_t offset = 0;
  for (const auto &b : package.blobs) {
    blobs.push_back({offset, b.size()});
    offset = align_up(offset + b.size(), kAlign);
  }
  j["blobs"] = std::move(blobs);
  const std::string header = j.dump();

  const uint64_t blob_start = align_up(kFixedHeader + header.size(), kAlign);
  std::vector<uint8_t> bytes(blob_start + offset, 0);
  std::memcpy(bytes.data(), kPackageMagic, 8);
  const uint32_t version = kPackageVersion;
  std::memcpy(bytes.data() + 8, &version, 4);
  const uint64_t length = header.size();
  std::memcpy(bytes.data() + 16, &length, 8);
  std::memcpy(bytes.data() + kFixedHeader, header.data(), header.size());
  offset = 0;
  for (const auto &b : package.blobs) {
    if (!b.empty()) std::memcpy(bytes.data() + blob_start + offset, b.data(), b.size());
    offset = align_up(offset + b.size(), kAlign);
  }
  const uint64_t sum = fnv1a(bytes.data() + kFixedHeader, bytes.size() - kFixedHeader, kChecksumSeed);
  std::memcpy(bytes.data() + 24, &sum, 8);
  return bytes;
}

void save_package(const Package &package, const std::string &path) {
  const std::vector<uint8_t> bytes = encode_package(package);
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("{}: cannot write package file", path);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) fail("{}: write failed", path);
}

bool is_package_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in && std::memcmp(magic, kPackageMagic, 8) == 0;
}

uint64_t package_checksum(std::string_view file) {
  if (file.size() < kFixedHeader) return 0;
  return fnv1a(reinterpret_cast<const uint8_t *>(file.data()) + kFixedHeader,
               file.size() - kFixedHeader, kChecksumSeed);
}

Package load_package(const std::string &path) {
  return parse_package(read_file(path, "package file"), path);
}

Package parse_package(std::string_view file, const std::string &path) {
  const auto *bytes = reinterpret_cast<const uint8_t *>(file.data());
  const uint64_t size = file.size();
  if (size < kFixedHeader || std::memcmp(bytes, kPackageMagic, 8) != 0)
    fail("{}: not a vacc package (bad magic; expected a .vpkg written by `vacc compile`)", path);
  uint32_t version;
  uint64_t length, sum;
  std::memcpy(&version, bytes + 8, 4);
  std::memcpy(&length, bytes + 16, 8);
  std::memcpy(&sum, bytes + 24, 8);
  if (version != kPackageVersion)
    fail(
        "{}: package format version {} is not supported (this vacc reads version {}): "
        "recompile the model with `vacc compile`",
        path, version, kPackageVersion);
  if (length > size - kFixedHeader)
    fail("{}: truncated package (header of {} bytes, file of {})", path, length, size);
  if (package_checksum(file) != sum)
    fail("{}: corrupt package (checksum mismatch): recompile the model with `vacc compile`", path);
  const uint64_t blob_start = align_up(kFixedHeader + length, kAlign);
  Package p;
  try {
    const nlohmann::json j =
        nlohmann::json::parse(bytes + kFixedHeader, bytes + kFixedHeader + length);
    p.model = j.at("model").get<std::string>();
    p.config_name = j.at("config").get<std::string>();
    p.isa_fingerprint = json_integer<uint64_t>(j.at("isa_fingerprint"), "isa_fingerprint");
    p.quantized = j.at("quantized").get<bool>();
    p.arena_bytes = json_integer<int64_t>(j.at("arena_bytes"), "arena_bytes");
    p.inputs = json_integers<int32_t>(j.at("inputs"), "inputs");
    p.outputs = json_integers<int32_t>(j.at("outputs"), "outputs");
    p.metadata = j.at("metadata");
    for (const auto &t : j.at("tensors")) p.tensors.push_back(tensor_from_json(t));
    for (const auto &s : j.at("steps")) p.steps.push_back(step_from_json(s));
    for (const auto &b : j.at("blobs")) {
      const uint64_t off = json_integer<uint64_t>(b.at(0), "blob offset"),
                   n = json_integer<uint64_t>(b.at(1), "blob size");
      if (blob_start > size || off > size - blob_start || n > size - blob_start - off)
        fail("blob at {} of {} bytes lies outside the file", off, n);
      p.blobs.emplace_back(bytes + blob_start + off, bytes + blob_start + off + n);
    }
  } catch (const nlohmann::json::exception &e) {
    fail("{}: corrupt package header: {}", path, e.what());
  } catch (const Error &e) {
    fail("{}: corrupt package: {}", path, e.what());
  }
  p.validate(path);
  return p;
}

}  // namespace vacc::isa
