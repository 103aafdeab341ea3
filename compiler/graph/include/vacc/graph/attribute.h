// Node attributes: the ONNX attribute kinds vacc needs, by name, with typed getters that
// raise a vacc::Error naming the attribute when it has the wrong kind.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "vacc/graph/tensor.h"

namespace vacc::graph {

using Attribute =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor>;

class Attributes {
 public:
  bool has(const std::string &name) const { return map_.count(name) != 0; }
  void set(const std::string &name, Attribute value) { map_[name] = std::move(value); }
  void erase(const std::string &name) { map_.erase(name); }

  int64_t get_int(const std::string &name, int64_t fallback) const;
  int64_t get_int(const std::string &name) const;
  float get_float(const std::string &name, float fallback) const;
  std::string get_string(const std::string &name, const std::string &fallback) const;
  std::vector<int64_t> get_ints(const std::string &name,
                                const std::vector<int64_t> &fallback = {}) const;
  std::vector<float> get_floats(const std::string &name) const;
  const Tensor &get_tensor(const std::string &name) const;

  const std::map<std::string, Attribute> &all() const { return map_; }

 private:
  std::map<std::string, Attribute> map_;
};

// "3", "[1,1]", "\"relu\"", "tensor f32[16]": for the printer.
std::string attribute_str(const Attribute &attr);

}  // namespace vacc::graph
