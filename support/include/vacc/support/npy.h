// Reading and writing NumPy .npy files (format version 1.0, C order, little-endian), the
// exchange format for tensors between vacc, its tests and Python tools.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vacc {

struct NpyArray {
  std::string dtype;  // NumPy descr without byte order: "i1", "u1", "i4", "f4", "i8", "f8"...
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian element bytes, C order

  int64_t elements() const;
  int item_bytes() const;
  template <typename T>
  const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
};

void write_npy(const std::string &path, const NpyArray &array);
// Throws vacc::Error naming the file when it is not a readable .npy of a supported dtype.
NpyArray read_npy(const std::string &path);
// The same from a file's bytes; `path` names it in diagnostics.
NpyArray parse_npy(std::string_view bytes, const std::string &path);

}  // namespace vacc
