#include "vacc/support/npy.h"

#include <cstring>
#include <fstream>
#include <regex>

#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/support/limits.h"

namespace vacc {

namespace {

int dtype_bytes(const std::string &dtype) {
  if (dtype.size() < 2) return 0;
  const char kind = dtype[0];
  if (kind != 'i' && kind != 'u' && kind != 'f' && kind != 'b') return 0;
  int n = std::atoi(dtype.c_str() + 1);
  return (n == 1 || n == 2 || n == 4 || n == 8) ? n : 0;
}

}  // namespace

int64_t NpyArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int NpyArray::item_bytes() const { return dtype_bytes(dtype); }

void write_npy(const std::string &path, const NpyArray &array) {
  VACC_CHECK(array.item_bytes() > 0) << "bad dtype " << array.dtype;
  VACC_CHECK(static_cast<int64_t>(array.data.size()) == array.elements() * array.item_bytes())
      << "data size does not match shape";
  std::string shape;  // "(2, 3)", but "(5,)" for one dimension
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1) shape += ",";
  const std::string byte_order = array.item_bytes() == 1 ? "|" : "<";
  std::string header = "{'descr': '" + byte_order + array.dtype +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("{}: cannot write .npy file", path);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char *>(&len), 2);
  out.write(header.data(), header.size());
  out.write(reinterpret_cast<const char *>(array.data.data()), array.data.size());
  if (!out) fail("{}: write failed", path);
}

NpyArray read_npy(const std::string &path) {
  return parse_npy(read_file(path, ".npy file"), path);
}

NpyArray parse_npy(std::string_view bytes, const std::string &path) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
    fail("{}: not a .npy file (bad magic)", path);
  const auto byte = [&](size_t i) -> size_t { return static_cast<uint8_t>(bytes[i]); };
  const int major = static_cast<int>(byte(6));
  size_t header_len, header_at;
  if (major == 1) {
    header_len = byte(8) | (byte(9) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("{}: truncated .npy header", path);
    header_len = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
    header_at = 12;
  } else {
    fail("{}: unsupported .npy version {}", path, major);
  }
  if (header_len > bytes.size() - header_at) fail("{}: truncated .npy header", path);
  const std::string header(bytes.substr(header_at, header_len));
  std::smatch m;
  NpyArray array;
  if (!std::regex_search(header, m, std::regex(R"('descr':\s*'([<>|=])([a-z]\d+)')")))
    fail("{}: .npy header has no dtype", path);
  if (m[1] == ">") fail("{}: big-endian .npy data is not supported; save little-endian", path);
  array.dtype = m[2];
  if (array.item_bytes() == 0) fail("{}: unsupported .npy dtype '{}'", path, array.dtype);
  if (std::regex_search(header, m, std::regex(R"('fortran_order':\s*True)")))
    fail("{}: Fortran-order .npy data is not supported; save with C order", path);
  if (!std::regex_search(header, m, std::regex(R"('shape':\s*\(([^)]*)\))")))
    fail("{}: .npy header has no shape", path);
  const std::string dims = m[1];
  static const std::regex digits(R"(\d+)");
  for (std::sregex_iterator it(dims.begin(), dims.end(), digits), end; it != end; ++it) {
    if (it->length() > 18) fail("{}: .npy shape ({}) has an absurd dimension", path, dims);
    array.shape.push_back(std::stoll(it->str()));
  }
  const size_t data_at = header_at + header_len;
  const uint64_t want = checked_tensor_bytes(array.shape, array.item_bytes(), path + ": .npy data");
  if (bytes.size() - data_at < want)
    fail("{}: .npy data holds {} bytes, the shape needs {}", path, bytes.size() - data_at, want);
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data()) + data_at;
  array.data.assign(data, data + want);
  return array;
}

}  // namespace vacc
