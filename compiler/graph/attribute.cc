#include "vacc/graph/attribute.h"

#include <fmt/format.h>

namespace vacc::graph {

namespace {
template <typename T>
const T *find(const std::map<std::string, Attribute> &map, const std::string &name,
              const char *kind) {
  auto it = map.find(name);
  if (it == map.end()) return nullptr;
  if (const T *v = std::get_if<T>(&it->second)) return v;
  fail("attribute '{}' must be {}", name, kind);
}
}  // namespace

int64_t Attributes::get_int(const std::string &name, int64_t fallback) const {
  const int64_t *v = find<int64_t>(map_, name, "an integer");
  return v ? *v : fallback;
}

int64_t Attributes::get_int(const std::string &name) const {
  const int64_t *v = find<int64_t>(map_, name, "an integer");
  if (!v) fail("required attribute '{}' is missing", name);
  return *v;
}

float Attributes::get_float(const std::string &name, float fallback) const {
  auto it = map_.find(name);
  if (it != map_.end()) {
    if (const int64_t *i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  }
  const float *v = find<float>(map_, name, "a float");
  return v ? *v : fallback;
}

std::string Attributes::get_string(const std::string &name, const std::string &fallback) const {
  const std::string *v = find<std::string>(map_, name, "a string");
  return v ? *v : fallback;
}

std::vector<int64_t> Attributes::get_ints(const std::string &name,
                                          const std::vector<int64_t> &fallback) const {
  const std::vector<int64_t> *v = find<std::vector<int64_t>>(map_, name, "a list of integers");
  return v ? *v : fallback;
}

std::vector<float> Attributes::get_floats(const std::string &name) const {
  const std::vector<float> *v = find<std::vector<float>>(map_, name, "a list of floats");
  return v ? *v : std::vector<float>{};
}

const Tensor &Attributes::get_tensor(const std::string &name) const {
  const Tensor *v = find<Tensor>(map_, name, "a tensor");
  if (!v) fail("required attribute '{}' is missing", name);
  return *v;
}

std::string attribute_str(const Attribute &attr) {
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string &v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<int64_t> &v) const {
      return fmt::format("[{}]", fmt::join(v, ","));
    }
    std::string operator()(const std::vector<float> &v) const {
      return fmt::format("[{}]", fmt::join(v, ","));
    }
    std::string operator()(const Tensor &t) const {
      return fmt::format("tensor {}{}", dtype_name(t.dtype()), shape_str(t.shape()));
    }
  };
  return std::visit(Printer{}, attr);
}

}  // namespace vacc::graph
