#include "vacc/lower/graph_choices.h"

#include <utility>
#include <variant>

#include "vacc/lower/host_layout.h"
#include "vacc/lower/legality.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

// A plain NCHW convolution's layers before pack_layout: as it runs (channels rounded up to the
// blocks), with the model's input channels (what the folding rules read), and folded.
struct ConvForms {
  Layer plain;
  Conv2dParams model;
  Layer folded;
};

std::optional<ConvForms> conv_forms(const graph::Node &node, const isa::HwConfig &c) {
  if (node.op != graph::OpKind::kQConv || node.inputs[0]->layout.blocked) return std::nullopt;
  if (node.attrs.get_int("group", 1) != 1) return std::nullopt;  // windows would mix groups
  std::optional<Layer> layer = layer_of(node, c, nullptr);
  if (!layer) return std::nullopt;
  Conv2dParams p = std::get<Conv2dParams>(layer->params);
  p.in_channels = node.inputs[0]->shape[1];
  return ConvForms{*layer, p, Layer{layer->name, folded_conv(c, p)}};
}

// The folding knob's domain: a window larger than 1x1, fewer folded reduction blocks than
// plain ones, and a folded form that is supported and tiles.
bool foldable(const ConvForms &f, const isa::HwConfig &c, int vthreads) {
  const Conv2dParams &plain = std::get<Conv2dParams>(f.plain.params);
  const Conv2dParams &folded = std::get<Conv2dParams>(f.folded.params);
  const int64_t window = plain.kernel_h * plain.kernel_w;
  if (window == 1 || folded.in_channels >= window * plain.in_channels) return false;
  try {
    check_supported(c, folded, f.plain.name);
    default_schedule(c, folded, vthreads, f.plain.name);
  } catch (const Error &) {
    return false;
  }
  return true;
}

// The cost model's cycles for the default schedule of a convolution's or a conv chain's layer.
std::optional<uint64_t> modelled_layer_cycles(const graph::Node &node, const isa::HwConfig &c,
                                              int vthreads) {
  const std::optional<Layer> layer = layer_of(node, c, nullptr);
  if (!layer) return std::nullopt;
  try {
    if (const auto *conv = std::get_if<Conv2dParams>(&layer->params))
      return static_cast<uint64_t>(modelled_cycles(c, *conv, vthreads, layer->name));
    // A chain whose first convolution is grouped (MobileNetV2's depthwise -> projection): the
    // model ranked such chains 0.96-0.97 of their pair where perf measured 1.05-1.48
    // (bench_conv_chain), so it gives no figure for them: they are made only where tuned.
    if (const auto *chain = std::get_if<ConvChainParams>(&layer->params))
      if (chain->first.groups == 1)
        return static_cast<uint64_t>(modelled_cycles(c, *chain, vthreads, layer->name));
  } catch (const Error &) {
  }
  return std::nullopt;
}

std::optional<uint64_t> cycles_of(const Layer &layer, const TunedLookup &tuned) {
  if (!tuned) return std::nullopt;
  const std::optional<TunedSchedule> t = tuned(layer);
  return t ? std::optional<uint64_t>(t->cycles) : std::nullopt;
}

}  // namespace

bool can_fold_windows(const graph::Node &node, const isa::HwConfig &c, int vthreads) {
  const std::optional<ConvForms> f = conv_forms(node, c);
  return f && foldable(*f, c, vthreads);
}

// should_fold's few input channels implies fewer folded blocks: the heuristic's folds are in
// the knob's domain.
bool folds_windows(const graph::Node &node, const isa::HwConfig &c, int vthreads) {
  const std::optional<ConvForms> f = conv_forms(node, c);
  return f && should_fold(c, f->model) && foldable(*f, c, vthreads);
}

graph::WindowFolding window_folding(const isa::HwConfig &config, int vthreads) {
  return
      [config, vthreads](const graph::Node &node) { return folds_windows(node, config, vthreads); };
}

std::optional<uint64_t> tuned_cycles(const graph::Node &node, const isa::HwConfig &c,
                                     const TunedLookup &tuned) {
  if (!tuned) return std::nullopt;
  const std::optional<Layer> layer = layer_of(node, c, nullptr);
  return layer ? cycles_of(*layer, tuned) : std::nullopt;
}

graph::WindowFolding window_folding(const isa::HwConfig &config, int vthreads, GraphChoice choice,
                                    TunedLookup tuned, GraphDecisions decisions) {
  switch (choice) {
    case GraphChoice::kNever:
      return nullptr;
    case GraphChoice::kAlways:
      return [config, vthreads](const graph::Node &node) {
        return can_fold_windows(node, config, vthreads);
      };
    case GraphChoice::kHeuristic:
      return window_folding(config, vthreads);
    case GraphChoice::kDecide:
      break;
  }
  return [config, vthreads, tuned = std::move(tuned), decisions](const graph::Node &node) {
    const std::optional<ConvForms> forms = conv_forms(node, config);
    if (!forms || !foldable(*forms, config, vthreads)) return false;
    const bool heuristic = should_fold(config, forms->model);
    const std::optional<uint64_t> plain = cycles_of(forms->plain, tuned),
                                  folded = cycles_of(forms->folded, tuned);
    const bool measured = plain && folded;
    const bool fold = measured ? *folded < *plain : heuristic;
    if (decisions)
      decisions->push_back({node.name, fold ? "folded" : "unfolded", measured, fold == heuristic,
                            measured ? (fold ? *folded : *plain) : 0,
                            measured ? (fold ? *plain : *folded) : 0});
    return fold;
  };
}

graph::FusionPolicy fusion_policy(const isa::HwConfig &config, int vthreads, GraphChoice choice,
                                  TunedLookup tuned, const std::string &what,
                                  GraphDecisions decisions) {
  graph::FusionPolicy policy(accel_legality(config, vthreads));
  policy.keep_apart = choice == GraphChoice::kNever;
  policy.always = choice == GraphChoice::kAlways;
  if (choice == GraphChoice::kDecide || choice == GraphChoice::kHeuristic)
    policy.modelled = [config, vthreads](const graph::Node &node) -> std::optional<uint64_t> {
      return modelled_layer_cycles(node, config, vthreads);
    };
  if (choice != GraphChoice::kDecide) return policy;
  if (tuned)
    policy.measured = [config, tuned](const graph::Node &node) {
      return tuned_cycles(node, config, tuned);
    };
  if (decisions)
    policy.decided = [what, decisions](const graph::Node &fused, bool apart, bool heuristic_apart,
                                       std::optional<uint64_t> cycles_apart,
                                       std::optional<uint64_t> cycles_fused) {
      const bool measured = cycles_apart && cycles_fused;
      decisions->push_back({fused.name, what + (apart ? " apart" : " fused"), measured,
                            apart == heuristic_apart,
                            measured ? (apart ? *cycles_apart : *cycles_fused) : 0,
                            measured ? (apart ? *cycles_fused : *cycles_apart) : 0});
    };
  return policy;
}

}  // namespace vacc::lower
