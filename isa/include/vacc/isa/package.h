// A compiled model (.vpkg): everything the runtime needs to execute a model without the
// compiler. It holds the compiled graph as a list of steps in execution order (each with its
// operator, where it runs, attributes, input and output tensors, MACs), every tensor (dtype,
// shape, layout, quantization fraction bits, and either constant data or a slot of the
// activation arena from the compiler's memory plan), the accelerator command lists of the
// accelerator steps, and the model's metadata.
//
// File layout (little-endian): "VACCPKG\0" magic, u32 format version, u32 reserved (0),
// u64 JSON header length, u64 FNV-1a 64 checksum of everything after this field, the JSON
// header, zero padding to a 64-byte boundary, then the blob section. Blobs (constant tensors,
// serialized command lists) are referenced from the header by (offset, bytes) into the blob
// section. A file with a bad magic, another version, a wrong checksum or an inconsistent
// header is rejected with a vacc::Error naming the file; so is a package used with a config
// whose ISA layout differs from the one it was compiled for (check_config()).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vacc/isa/config.h"

namespace vacc::isa {

inline constexpr uint32_t kPackageVersion = 2;  // 2: steps carry model_macs

enum class StepTarget : uint8_t { kCpu, kAccel };
const char *step_target_name(StepTarget target);  // "cpu", "accel"

// A tensor of the compiled graph. Its dtype is one of the graph IR's names ("f32", "i8",
// "i32", "i64", "u8", "i16", "f64", "bool"); data is row-major in its own layout.
struct PackageTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  bool blocked = false;  // NCHWnc (shape already blocked)
  int block_n = 1, block_c = 1;
  std::optional<int> frac_bits;  // quantized: real value = (q - zero_point) * 2^-frac_bits
  int zero_point = 0;
  std::optional<uint32_t> blob;  // constants: index into Package::blobs
  int64_t arena_offset = -1;     // activations: offset in the arena (memory plan)

  bool is_constant() const { return blob.has_value(); }
  int64_t elements() const;
  int64_t bytes() const;  // elements * dtype size
};

// One operator in execution order.
struct PackageStep {
  std::string op;    // the graph IR's operator name: "vacc.QConv", "MaxPool", ...
  std::string name;  // the node's name
  StepTarget target = StepTarget::kCpu;
  // Attributes as JSON: {"name": {"int": 3} | {"float": 1.5} | {"string": "x"} |
  // {"ints": [...]} | {"floats": [...]} | {"tensor": {"dtype", "shape", "blob"}}}.
  nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
  std::vector<int32_t> inputs;   // tensor indices; -1 for an absent optional input
  std::vector<int32_t> outputs;  // tensor indices; -1 for an absent optional output
  int64_t macs = 0;        // multiply-accumulates one run executes (channels padded to blocks)
  int64_t model_macs = 0;  // the model's own: the ONNX operator's, before padding
  // Accelerator steps: the serialized isa::CommandList (isa/command.h) and, for each of its
  // DRAM buffers in order, the tensor it binds to.
  std::optional<uint32_t> commands;
  std::vector<int32_t> bindings;
  std::string note;  // why a step runs where it runs, when worth telling
  // Accelerator steps: the schedule its command list was generated with and where it came
  // from ("heuristic: h7 w14 oc2 ic4 vt2", "tuned: ... (tuning database)").
  std::string schedule;
  // Accelerator steps: runs in one program with the step before it (also on the accelerator),
  // with no drain between them (runtime/command_queue.h: begin_step()).
  bool joins_previous = false;
};

struct Package {
  std::string model;        // the source model's file name
  std::string config_name;  // the hardware config it was compiled for
  uint64_t isa_fingerprint = 0;
  bool quantized = true;
  std::vector<PackageTensor> tensors;
  std::vector<PackageStep> steps;
  std::vector<int32_t> inputs, outputs;  // tensor indices of the graph's inputs and outputs
  int64_t arena_bytes = 0;               // size of the activation arena (memory plan)
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();  // model metadata_props
  std::vector<std::vector<uint8_t>> blobs;

  uint32_t add_blob(std::vector<uint8_t> bytes);
  // The steps that run on the accelerator (those with a command list): 0 means a run needs no
  // device.
  int accelerator_steps() const;
  // Throws vacc::Error (naming `path`) when the package targets another ISA layout.
  void check_config(const isa::HwConfig &config, const std::string &path) const;
  // Checks the internal consistency (indices in range, constants sized as their shape);
  // throws vacc::Error naming `path` and the step or tensor at fault.
  void validate(const std::string &path) const;
};

void save_package(const Package &package, const std::string &path);
Package load_package(const std::string &path);
// The same from a file's bytes; `path` names it in diagnostics.
Package parse_package(std::string_view bytes, const std::string &path);
// The checksum a package file stores at byte 24: FNV-1a 64 of every byte after the fixed
// header (0 for a file shorter than that header).
uint64_t package_checksum(std::string_view bytes);
// The bytes of a package file, as save_package writes them (parse_package reads them back).
std::vector<uint8_t> encode_package(const Package &package);
bool is_package_file(const std::string &path);

// Bytes of one element of a graph dtype name; throws vacc::Error for an unknown name.
int package_dtype_size(const std::string &dtype);

}  // namespace vacc::isa
