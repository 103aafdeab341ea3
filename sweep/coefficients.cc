#include "vacc/sweep/coefficients.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "vacc/support/error.h"

namespace vacc::sweep {

double CoefficientTable::get(const std::string &key) const {
  auto it = values.find(key);
  if (it == values.end()) fail("{}: key 'coefficients.{}': missing", path, key);
  return it->second.value;
}

double CoefficientTable::interpolate(const std::string &curve, double x) const {
  auto it = curves.find(curve);
  if (it == curves.end()) fail("{}: key 'curves.{}': missing", path, curve);
  const auto &pts = it->second;
  if (x <= pts.front().first) return pts.front().second;
  if (x >= pts.back().first) return pts.back().second;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (x > pts[i].first) continue;
    const auto [x0, y0] = pts[i - 1];
    const auto [x1, y1] = pts[i];
    const double t = std::log(x / x0) / std::log(x1 / x0);
    return std::exp(std::log(y0) + t * (std::log(y1) - std::log(y0)));
  }
  return pts.back().second;
}

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &key, const std::string &what) {
  fail("{}: key '{}': {}", path, key, what);
}

double number(const YAML::Node &n, const std::string &path, const std::string &key) {
  if (!n || !n.IsScalar()) bad(path, key, "expected a number");
  try {
    const double v = n.as<double>();
    if (!std::isfinite(v)) throw YAML::Exception(YAML::Mark(), "");
    return v;
  } catch (const YAML::Exception &) {
    bad(path, key, fmt::format("expected a number, found '{}'", n.Scalar()));
  }
}

std::string source(const YAML::Node &n, const std::string &path, const std::string &key) {
  if (!n || !n.IsScalar() || n.Scalar().empty())
    bad(path, key, "every coefficient needs a 'source' naming where its value comes from");
  return n.Scalar();
}

}  // namespace

CoefficientTable parse_coefficients(const std::string &yaml_text, const std::string &path,
                                    const std::vector<std::string> &required,
                                    const std::vector<std::string> &required_curves) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException &e) {
    fail("{}:{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) fail("{}: expected a mapping with name, coefficients (and curves)", path);
  CoefficientTable t;
  t.path = path;
  for (const auto &entry : root) {
    const std::string key = entry.first.Scalar();
    if (key != "name" && key != "coefficients" && key != "curves")
      bad(path, key, "unknown key (known: name, coefficients, curves)");
  }
  t.name = root["name"] ? root["name"].as<std::string>() : path;
  if (const YAML::Node &cs = root["coefficients"]) {
    if (!cs.IsMap()) bad(path, "coefficients", "expected a mapping of name: {value, unit, source}");
    for (const auto &entry : cs) {
      const std::string name = entry.first.Scalar();
      const std::string key = "coefficients." + name;
      if (std::find(required.begin(), required.end(), name) == required.end())
        bad(path, key, fmt::format("unknown coefficient (known: {})", fmt::join(required, ", ")));
      const YAML::Node &c = entry.second;
      if (!c.IsMap()) bad(path, key, "expected {value, unit, source}");
      Coefficient v;
      v.value = number(c["value"], path, key + ".value");
      if (v.value < 0)
        bad(path, key + ".value", fmt::format("must not be negative, got {}", v.value));
      v.unit = c["unit"] ? c["unit"].as<std::string>() : "";
      v.source = source(c["source"], path, key + ".source");
      t.values[name] = v;
    }
  }
  if (const YAML::Node &cs = root["curves"]) {
    if (!cs.IsMap()) bad(path, "curves", "expected a mapping of name: {points, source}");
    for (const auto &entry : cs) {
      const std::string name = entry.first.Scalar();
      const std::string key = "curves." + name;
      if (std::find(required_curves.begin(), required_curves.end(), name) == required_curves.end())
        bad(path, key, fmt::format("unknown curve (known: {})", fmt::join(required_curves, ", ")));
      const YAML::Node &points = entry.second["points"];
      if (!points || !points.IsSequence() || points.size() == 0)
        bad(path, key + ".points", "expected a list of [x, y] pairs");
      std::vector<std::pair<double, double>> pts;
      for (size_t i = 0; i < points.size(); ++i) {
        const std::string pk = fmt::format("{}.points[{}]", key, i);
        if (!points[i].IsSequence() || points[i].size() != 2) bad(path, pk, "expected [x, y]");
        const double x = number(points[i][0], path, pk), y = number(points[i][1], path, pk);
        if (x <= 0 || y <= 0)
          bad(path, pk, "x and y must be positive (interpolated on log scales)");
        if (!pts.empty() && x <= pts.back().first) bad(path, pk, "x must increase");
        pts.emplace_back(x, y);
      }
      t.curves[name] = pts;
      t.curve_sources[name] = source(entry.second["source"], path, key + ".source");
    }
  }
  for (const auto &name : required)
    if (!t.values.count(name)) bad(path, "coefficients." + name, "missing");
  for (const auto &name : required_curves)
    if (!t.curves.count(name)) bad(path, "curves." + name, "missing");
  return t;
}

}  // namespace vacc::sweep
