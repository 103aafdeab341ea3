#include "vacc/support/limits.h"

#include <atomic>
#include <cstdlib>

#include "vacc/support/error.h"

namespace vacc {

namespace {

constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{4} << 30;

uint64_t limit_from_environment() {
  const char *text = std::getenv("VACC_MAX_TENSOR_BYTES");
  if (!text || !*text) return kDefaultMaxTensorBytes;
  char *end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0)
    fail("VACC_MAX_TENSOR_BYTES='{}': expected a positive number of bytes", text);
  return value;
}

std::atomic<uint64_t> &limit() {
  static std::atomic<uint64_t> bytes{limit_from_environment()};
  return bytes;
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

uint64_t max_tensor_bytes() {
  return limit().load();
}

void set_max_tensor_bytes(uint64_t bytes) {
  limit().store(bytes);
}

uint64_t checked_tensor_bytes(std::span<const int64_t> shape, int item_bytes,
                              const std::string &what) {
  const uint64_t max = max_tensor_bytes();
  for (int64_t d : shape)
    if (d < 0) fail("{}: shape {} has a negative dimension", what, shape_text(shape));
  // The bound holds for the product of the non-zero dimensions too, so that an empty tensor
  // cannot claim dimensions whose product overflows wherever an element count is computed.
  uint64_t bytes = static_cast<uint64_t>(item_bytes);
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (static_cast<uint64_t>(d) > max / bytes)
      fail(
          "{}: shape {} needs more than {} bytes, the limit on one tensor (the file is corrupt, "
          "or the model too large; set VACC_MAX_TENSOR_BYTES to raise the limit)",
          what, shape_text(shape), max);
    bytes *= static_cast<uint64_t>(d);
  }
  return empty ? 0 : bytes;
}

}  // namespace vacc
