#include "vacc/sweep/spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "layer_bench.h"
#include "vacc/hw/parts.h"
#include "vacc/isa/config.h"
#include "vacc/isa/yaml_octal.h"
#include "vacc/support/error.h"
#include "vacc/tune/search_strategy.h"

namespace vacc::sweep {

bool compare(const Constraint &c, double value) {
  if (c.op == "<=") return value <= c.value;
  if (c.op == "<") return value < c.value;
  if (c.op == ">=") return value >= c.value;
  if (c.op == ">") return value > c.value;
  return value == c.value;
}

int64_t SweepSpec::num_points() const {
  int64_t n = 1;
  for (const Axis &a : axes) n *= static_cast<int64_t>(a.values.size());
  return n;
}

namespace {

using Kind = isa::ConfigKey::Kind;

const char *const kMetrics[] = {"lut", "ff", "dsp", "bram", "area_mm2"};
const char *const kOps[] = {"<=", ">=", "==", "<", ">"};  // two-character ones first

std::string kind_name(const YAML::Node &n) {
  if (n.IsMap()) return "mapping";
  if (n.IsSequence()) return "list";
  if (n.IsNull()) return "nothing";
  return "scalar";
}

class SpecReader {
 public:
  explicit SpecReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void error(const std::string &key, const std::string &what) const {
    fail("{}: key '{}': {}", source_, key, what);
  }

  std::string text(const YAML::Node &n, const std::string &key) const {
    if (!n.IsScalar()) error(key, "expected a string, found a " + kind_name(n));
    return n.Scalar();
  }

  int64_t integer(const YAML::Node &n, const std::string &key) const {
    if (!n.IsScalar()) error(key, "expected an integer, found a " + kind_name(n));
    if (isa::has_octal_spelling(n.Scalar())) error(key, isa::octal_spelling_message(n.Scalar()));
    try {
      return n.as<int64_t>();
    } catch (const YAML::Exception &) {
      error(key, fmt::format("expected an integer, found '{}'", n.Scalar()));
    }
  }

  // on/off (also true/false, as PyYAML writes them back).
  bool on_off(const YAML::Node &n, const std::string &key) const {
    const std::string word = text(n, key);
    if (word != "on" && word != "off" && word != "true" && word != "false")
      error(key, fmt::format("expected on or off, found '{}'", word));
    return word == "on" || word == "true";
  }

  double number(const YAML::Node &n, const std::string &key) const {
    if (!n.IsScalar()) error(key, "expected a number, found a " + kind_name(n));
    try {
      const double v = n.as<double>();
      if (!std::isfinite(v))
        error(key, fmt::format("expected a finite number, found '{}'", n.Scalar()));
      return v;
    } catch (const YAML::Exception &) {
      error(key, fmt::format("expected a number, found '{}'", n.Scalar()));
    }
  }

  // A value of a config key of `kind`, as the YAML scalar a config file would hold.
  std::string value(const YAML::Node &n, Kind kind, const std::string &key) const {
    switch (kind) {
      case Kind::kInteger:
        return std::to_string(integer(n, key));
      case Kind::kNumber:
        return fmt::format("{}", number(n, key));
      case Kind::kText:
        return text(n, key);
    }
    return "";
  }

  void check_keys(const YAML::Node &map, const std::string &where,
                  const std::vector<std::string> &known) const {
    for (const auto &entry : map) {
      const std::string k = entry.first.Scalar();
      if (std::find(known.begin(), known.end(), k) == known.end())
        error(where.empty() ? k : where + "." + k,
              fmt::format("unknown key (known: {})", fmt::join(known, ", ")));
    }
  }

  Axis axis(const std::string &config_key, const YAML::Node &n) const {
    const std::string key = "axes." + config_key;
    const auto &keys = isa::config_keys();
    auto it = std::find_if(keys.begin(), keys.end(),
                           [&](const isa::ConfigKey &k) { return k.path == config_key; });
    if (it == keys.end()) {
      std::vector<std::string> names;
      for (const auto &k : keys) names.push_back(k.path);
      error(key, fmt::format("not a config key (known: {})", fmt::join(names, ", ")));
    }
    Axis a;
    a.key = config_key;
    if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i)
        a.values.push_back(value(n[i], it->kind, fmt::format("{}[{}]", key, i)));
    } else if (n.IsMap()) {
      a.values = range(n, it->kind, key);
    } else {
      error(key, fmt::format("expected a list of values or a range {{from, to, step}}, found a {}",
                             kind_name(n)));
    }
    if (a.values.empty()) error(key, "empty axis: give at least one value");
    std::set<std::string> seen;
    for (const auto &v : a.values)
      if (!seen.insert(v).second) error(key, fmt::format("value {} appears twice", v));
    return a;
  }

  // {from, to, step}: step a positive number (added) or "xF" with F > 1 (multiplied).
  std::vector<std::string> range(const YAML::Node &n, Kind kind, const std::string &key) const {
    if (kind == Kind::kText) error(key, "a range needs a numeric key: list the values instead");
    check_keys(n, key, {"from", "to", "step"});
    for (const char *k : {"from", "to", "step"})
      if (!n[k]) error(key, fmt::format("a range needs from, to and step (missing '{}')", k));
    const bool integral = kind == Kind::kInteger;
    auto num = [&](const YAML::Node &v, const std::string &k) {
      return integral ? static_cast<double>(integer(v, k)) : number(v, k);
    };
    const double from = num(n["from"], key + ".from"), to = num(n["to"], key + ".to");
    const std::string step_key = key + ".step";
    const std::string step_text = text(n["step"], step_key);
    bool multiply = !step_text.empty() && (step_text[0] == 'x' || step_text[0] == '*');
    double step = 0;
    try {
      size_t used = 0;
      const std::string digits = multiply ? step_text.substr(1) : step_text;
      step = std::stod(digits, &used);
      if (used != digits.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception &) {
      error(step_key, fmt::format("expected a number (added) or xF (multiplied by F), found '{}'",
                                  step_text));
    }
    if (!std::isfinite(step)) error(step_key, fmt::format("'{}' is not finite", step_text));
    if (multiply && step <= 1)
      error(step_key,
            fmt::format("a multiplying step must be greater than 1, got '{}'", step_text));
    if (!multiply && step <= 0)
      error(step_key, fmt::format("the step must be positive, got '{}'", step_text));
    if (integral && std::floor(step) != step)
      error(step_key, fmt::format("{} takes integers: the step must be one, got '{}'",
                                  key.substr(5), step_text));
    if (multiply && from <= 0)
      error(key + ".from", fmt::format("a multiplying range must start above 0, got {}", from));
    if (from > to)
      error(key, fmt::format("from ({}) is greater than to ({}): empty range", from, to));
    std::vector<std::string> out;
    // A relative tolerance so that 0.1 steps reach `to` despite rounding.
    const double slack = 1e-9 * std::max(1.0, std::abs(to));
    for (double v = from; v <= to + slack; v = multiply ? v * step : v + step) {
      if (static_cast<int64_t>(out.size()) >= kMaxRangeValues)
        error(key, fmt::format("the range gives more than {} values", kMaxRangeValues));
      out.push_back(integral ? std::to_string(static_cast<int64_t>(std::llround(v)))
                             : fmt::format("{}", v));
    }
    return out;
  }

  Constraint constraint(const YAML::Node &n, const std::string &key) const {
    Constraint c;
    if (n.IsMap()) {
      check_keys(n, key, {"fits"});
      c.kind = Constraint::Kind::kFits;
      c.part = text(n["fits"], key + ".fits");
      if (!hw::find_part(c.part)) {
        std::vector<std::string> names;
        for (const auto &p : hw::known_parts()) names.push_back(p.name);
        error(key + ".fits",
              fmt::format("unknown FPGA part '{}' (known: {})", c.part, fmt::join(names, ", ")));
      }
      c.text = "fits " + c.part;
      return c;
    }
    c.text = text(n, key);
    const std::string &s = c.text;
    size_t at = std::string::npos;
    for (const char *op : kOps)
      if ((at = s.find(op)) != std::string::npos) {
        c.op = op;
        break;
      }
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(" \t"));
      t.erase(t.find_last_not_of(" \t") + 1);
      return t;
    };
    if (at == std::string::npos)
      error(key, fmt::format("'{}': expected METRIC OP NUMBER (e.g. dsp <= 220) or fits: PART", s));
    c.metric = trim(s.substr(0, at));
    if (std::find(std::begin(kMetrics), std::end(kMetrics), c.metric) == std::end(kMetrics))
      error(key,
            fmt::format("unknown metric '{}' (known: {})", c.metric, fmt::join(kMetrics, ", ")));
    const std::string number_text = trim(s.substr(at + c.op.size()));
    try {
      size_t used = 0;
      c.value = std::stod(number_text, &used);
      if (used != number_text.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception &) {
      error(key,
            fmt::format("'{}': expected a number after '{}', found '{}'", s, c.op, number_text));
    }
    return c;
  }

  Workload workload(const YAML::Node &n, const std::string &key) const {
    if (!n.IsMap())
      error(key,
            fmt::format("expected a mapping with 'model' or 'bench', found a {}", kind_name(n)));
    Workload w;
    if (n["model"] && n["bench"]) error(key, "give either 'model' or 'bench', not both");
    if (n["model"]) {
      check_keys(n, key, {"model", "name", "input", "calibration", "vthreads", "batch"});
      w.model = text(n["model"], key + ".model");
      if (w.model.empty()) error(key + ".model", "empty path");
      w.name = std::filesystem::path(w.model).stem().string();
      if (n["input"]) w.input = text(n["input"], key + ".input");
      if (n["calibration"]) w.calibration = text(n["calibration"], key + ".calibration");
      if (n["batch"]) {
        w.batch = integer(n["batch"], key + ".batch");
        if (w.batch < 1 || w.batch > 4096)
          error(key + ".batch", fmt::format("must be between 1 and 4096, got {}", w.batch));
      }
    } else if (n["bench"]) {
      check_keys(n, key, {"bench", "name", "layers", "vthreads"});
      w.kind = Workload::Kind::kConvBench;
      w.bench = text(n["bench"], key + ".bench");
      if (w.bench != "resnet18-convs")
        error(key + ".bench",
              fmt::format("unknown benchmark '{}' (known: resnet18-convs)", w.bench));
      w.name = w.bench;
      if (n["layers"]) {
        const YAML::Node &l = n["layers"];
        if (!l.IsSequence() || l.size() == 0)
          error(key + ".layers", "expected a non-empty list of layer names (C1..C12)");
        std::vector<std::string> known;
        for (const auto &spec : bench::resnet18_convs()) known.push_back(spec.name);
        for (size_t i = 0; i < l.size(); ++i) {
          const std::string name = text(l[i], fmt::format("{}.layers[{}]", key, i));
          if (std::find(known.begin(), known.end(), name) == known.end())
            error(fmt::format("{}.layers[{}]", key, i),
                  fmt::format("no layer '{}' (known: {})", name, fmt::join(known, ", ")));
          w.layers.push_back(name);
        }
      }
    } else {
      error(key, "a workload needs 'model' (an ONNX file) or 'bench' (resnet18-convs)");
    }
    if (n["name"]) {
      w.name = text(n["name"], key + ".name");
      if (w.name.empty()) error(key + ".name", "empty name");
    }
    if (n["vthreads"]) {
      w.vthreads = static_cast<int>(integer(n["vthreads"], key + ".vthreads"));
      if (w.vthreads != 1 && w.vthreads != 2)
        error(key + ".vthreads", fmt::format("choose 1 or 2, got {}", w.vthreads));
    }
    return w;
  }

  // An inline base: a config file's mapping; its keys are checked here, its rules per point.
  void check_inline_base(const YAML::Node &n) const {
    for (const auto &entry : n) {
      const std::string section = entry.first.Scalar();
      if (section == "name") continue;
      const auto &keys = isa::config_keys();
      bool top = false, nested = false;
      for (const auto &k : keys) {
        top = top || k.path == section;
        nested = nested || k.path.rfind(section + ".", 0) == 0;
      }
      if (top) continue;
      if (!nested) error("base." + section, "not a config section or key");
      if (!entry.second.IsMap()) error("base." + section, "expected a mapping");
      for (const auto &f : entry.second) {
        const std::string path = section + "." + f.first.Scalar();
        if (std::none_of(keys.begin(), keys.end(),
                         [&](const isa::ConfigKey &k) { return k.path == path; }))
          error("base." + path, "not a config key");
      }
    }
  }

 private:
  std::string source_;
};

}  // namespace

SweepSpec parse_spec(const std::string &yaml_text, const std::string &source) {
  SpecReader r(source);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException &e) {
    fail("{}:{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) fail("{}: expected a mapping with base, axes, workloads at the top", source);
  r.check_keys(root, "", {"name", "base", "axes", "constraints", "workloads", "tune"});

  SweepSpec spec;
  spec.source = source;
  spec.name = std::filesystem::path(source).stem().string();
  if (root["name"]) spec.name = r.text(root["name"], "name");
  if (const YAML::Node &b = root["base"]) {
    if (b.IsMap()) {
      r.check_inline_base(b);
      YAML::Emitter out;
      out << b;
      spec.base.clear();
      spec.base_yaml = out.c_str();
    } else {
      spec.base = r.text(b, "base");
      if (spec.base.empty())
        r.error("base", "empty: give a config name (default, small, wide) or path");
    }
  }

  if (const YAML::Node &axes = root["axes"]) {
    if (!axes.IsMap() && !axes.IsNull())
      r.error("axes", "expected a mapping of config keys to lists or ranges");
    std::set<std::string> seen;
    for (const auto &entry : axes) {
      const std::string key = entry.first.Scalar();
      if (!seen.insert(key).second) r.error("axes." + key, "appears twice");
      spec.axes.push_back(r.axis(key, entry.second));
      int64_t n = 1;
      for (const Axis &a : spec.axes) {
        n *= static_cast<int64_t>(a.values.size());
        if (n > kMaxPoints)
          r.error("axes", fmt::format("more than {} points: narrow the axes", kMaxPoints));
      }
    }
  }

  if (const YAML::Node &cs = root["constraints"]) {
    if (!cs.IsSequence()) r.error("constraints", "expected a list (e.g. - dsp <= 220)");
    for (size_t i = 0; i < cs.size(); ++i)
      spec.constraints.push_back(r.constraint(cs[i], fmt::format("constraints[{}]", i)));
  }

  const YAML::Node &ws = root["workloads"];
  if (!ws || !ws.IsSequence() || ws.size() == 0)
    r.error("workloads",
            "give a list of at least one workload (- model: X.onnx, or - bench: "
            "resnet18-convs)");
  std::set<std::string> names;
  for (size_t i = 0; i < ws.size(); ++i) {
    const std::string key = fmt::format("workloads[{}]", i);
    spec.workloads.push_back(r.workload(ws[i], key));
    if (!names.insert(spec.workloads.back().name).second)
      r.error(key, fmt::format("a second workload named '{}': give each a distinct 'name'",
                               spec.workloads.back().name));
  }
  if (const YAML::Node &t = root["tune"]) {
    if (!t.IsMap()) r.error("tune", "expected a mapping {trials: N, strategy: S, tails: on}");
    r.check_keys(t, "tune", {"trials", "strategy", "tails"});
    if (!t["trials"]) r.error("tune.trials", "missing: give the trials per layer workload");
    const int64_t trials = r.integer(t["trials"], "tune.trials");
    if (trials < 1 || trials > 100000)
      r.error("tune.trials", fmt::format("must be between 1 and 100000, got {}", trials));
    std::string strategy = "anneal";
    if (t["strategy"]) {
      strategy = r.text(t["strategy"], "tune.strategy");
      const auto &names = tune::strategy_names();
      if (std::find(names.begin(), names.end(), strategy) == names.end())
        r.error("tune.strategy",
                fmt::format("unknown strategy '{}' (known: {})", strategy, fmt::join(names, ", ")));
    }
    const bool tails = t["tails"] && r.on_off(t["tails"], "tune.tails");
    for (Workload &w : spec.workloads) {
      w.tune_trials = trials;
      w.tune_strategy = strategy;
      w.tune_tails = tails;
    }
  }
  return spec;
}

}  // namespace vacc::sweep
