#include "vacc/graph/tensor.h"

#include <cmath>
#include <limits>

namespace vacc::graph {

const char *dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "f32";
    case DType::kFloat64:
      return "f64";
    case DType::kInt8:
      return "i8";
    case DType::kUInt8:
      return "u8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kInt8:
      return 1;
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
      return 2;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
  }
  return 0;
}

bool dtype_is_float(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64;
}

int64_t num_elements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) VACC_CHECK(d >= 0) << "negative dimension in " << shape_str(shape_);
  bytes_.assign(static_cast<size_t>(num_elements(shape_)) * dtype_size(dtype_), 0);
}

double Tensor::as_double(int64_t i) const {
  return visit_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(reinterpret_cast<const T *>(bytes_.data())[i]);
  });
}

int64_t Tensor::as_int(int64_t i) const {
  return visit_dtype(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(reinterpret_cast<const T *>(bytes_.data())[i]);
  });
}

std::vector<int64_t> Tensor::to_int_vector() const {
  std::vector<int64_t> out(size());
  for (int64_t i = 0; i < size(); ++i) out[i] = as_int(i);
  return out;
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> out(size());
  for (int64_t i = 0; i < size(); ++i) out[i] = static_cast<float>(as_double(i));
  return out;
}

Tensor Tensor::reshaped(Shape shape) const {
  VACC_CHECK(num_elements(shape) == size())
      << "reshape " << shape_str(shape_) << " to " << shape_str(shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

namespace {
template <typename To>
To convert(double v) {
  if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else {
    if (std::isnan(v)) return 0;
    double r = std::nearbyint(v);  // round half to even (default rounding mode)
    double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    double hi = static_cast<double>(std::numeric_limits<To>::max());
    return static_cast<To>(r < lo ? lo : (r > hi ? hi : r));
  }
}
}  // namespace

Tensor Tensor::cast(DType dtype) const {
  Tensor out(dtype, shape_);
  visit_dtype(dtype_, [&](auto src_tag) {
    using S = decltype(src_tag);
    const S *src = reinterpret_cast<const S *>(bytes_.data());
    visit_dtype(dtype, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      D *dst = reinterpret_cast<D *>(out.bytes_.data());
      for (int64_t i = 0; i < size(); ++i) {
        if (dtype == DType::kBool) {
          dst[i] = src[i] != S{0} ? 1 : 0;
        } else if constexpr (std::is_floating_point_v<S>) {
          dst[i] = convert<D>(static_cast<double>(src[i]));
        } else {
          dst[i] = static_cast<D>(src[i]);  // integer to integer: wraps like ONNX Cast
        }
      }
    });
  });
  return out;
}

}  // namespace vacc::graph
