#include "vacc/isa/program.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json_integer.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/align.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/support/limits.h"

namespace vacc::isa {

namespace {

constexpr char kProgramMagic[8] = {'V', 'A', 'C', 'C', 'P', 'R', 'O', 'G'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint64_t kHeaderAlign = 64;

const RegionKind kAllKinds[] = {RegionKind::kInstructions, RegionKind::kUops,
                                RegionKind::kInput,        RegionKind::kWeight,
                                RegionKind::kOutput,       RegionKind::kScratch};

std::optional<MemId> parse_mem(const std::string &name) {
  for (int i = 0; i < kNumMemIds; ++i)
    if (name == mem_id_name(static_cast<MemId>(i))) return static_cast<MemId>(i);
  return std::nullopt;
}

}  // namespace

const char *region_kind_name(RegionKind kind) {
  switch (kind) {
    case RegionKind::kInstructions: return "insn";
    case RegionKind::kUops: return "uop";
    case RegionKind::kInput: return "input";
    case RegionKind::kWeight: return "weight";
    case RegionKind::kOutput: return "output";
    case RegionKind::kScratch: return "scratch";
  }
  return "?";
}

std::optional<RegionKind> parse_region_kind(const std::string &name) {
  for (RegionKind k : kAllKinds)
    if (name == region_kind_name(k)) return k;
  return std::nullopt;
}

uint64_t region_alignment(const HwConfig &config) {
  uint64_t a = 64;
  for (int i = 0; i < kNumMemIds; ++i)
    a = std::max<uint64_t>(a, config.tile_bytes(static_cast<MemId>(i)));
  return a;
}

const Region *Program::find_region(const std::string &name) const {
  for (const auto &r : regions)
    if (r.name == name) return &r;
  return nullptr;
}

void Program::check_config(const HwConfig &config) const {
  if (isa_fingerprint != config.isa_fingerprint())
    fail("program was built for config '{}', whose ISA layout differs from config '{}' ({}): "
         "run it with the config it was built for",
         config_name, config.name, config.source);
}

std::vector<Insn> Program::instructions(const HwConfig &config) const {
  std::vector<Insn> out;
  out.reserve(insn_count);
  for (uint32_t i = 0; i < insn_count; ++i) {
    const uint64_t at = insn_offset + uint64_t{i} * kInsnBytes;
    if (at + kInsnBytes > dram.size())
      fail("instruction {} lies outside the program's memory image", i);
    try {
      out.push_back(decode(config, load_word(dram.data() + at)));
    } catch (const Error &e) {
      fail("instruction {}: {}", i, e.what());
    }
  }
  return out;
}

void save_program(const Program &program, const std::string &path) {
  nlohmann::ordered_json header;
  header["config"] = program.config_name;
  header["isa_fingerprint"] = program.isa_fingerprint;
  header["insn_offset"] = program.insn_offset;
  header["insn_count"] = program.insn_count;
  header["dram_bytes"] = program.dram.size();
  header["regions"] = nlohmann::json::array();
  for (const auto &r : program.regions)
    header["regions"].push_back({{"name", r.name},
                                 {"kind", region_kind_name(r.kind)},
                                 {"mem", mem_id_name(r.mem)},
                                 {"offset", r.offset},
                                 {"bytes", r.bytes}});
  const std::string text = header.dump(1);
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("{}: cannot write program file", path);
  const uint32_t version = kFormatVersion, length = static_cast<uint32_t>(text.size());
  out.write(kProgramMagic, sizeof kProgramMagic);
  out.write(reinterpret_cast<const char *>(&version), 4);
  out.write(reinterpret_cast<const char *>(&length), 4);
  out.write(text.data(), text.size());
  const uint64_t used = sizeof kProgramMagic + 8 + text.size();
  const std::string pad(align_up(used, kHeaderAlign) - used, '\0');
  out.write(pad.data(), pad.size());
  out.write(reinterpret_cast<const char *>(program.dram.data()), program.dram.size());
  if (!out) fail("{}: write failed", path);
}

bool is_program_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in && std::memcmp(magic, kProgramMagic, 8) == 0;
}

Program load_program(const std::string &path) {
  return parse_program(read_file(path, "program file"), path);
}

Program parse_program(std::string_view file, const std::string &path) {
  const auto *bytes = reinterpret_cast<const uint8_t *>(file.data());
  const uint64_t size = file.size();
  if (size < 16 || std::memcmp(bytes, kProgramMagic, 8) != 0)
    fail(
        "{}: not a vacc program file (bad magic; expected a .vprog written by vacc asm or "
        "vacc compile)",
        path);
  uint32_t version, length;
  std::memcpy(&version, bytes + 8, 4);
  std::memcpy(&length, bytes + 12, 4);
  if (version != kFormatVersion)
    fail("{}: program format version {} is not supported (this vacc reads version {})", path,
         version, kFormatVersion);
  if (16 + uint64_t{length} > size) fail("{}: truncated header", path);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes + 16, bytes + 16 + length);
  } catch (const nlohmann::json::exception &e) {
    fail("{}: corrupt header: {}", path, e.what());
  }
  Program p;
  try {
    p.config_name = header.at("config").get<std::string>();
    p.isa_fingerprint = json_integer<uint64_t>(header.at("isa_fingerprint"), path + ": isa_fingerprint");
    p.insn_offset = json_integer<uint64_t>(header.at("insn_offset"), path + ": insn_offset");
    p.insn_count = json_integer<uint32_t>(header.at("insn_count"), path + ": insn_count");
    const uint64_t dram_bytes = json_integer<uint64_t>(header.at("dram_bytes"), path + ": dram_bytes");
    const uint64_t data_at = align_up(16 + uint64_t{length}, kHeaderAlign);
    if (data_at > size || size - data_at != dram_bytes)
      fail("{}: memory image is {} bytes but the header says {}", path,
           size < data_at ? 0 : size - data_at, dram_bytes);
    p.dram.assign(bytes + data_at, bytes + size);
    for (const auto &r : header.at("regions")) {
      Region region;
      region.name = r.at("name").get<std::string>();
      auto kind = parse_region_kind(r.at("kind").get<std::string>());
      auto mem = parse_mem(r.at("mem").get<std::string>());
      if (!kind || !mem) fail("{}: region '{}' has an unknown kind or memory", path, region.name);
      region.kind = *kind;
      region.mem = *mem;
      region.offset = json_integer<uint64_t>(r.at("offset"), path + ": region offset");
      region.bytes = json_integer<uint64_t>(r.at("bytes"), path + ": region bytes");
      if (region.bytes > p.dram.size() || region.offset > p.dram.size() - region.bytes)
        fail("{}: region '{}' [{}, {}) lies outside the {}-byte memory image", path, region.name,
             region.offset, region.offset + region.bytes, p.dram.size());
      p.regions.push_back(region);
    }
  } catch (const nlohmann::json::exception &e) {
    fail("{}: corrupt header: {}", path, e.what());
  }
  if (p.insn_offset % kInsnBytes != 0 || p.insn_offset > p.dram.size() ||
      uint64_t{p.insn_count} * kInsnBytes > p.dram.size() - p.insn_offset)
    fail("{}: instruction stream ({} instructions at offset {}) lies outside the memory image",
         path, p.insn_count, p.insn_offset);
  return p;
}

// --- ProgramBuilder -------------------------------------------------------------------------

ProgramBuilder::ProgramBuilder(const HwConfig &config) : config_(config) {}

uint32_t ProgramBuilder::add_region(const std::string &name, RegionKind kind, MemId mem,
                                    uint64_t elements) {
  if (uop_base_fixed_)
    fail("region '{}' declared after the micro-op region was placed: declare all data regions "
         "first",
         name);
  for (const auto &p : regions_)
    if (p.region.name == name) fail("region '{}' is declared twice", name);
  if (name == "uops" || name == "insns") fail("region name '{}' is reserved", name);
  // The whole image is one allocation: bounded like a tensor before it grows.
  const uint64_t bytes = checked_tensor_bytes(std::vector<int64_t>{int64_t(elements)},
                                              config_.tile_bytes(mem), "region '" + name + "'");
  if (next_offset_ > max_tensor_bytes() || bytes > max_tensor_bytes() - next_offset_)
    fail("region '{}' of {} bytes makes the program's memory image larger than {} bytes", name,
         bytes, max_tensor_bytes());
  Pending p;
  p.region.name = name;
  p.region.kind = kind;
  p.region.mem = mem;
  p.region.offset = next_offset_;
  p.region.bytes = elements * config_.tile_bytes(mem);
  p.bytes.assign(p.region.bytes, 0);
  next_offset_ = align_up(next_offset_ + p.region.bytes, region_alignment(config_));
  const uint64_t first = p.region.offset / config_.tile_bytes(mem);
  if (first > UINT32_MAX) fail("region '{}' lies beyond the 32-bit DRAM address range", name);
  regions_.push_back(std::move(p));
  return static_cast<uint32_t>(first);
}

std::vector<uint8_t> ProgramBuilder::region_bytes(const std::string &name) const {
  for (const auto &p : regions_)
    if (p.region.name == name) return p.bytes;
  fail("unknown region '{}'", name);
}

void ProgramBuilder::set_region_bytes(const std::string &name, const std::vector<uint8_t> &bytes) {
  for (auto &p : regions_) {
    if (p.region.name != name) continue;
    if (bytes.size() != p.bytes.size())
      fail("region '{}' holds {} bytes, got {}", name, p.bytes.size(), bytes.size());
    p.bytes = bytes;
    return;
  }
  fail("unknown region '{}'", name);
}

uint32_t ProgramBuilder::add_uop(const Uop &uop) {
  encode_uop(config_, uop);  // checks the field widths now, where the caller can be named
  uops_.push_back(uop);
  return static_cast<uint32_t>(uops_.size() - 1);
}

void ProgramBuilder::emit(const Insn &insn) {
  try {
    encode(config_, insn);
  } catch (const Error &e) {
    fail("instruction {}: {}", insns_.size(), e.what());
  }
  insns_.push_back(insn);
}

uint32_t ProgramBuilder::uop_region_base() {
  uop_base_fixed_ = true;
  return static_cast<uint32_t>(next_offset_ / config_.uop_bytes());
}

Program ProgramBuilder::finish() {
  Program p;
  p.config_name = config_.name;
  p.isa_fingerprint = config_.isa_fingerprint();
  const uint64_t align = region_alignment(config_);
  uint64_t offset = next_offset_;
  uop_base_fixed_ = true;

  Region uop_region{"uops", RegionKind::kUops, MemId::kUop, offset,
                    uops_.size() * config_.uop_bytes()};
  offset = align_up(offset + uop_region.bytes, align);
  Region insn_region{"insns", RegionKind::kInstructions, MemId::kUop, offset,
                     insns_.size() * kInsnBytes};
  offset = align_up(offset + insn_region.bytes, align);

  p.dram.assign(offset, 0);
  for (const auto &pending : regions_) {
    std::copy(pending.bytes.begin(), pending.bytes.end(), p.dram.begin() + pending.region.offset);
    p.regions.push_back(pending.region);
  }
  for (size_t i = 0; i < uops_.size(); ++i) {
    const uint64_t bits = encode_uop(config_, uops_[i]);
    for (int b = 0; b < config_.uop_bytes(); ++b)
      p.dram[uop_region.offset + i * config_.uop_bytes() + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  for (size_t i = 0; i < insns_.size(); ++i)
    store_word(encode(config_, insns_[i]), p.dram.data() + insn_region.offset + i * kInsnBytes);
  p.regions.push_back(uop_region);
  p.regions.push_back(insn_region);
  p.insn_offset = insn_region.offset;
  p.insn_count = static_cast<uint32_t>(insns_.size());
  return p;
}

}  // namespace vacc::isa
