// Scalar types of the loop IR. The accelerator only knows signed integers of the widths its
// config names (inp/wgt/acc bits); bool is the type of conditions. Values are carried as
// int64 by the interpreter and wrapped to the type's width on every cast and store.
// Unsigned integers and floats (float32; float64 for exact requantization arithmetic) exist
// for the CPU backend (codegen/cpu); the interpreter rejects floats.
#pragma once

#include <cstdint>
#include <string>

namespace vacc::tir {

struct DataType {
  enum Code : uint8_t { kInt, kBool, kUInt, kFloat };
  Code code = kInt;
  int bits = 32;

  static DataType int_(int bits) { return {kInt, bits}; }
  static DataType bool_() { return {kBool, 1}; }
  static DataType uint_(int bits) { return {kUInt, bits}; }
  static DataType float_(int bits) { return {kFloat, bits}; }
  bool is_bool() const { return code == kBool; }
  bool is_int() const { return code == kInt; }
  bool is_uint() const { return code == kUInt; }
  bool is_float() const { return code == kFloat; }
  // Arithmetic (not bool): int, uint or float.
  bool is_numeric() const { return code != kBool; }
  bool operator==(const DataType &) const = default;
  std::string str() const;  // "int8", "int32", "bool", "uint8", "float32"
};

inline DataType int8() {
  return DataType::int_(8);
}
inline DataType int32() {
  return DataType::int_(32);
}
inline DataType int64() {
  return DataType::int_(64);
}
inline DataType uint8() {
  return DataType::uint_(8);
}
inline DataType float32() {
  return DataType::float_(32);
}

// Wraps v to a signed integer of `bits` bits (two's complement); bool is 0/1.
int64_t wrap_to(DataType t, int64_t v);

// Where a buffer lives: DRAM, one of the accelerator's scratchpads, host-local memory (on a
// GPU: one thread's registers), or a GPU thread block's shared memory.
enum class Scope : uint8_t { kGlobal, kInp, kWgt, kAcc, kUop, kLocal, kShared };
const char *scope_name(Scope s);  // "global", "inp", "wgt", "acc", "uop", "local", "shared"
// Parses a scope name; returns false when unknown.
bool parse_scope(const std::string &name, Scope *out);
inline bool is_scratchpad(Scope s) {
  return s == Scope::kInp || s == Scope::kWgt || s == Scope::kAcc || s == Scope::kUop;
}

}  // namespace vacc::tir
