#include "vacc/lower/graph_choices.h"

#include <utility>
#include <variant>

#include "vacc/lower/host_layout.h"
#include "vacc/lower/legality.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

// The plain layer of a convolution before pack_layout, with its model's input channels (before
// the block padding), and the layer it becomes folded.
std::optional<std::pair<Layer, Layer>> plain_and_folded(const graph::Node &node,
                                                        const isa::HwConfig &c) {
  if (node.op != graph::OpKind::kQConv || node.inputs[0]->layout.blocked) return std::nullopt;
  std::optional<Layer> layer = layer_of(node, c, nullptr);
  if (!layer) return std::nullopt;
  Conv2dParams p = std::get<Conv2dParams>(layer->params);
  p.in_channels = node.inputs[0]->shape[1];
  return std::make_pair(*layer, Layer{layer->name, folded_conv(c, p)});
}

std::optional<uint64_t> cycles_of(const Layer &layer, const TunedLookup &tuned) {
  if (!tuned) return std::nullopt;
  const std::optional<TunedSchedule> t = tuned(layer);
  return t ? std::optional<uint64_t>(t->cycles) : std::nullopt;
}

}  // namespace

bool can_fold_windows(const graph::Node &node, const isa::HwConfig &c, int vthreads) {
  if (node.attrs.get_int("group", 1) != 1) return false;  // its windows would mix the groups
  const auto forms = plain_and_folded(node, c);
  if (!forms) return false;
  const Conv2dParams &plain = std::get<Conv2dParams>(forms->first.params);
  const Conv2dParams &folded = std::get<Conv2dParams>(forms->second.params);
  const int64_t window = plain.kernel_h * plain.kernel_w;
  if (window == 1 || folded.in_channels >= window * plain.in_channels) return false;
  try {
    check_supported(c, folded, node.name);
    default_schedule(c, folded, vthreads, node.name);
  } catch (const Error &) {
    return false;
  }
  return true;
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
      return lower::window_folding(config, vthreads);
    case GraphChoice::kDecide:
      break;
  }
  return [config, vthreads, tuned = std::move(tuned), decisions](const graph::Node &node) {
    const bool heuristic = folds_windows(node, config, vthreads);
    if (!can_fold_windows(node, config, vthreads)) return heuristic;
    const auto forms = plain_and_folded(node, config);
    const std::optional<uint64_t> plain = cycles_of(forms->first, tuned),
                                  folded = cycles_of(forms->second, tuned);
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
  if (choice != GraphChoice::kDecide) return policy;
  if (tuned)
    policy.measured = [config, tuned](const graph::Node &node) {
      return tuned_cycles(node, config, tuned);
    };
  if (decisions)
    policy.decided = [what, decisions](const graph::Node &fused, bool apart,
                                       std::optional<uint64_t> cycles_apart,
                                       std::optional<uint64_t> cycles_fused) {
      const bool measured = cycles_apart && cycles_fused;
      decisions->push_back({fused.name, what + (apart ? " apart" : " fused"), measured, !apart,
                            measured ? (apart ? *cycles_apart : *cycles_fused) : 0,
                            measured ? (apart ? *cycles_fused : *cycles_apart) : 0});
    };
  return policy;
}

}  // namespace vacc::lower
