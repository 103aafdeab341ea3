#include "vacc/sweep/points.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "vacc/hw/package.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

std::string Point::label() const {
  if (params.empty()) return "base";
  std::string out;
  for (const auto &[k, v] : params) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

std::string base_config_text(const SweepSpec &spec, const std::string &spec_dir) {
  if (spec.base.empty()) return spec.base_yaml;
  fs::path p(spec.base);
  if (p.is_relative() && path_exists(fs::path(spec_dir) / p)) p = fs::path(spec_dir) / p;
  const std::string path = path_exists(p) ? p.string() : isa::resolve_config_path(spec.base);
  return read_file(path, fmt::format("base config (key 'base' of {})", spec.source));
}

isa::HwConfig point_config(const std::string &config_yaml, const std::string &name) {
  isa::HwConfig c = isa::parse_config(config_yaml, name);
  hw::generate_package(c);  // the rules of the RTL generator (tile vs page and burst sizes)
  return c;
}

namespace {

// Sets "section.key" (or a top-level key) of a config mapping to a YAML scalar. The value is
// the scalar itself, not YAML text to parse again: a text value such as "a: b" or one with a
// backslash would otherwise become a mapping or a parse error (found by the sweep_spec fuzzer).
void set_key(YAML::Node &root, const std::string &key, const std::string &value) {
  const size_t dot = key.find('.');
  YAML::Node scalar(value);
  if (dot == std::string::npos) {
    root[key] = scalar;
  } else {
    YAML::Node section = root[key.substr(0, dot)];
    section[key.substr(dot + 1)] = scalar;
  }
}

}  // namespace

std::vector<Point> expand_points(const SweepSpec &spec, const std::string &base_yaml) {
  YAML::Node base;
  try {
    base = YAML::Load(base_yaml);
  } catch (const YAML::ParserException &e) {
    fail("{}: base config: invalid YAML at line {}: {}", spec.source, e.mark.line + 1, e.msg);
  }
  if (base.IsNull()) base = YAML::Node(YAML::NodeType::Map);
  if (!base.IsMap()) fail("{}: base config: expected a mapping of config sections", spec.source);

  const int64_t n = spec.num_points();
  std::vector<Point> points;
  points.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Point p;
    p.index = i;
    YAML::Node root = YAML::Clone(base);
    // Mixed radix, the last axis varying fastest.
    int64_t rest = i;
    std::vector<size_t> digit(spec.axes.size());
    for (size_t a = spec.axes.size(); a-- > 0;) {
      const int64_t size = static_cast<int64_t>(spec.axes[a].values.size());
      digit[a] = static_cast<size_t>(rest % size);
      rest /= size;
    }
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string &value = spec.axes[a].values[digit[a]];
      p.params.emplace_back(spec.axes[a].key, value);
      set_key(root, spec.axes[a].key, value);
    }
    const std::string name = fmt::format("{}-p{}", spec.name, i);
    root["name"] = name;
    YAML::Emitter out;
    out << root;
    p.config_yaml = out.c_str();
    try {
      p.config = point_config(p.config_yaml, name);
    } catch (const Error &e) {
      std::string reason = e.what();
      if (reason.rfind(name + ": ", 0) == 0) reason = reason.substr(name.size() + 2);
      p.invalid_reason = reason;
    }
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace vacc::sweep
