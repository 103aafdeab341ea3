// What every operator's schedule space shares (schedule_space.h): indexing the product of the
// knobs, the knobs as AccelSchedule's fields, and the dispatch to the operators' own spaces.
#include "vacc/lower/schedule_space.h"

#include <fmt/format.h>

#include <limits>
#include <variant>

#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

std::string requant_key(const Requant &q) {
  std::string k = "rq";
  if (q.per_channel()) k += "-pc";
  if (q.multiplied()) k += q.zero_point ? "-mulzp" : "-mul";
  return k == "rq" ? "rq-" : k;
}

}  // namespace

uint64_t ScheduleSpace::size() const {
  uint64_t n = 1;
  for (const Knob &k : knobs) {
    if (k.values.empty()) return 0;
    if (n > std::numeric_limits<uint64_t>::max() / k.values.size())
      return std::numeric_limits<uint64_t>::max();
    n *= k.values.size();
  }
  return n;
}

std::vector<size_t> ScheduleSpace::choices(uint64_t index) const {
  VACC_CHECK(index < size()) << "point " << index << " of a space of " << size();
  std::vector<size_t> c(knobs.size());
  for (size_t i = 0; i < knobs.size(); ++i) {
    c[i] = static_cast<size_t>(index % knobs[i].values.size());
    index /= knobs[i].values.size();
  }
  return c;
}

uint64_t ScheduleSpace::index(const std::vector<size_t> &c) const {
  VACC_CHECK(c.size() == knobs.size()) << "a choice per knob";
  uint64_t index = 0;
  for (size_t i = knobs.size(); i-- > 0;) {
    VACC_CHECK(c[i] < knobs[i].values.size()) << "knob " << knobs[i].name;
    index = index * knobs[i].values.size() + c[i];
  }
  return index;
}

AccelSchedule ScheduleSpace::schedule(const std::vector<size_t> &c) const {
  VACC_CHECK(c.size() == knobs.size()) << "a choice per knob";
  AccelSchedule s = base;
  for (size_t i = 0; i < knobs.size(); ++i) set_knob(&s, knobs[i].name, knobs[i].values[c[i]]);
  return s;
}

AccelSchedule ScheduleSpace::at(uint64_t index) const { return schedule(choices(index)); }

std::optional<uint64_t> ScheduleSpace::find(const AccelSchedule &s) const {
  std::vector<size_t> c(knobs.size());
  AccelSchedule rebuilt = base;
  for (size_t i = 0; i < knobs.size(); ++i) {
    const int64_t v = knob_value(s, knobs[i].name);
    size_t j = 0;
    while (j < knobs[i].values.size() && knobs[i].values[j] != v) ++j;
    if (j == knobs[i].values.size()) return std::nullopt;
    c[i] = j;
    set_knob(&rebuilt, knobs[i].name, v);
  }
  for (const char *field : {"tile_h", "tile_w", "tile_oc", "tile_ic", "vthreads", "vthread_rows",
                            "bias_once", "resident", "mid_oc", "mid_ic"})
    if (knob_value(rebuilt, field) != knob_value(s, field)) return std::nullopt;
  return index(c);
}

int64_t knob_value(const AccelSchedule &s, const std::string &knob) {
  if (knob == "tile_h") return s.tile_h;
  if (knob == "tile_w") return s.tile_w;
  if (knob == "tile_oc") return s.tile_oc;
  if (knob == "tile_ic") return s.tile_ic;
  if (knob == "vthreads") return s.vthreads;
  if (knob == "vthread_rows") return s.vthread_rows;
  if (knob == "bias_once") return s.bias_once;
  if (knob == "resident") return static_cast<int64_t>(s.resident);
  if (knob == "mid_oc") return s.mid_oc;
  if (knob == "mid_ic") return s.mid_ic;
  VACC_CHECK(false) << "no schedule knob '" << knob << "'";
  return 0;
}

void set_knob(AccelSchedule *s, const std::string &knob, int64_t value) {
  if (knob == "tile_h") {
    s->tile_h = value;
  } else if (knob == "tile_w") {
    s->tile_w = value;
  } else if (knob == "tile_oc") {
    s->tile_oc = value;
  } else if (knob == "tile_ic") {
    s->tile_ic = value;
  } else if (knob == "vthreads") {
    s->vthreads = static_cast<int>(value);
  } else if (knob == "vthread_rows") {
    s->vthread_rows = value != 0;
  } else if (knob == "bias_once") {
    s->bias_once = value != 0;
  } else if (knob == "resident") {
    VACC_CHECK(value >= 0 && value <= 2) << "resident = " << value;
    s->resident = static_cast<AccelSchedule::Resident>(value);
  } else if (knob == "mid_oc") {
    s->mid_oc = value;
  } else if (knob == "mid_ic") {
    s->mid_ic = value;
  } else {
    VACC_CHECK(false) << "no schedule knob '" << knob << "'";
  }
}

std::string describe(const AccelSchedule &s) {
  using R = AccelSchedule::Resident;
  return fmt::format("h{} w{} oc{} ic{} vt{}{}{}{}{}", s.tile_h, s.tile_w, s.tile_oc, s.tile_ic,
                     s.vthreads, s.vthread_rows ? " rows" : "", s.bias_once ? " bias_once" : "",
                     s.resident == R::kWeights  ? " wgt_resident"
                     : s.resident == R::kInputs ? " inp_resident"
                                                : "",
                     s.mid_oc > 0 ? fmt::format(" mid_oc{} mid_ic{}", s.mid_oc, s.mid_ic) : "");
}

ScheduleSpace schedule_space(const isa::HwConfig &config, const Layer &layer) {
  return std::visit([&](const auto &p) { return schedule_space(config, p); }, layer.params);
}

std::optional<std::string> check_schedule(const isa::HwConfig &config, const Layer &layer,
                                          const AccelSchedule &s) {
  return std::visit([&](const auto &p) { return check_schedule(config, p, s); }, layer.params);
}

AccelSchedule heuristic_schedule(const isa::HwConfig &config, const Layer &layer, int vthreads) {
  return std::visit(
      [&](const auto &p) { return default_schedule(config, p, vthreads, layer.name); },
      layer.params);
}

std::string workload_key(const Layer &layer) {
  struct Key {
    std::string operator()(const Conv2dParams &p) const {
      std::string k = fmt::format("conv2d n{} c{}x{}x{} o{} k{}x{} s{}x{} p{}x{} g{} {}", p.batch,
                                  p.in_channels, p.height, p.width, p.out_channels, p.kernel_h,
                                  p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.groups,
                                  requant_key(p.requant));
      if (p.residual)
        k += fmt::format(" res{},{},{}", p.residual->lshift_out, p.residual->lshift_skip,
                         p.residual->rshift);
      if (p.pool)
        k += fmt::format(" pool{}x{}s{}x{}", p.pool->kernel_h, p.pool->kernel_w, p.pool->stride_h,
                         p.pool->stride_w);
      return k;
    }
    std::string operator()(const DenseParams &p) const {
      return fmt::format("dense n{} c{} o{} g{} {}", p.batch, p.in_features, p.out_features,
                         p.groups, requant_key(p.requant));
    }
    std::string operator()(const AddParams &p) const {
      return fmt::format("add n{} c{}x{}x{} sh{},{},{}", p.batch, p.channels, p.height, p.width,
                         p.lshift_a, p.lshift_b, p.rshift);
    }
    std::string operator()(const ConvChainParams &p) const {
      return "chain " + (*this)(p.first) + " -> " + (*this)(p.second);
    }
    std::string operator()(const PoolParams &p) const {
      return fmt::format("pool2d {} n{} c{}x{}x{} k{}x{} s{}x{} p{},{},{},{} o{}x{}{}{} r{},{}",
                         p.kind == PoolParams::Kind::kMax ? "max" : "avg", p.batch, p.channels,
                         p.height, p.width, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w,
                         p.pad_top, p.pad_left, p.pad_bottom, p.pad_right, p.out_height,
                         p.out_width, p.input_nonnegative ? " nonneg" : "",
                         p.count_include_pad ? " incl" : "", p.scale_bits, p.rshift);
    }
  };
  return std::visit(Key{}, layer.params);
}

}  // namespace vacc::lower
