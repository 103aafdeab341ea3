// Dense host tensors of the graph IR: a dtype, a shape and row-major bytes. Constants,
// executor values and calibration data are all Tensors.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vacc/support/error.h"

namespace vacc::graph {

// Element types the graph IR carries: float32 for the float model, and the integer types
// quantized models and ONNX's integer operators need. kBool is stored as one byte (0 or 1).
enum class DType : uint8_t { kFloat32, kFloat64, kInt8, kUInt8, kInt16, kInt32, kInt64, kBool };

const char *dtype_name(DType dtype);  // "f32", "i8", "u8", ...
int dtype_size(DType dtype);          // bytes per element
bool dtype_is_float(DType dtype);

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape &shape);
std::string shape_str(const Shape &shape);  // "[1,16,28,28]"

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

class Tensor {
 public:
  Tensor() = default;
  // A zero-filled tensor.
  Tensor(DType dtype, Shape shape);

  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T> &values) {
    Tensor t(DTypeOf<T>::value, std::move(shape));
    VACC_CHECK(static_cast<int64_t>(values.size()) == t.size()) << "from_vector: size mismatch";
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) t.bytes_[i] = values[i] ? 1 : 0;
    } else if (!values.empty()) {
      std::memcpy(t.bytes_.data(), values.data(), values.size() * sizeof(T));
    }
    return t;
  }
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, {value});
  }

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_.at(axis); }
  int64_t size() const { return num_elements(shape_); }
  size_t nbytes() const { return bytes_.size(); }

  // Typed element access; T must match the dtype (bool tensors are accessed as uint8_t).
  template <typename T>
  T *data() {
    check_type<T>();
    return reinterpret_cast<T *>(bytes_.data());
  }
  template <typename T>
  const T *data() const {
    check_type<T>();
    return reinterpret_cast<const T *>(bytes_.data());
  }
  uint8_t *raw() { return bytes_.data(); }
  const uint8_t *raw() const { return bytes_.data(); }

  // Element i converted to double / int64 (any dtype); for tests, folding and printing.
  double as_double(int64_t i) const;
  int64_t as_int(int64_t i) const;
  std::vector<int64_t> to_int_vector() const;
  std::vector<float> to_float_vector() const;

  // The same bytes under another shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Element-wise conversion (float to integer rounds half to even and saturates).
  Tensor cast(DType dtype) const;

 private:
  template <typename T>
  void check_type() const {
    if constexpr (std::is_same_v<T, uint8_t>) {
      VACC_CHECK(dtype_ == DType::kUInt8 || dtype_ == DType::kBool)
          << "tensor of " << dtype_name(dtype_) << " accessed as u8";
    } else {
      VACC_CHECK(dtype_ == DTypeOf<T>::value)
          << "tensor of " << dtype_name(dtype_) << " accessed as " << dtype_name(DTypeOf<T>::value);
    }
  }

  DType dtype_ = DType::kFloat32;
  Shape shape_;
  std::vector<uint8_t> bytes_;
};

// Calls f with a value of the C++ type of `dtype` (bool as uint8_t), e.g.
// visit_dtype(t.dtype(), [&](auto tag) { using T = decltype(tag); ... }).
template <typename F>
decltype(auto) visit_dtype(DType dtype, F &&f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kBool:
      return f(uint8_t{});
  }
  VACC_CHECK(false) << "bad dtype";
  return f(float{});
}

}  // namespace vacc::graph
