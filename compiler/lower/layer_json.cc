#include "vacc/lower/layer_json.h"

#include <fmt/format.h>

#include <optional>
#include <variant>

#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// Reads the fields of one JSON object, each refusal naming `where` and the field.
class Fields {
 public:
  Fields(const Json &j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("{}: expected a JSON object", where_);
  }
  int64_t integer(const char *key, std::optional<int64_t> fallback = std::nullopt) const {
    if (!j_.contains(key)) {
      if (fallback) return *fallback;
      fail("{}: field '{}' is missing", where_, key);
    }
    const Json &v = j_.at(key);
    if (!v.is_number_integer()) fail("{}: field '{}' must be an integer", where_, key);
    return v.get<int64_t>();
  }
  std::vector<int64_t> integers(const char *key) const {
    if (!j_.contains(key)) return {};
    const Json &v = j_.at(key);
    if (!v.is_array()) fail("{}: field '{}' must be an array of integers", where_, key);
    std::vector<int64_t> out;
    for (const Json &e : v) {
      if (!e.is_number_integer()) fail("{}: field '{}' must be an array of integers", where_, key);
      out.push_back(e.get<int64_t>());
    }
    return out;
  }
  std::string text(const char *key) const {
    if (!j_.contains(key) || !j_.at(key).is_string())
      fail("{}: field '{}' must be a string", where_, key);
    return j_.at(key).get<std::string>();
  }
  bool has(const char *key) const { return j_.contains(key); }
  bool flag(const char *key, bool fallback) const {
    if (!j_.contains(key)) return fallback;
    if (!j_.at(key).is_boolean()) fail("{}: field '{}' must be true or false", where_, key);
    return j_.at(key).get<bool>();
  }
  Fields required(const char *key) const {
    std::optional<Fields> o = object(key);
    if (!o) fail("{}: field '{}' is missing", where_, key);
    return *o;
  }
  std::optional<Fields> object(const char *key) const {
    if (!j_.contains(key) || j_.at(key).is_null()) return std::nullopt;
    return Fields(j_.at(key), fmt::format("{}: field '{}'", where_, key));
  }

 private:
  const Json &j_;
  std::string where_;
};

OJson requant_json(const Requant &q) {
  OJson j = {{"shift", q.shift}, {"relu", q.relu}};
  if (q.per_channel()) j["channel_shifts"] = q.channel_shifts;
  if (q.clip_min) j["clip_min"] = *q.clip_min;
  if (q.clip_max) j["clip_max"] = *q.clip_max;
  if (q.multiplied()) {
    j["multipliers"] = q.multipliers;
    j["pre_clip"] = q.pre_clip;
    j["zero_point"] = q.zero_point;
    j["post_shift"] = q.post_shift;
  }
  return j;
}

// The layer's required `requant` object.
Requant requant_from(const Fields &layer) {
  const Fields f = layer.required("requant");
  Requant q;
  q.shift = static_cast<int>(f.integer("shift"));
  q.relu = f.flag("relu", true);
  q.channel_shifts = f.integers("channel_shifts");
  if (f.has("clip_min")) q.clip_min = f.integer("clip_min");
  if (f.has("clip_max")) q.clip_max = f.integer("clip_max");
  q.multipliers = f.integers("multipliers");
  q.pre_clip = f.integer("pre_clip", 0);
  q.zero_point = f.integer("zero_point", 0);
  q.post_shift = static_cast<int>(f.integer("post_shift", 0));
  return q;
}

// A conv2d layer's fields (but 'op').
Conv2dParams conv_from(const Fields &f) {
  Conv2dParams p;
  p.batch = f.integer("batch");
  p.in_channels = f.integer("in_channels");
  p.out_channels = f.integer("out_channels");
  p.height = f.integer("height");
  p.width = f.integer("width");
  p.kernel_h = f.integer("kernel_h");
  p.kernel_w = f.integer("kernel_w");
  p.stride_h = f.integer("stride_h");
  p.stride_w = f.integer("stride_w");
  p.pad_h = f.integer("pad_h");
  p.pad_w = f.integer("pad_w");
  p.groups = f.integer("groups", 1);
  p.requant = requant_from(f);
  if (const auto r = f.object("residual"))
    p.residual = Residual{
        static_cast<int>(r->integer("lshift_out")), static_cast<int>(r->integer("lshift_skip")),
        static_cast<int>(r->integer("rshift")), r->integer("clip_min"), r->integer("clip_max")};
  if (const auto q = f.object("pool"))
    p.pool = PoolEpilogue{q->integer("kernel_h"), q->integer("kernel_w"), q->integer("stride_h"),
                          q->integer("stride_w")};
  return p;
}

}  // namespace

OJson to_json(const Layer &layer) {
  struct Visit {
    OJson operator()(const Conv2dParams &p) const {
      OJson j = {{"op", "conv2d"},        {"batch", p.batch},     {"in_channels", p.in_channels},
                 {"out_channels", p.out_channels}, {"height", p.height},  {"width", p.width},
                 {"kernel_h", p.kernel_h}, {"kernel_w", p.kernel_w}, {"stride_h", p.stride_h},
                 {"stride_w", p.stride_w}, {"pad_h", p.pad_h},     {"pad_w", p.pad_w},
                 {"groups", p.groups},     {"requant", requant_json(p.requant)}};
      if (p.residual)
        j["residual"] = {{"lshift_out", p.residual->lshift_out},
                         {"lshift_skip", p.residual->lshift_skip},
                         {"rshift", p.residual->rshift},
                         {"clip_min", p.residual->clip_min},
                         {"clip_max", p.residual->clip_max}};
      if (p.pool)
        j["pool"] = {{"kernel_h", p.pool->kernel_h},
                     {"kernel_w", p.pool->kernel_w},
                     {"stride_h", p.pool->stride_h},
                     {"stride_w", p.pool->stride_w}};
      return j;
    }
    OJson operator()(const DenseParams &p) const {
      return {{"op", "dense"},
              {"batch", p.batch},
              {"in_features", p.in_features},
              {"out_features", p.out_features},
              {"groups", p.groups},
              {"requant", requant_json(p.requant)}};
    }
    OJson operator()(const AddParams &p) const {
      OJson j = {{"op", "add"},          {"batch", p.batch},       {"channels", p.channels},
                 {"height", p.height},   {"width", p.width},       {"lshift_a", p.lshift_a},
                 {"lshift_b", p.lshift_b}, {"rshift", p.rshift},   {"relu", p.relu}};
      if (p.clip_min) j["clip_min"] = *p.clip_min;
      if (p.clip_max) j["clip_max"] = *p.clip_max;
      return j;
    }
    OJson operator()(const ConvChainParams &p) const {
      OJson first = (*this)(p.first), second = (*this)(p.second);
      first.erase("op");
      second.erase("op");
      return {{"op", "conv_chain"}, {"first", first}, {"second", second}};
    }
    OJson operator()(const PoolParams &p) const {
      return {{"op", "pool2d"},
              {"kind", p.kind == PoolParams::Kind::kMax ? "max" : "average"},
              {"batch", p.batch},
              {"channels", p.channels},
              {"height", p.height},
              {"width", p.width},
              {"kernel_h", p.kernel_h},
              {"kernel_w", p.kernel_w},
              {"stride_h", p.stride_h},
              {"stride_w", p.stride_w},
              {"pad_top", p.pad_top},
              {"pad_left", p.pad_left},
              {"pad_bottom", p.pad_bottom},
              {"pad_right", p.pad_right},
              {"out_height", p.out_height},
              {"out_width", p.out_width},
              {"input_nonnegative", p.input_nonnegative},
              {"count_include_pad", p.count_include_pad},
              {"scale_bits", p.scale_bits},
              {"rshift", p.rshift},
              {"clip_min", p.clip_min},
              {"clip_max", p.clip_max}};
    }
  };
  OJson j = {{"name", layer.name}};
  j.update(std::visit(Visit{}, layer.params));
  return j;
}

Layer layer_from_json(const Json &j, const std::string &where) {
  const Fields f(j, where);
  Layer layer;
  layer.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "";
  const std::string op = f.text("op");
  if (op == "conv2d") {
    layer.params = conv_from(f);
  } else if (op == "conv_chain") {
    layer.params = ConvChainParams{conv_from(f.required("first")), conv_from(f.required("second"))};
  } else if (op == "dense") {
    DenseParams p;
    p.batch = f.integer("batch");
    p.in_features = f.integer("in_features");
    p.out_features = f.integer("out_features");
    p.groups = f.integer("groups", 1);
    p.requant = requant_from(f);
    layer.params = p;
  } else if (op == "add") {
    AddParams p;
    p.batch = f.integer("batch");
    p.channels = f.integer("channels");
    p.height = f.integer("height");
    p.width = f.integer("width");
    p.lshift_a = static_cast<int>(f.integer("lshift_a"));
    p.lshift_b = static_cast<int>(f.integer("lshift_b"));
    p.rshift = static_cast<int>(f.integer("rshift"));
    p.relu = f.flag("relu", false);
    if (f.has("clip_min")) p.clip_min = f.integer("clip_min");
    if (f.has("clip_max")) p.clip_max = f.integer("clip_max");
    layer.params = p;
  } else if (op == "pool2d") {
    PoolParams p;
    const std::string kind = f.text("kind");
    if (kind != "max" && kind != "average")
      fail("{}: field 'kind' is '{}'; expected max or average", where, kind);
    p.kind = kind == "max" ? PoolParams::Kind::kMax : PoolParams::Kind::kAverage;
    p.batch = f.integer("batch");
    p.channels = f.integer("channels");
    p.height = f.integer("height");
    p.width = f.integer("width");
    p.kernel_h = f.integer("kernel_h");
    p.kernel_w = f.integer("kernel_w");
    p.stride_h = f.integer("stride_h");
    p.stride_w = f.integer("stride_w");
    p.pad_top = f.integer("pad_top");
    p.pad_left = f.integer("pad_left");
    p.pad_bottom = f.integer("pad_bottom");
    p.pad_right = f.integer("pad_right");
    p.out_height = f.integer("out_height");
    p.out_width = f.integer("out_width");
    p.input_nonnegative = f.flag("input_nonnegative", false);
    p.count_include_pad = f.flag("count_include_pad", false);
    p.scale_bits = static_cast<int>(f.integer("scale_bits"));
    p.rshift = static_cast<int>(f.integer("rshift"));
    p.clip_min = f.integer("clip_min");
    p.clip_max = f.integer("clip_max");
    layer.params = p;
  } else {
    fail(
        "{}: field 'op' is '{}'; expected conv2d, conv_chain, dense, add or "
        "pool2d",
        where, op);
  }
  return layer;
}

OJson to_json(const AccelSchedule &s) {
  OJson j = {{"tile_h", s.tile_h},
             {"tile_w", s.tile_w},
             {"tile_oc", s.tile_oc},
             {"tile_ic", s.tile_ic},
             {"vthreads", s.vthreads},
             {"vthread_rows", s.vthread_rows ? 1 : 0},
             {"bias_once", s.bias_once ? 1 : 0},
             {"resident", static_cast<int>(s.resident)}};
  // A conv chain's knobs only where set: other schedules' records stay as they were.
  if (s.mid_oc > 0) {
    j["mid_oc"] = s.mid_oc;
    j["mid_ic"] = s.mid_ic;
  }
  return j;
}

AccelSchedule schedule_from_json(const Json &j, const std::string &where) {
  const Fields f(j, where);
  AccelSchedule s;
  s.tile_h = f.integer("tile_h");
  s.tile_w = f.integer("tile_w");
  s.tile_oc = f.integer("tile_oc");
  s.tile_ic = f.integer("tile_ic");
  const int64_t v = f.integer("vthreads");
  if (v < 1 || v > 64) fail("{}: field 'vthreads' = {} is out of range", where, v);
  s.vthreads = static_cast<int>(v);
  s.vthread_rows = f.integer("vthread_rows", 0) != 0;
  s.bias_once = f.integer("bias_once", 0) != 0;
  const int64_t r = f.integer("resident", 0);
  if (r < 0 || r > 2)
    fail("{}: field 'resident' = {} must be 0 (none), 1 (weights) or 2 (inputs)", where, r);
  s.resident = static_cast<AccelSchedule::Resident>(r);
  s.mid_oc = f.integer("mid_oc", 0);
  s.mid_ic = f.integer("mid_ic", 0);
  if (s.mid_oc < 0 || s.mid_ic < 0)
    fail("{}: fields 'mid_oc' = {} and 'mid_ic' = {} must not be negative", where, s.mid_oc,
         s.mid_ic);
  return s;
}

}  // namespace vacc::lower
