// Learned weight rounding (`--rounding learned`), as AdaRound (Nagel et al. 2020) learns it: each
// int8 weight of a convolution or dense layer goes to the level below or above its float value,
// and which one is chosen by gradient descent on the layer's own output error over the
// calibration data rather than by nearness. Per weight a continuous v gives a soft choice
// h(v) = clip(sigmoid(v) * 1.2 - 0.1, 0, 1), the weight is (floor(w / s) + h(v)) * s, and Adam
// minimizes, per output channel r in units of its grid's step,
//     e_r (H / mean(diag H) + 0.01 I) e_r^T  +  lambda * sum_i (1 - |2 h_i - 1|^beta)
// where e_r is the channel's rounding error and H the layer's input Hessian (round_weights.h):
// e H e^T is the squared output error summed over the calibration data, so no data pass is
// needed per step, and the damping (GPTQ's 1 %) keeps directions that the few calibration
// inputs never took from being free. The second term pulls every h to 0 or 1 as beta falls from 20
// to 2 (after a warm-up without it); the channel then takes h >= 0.5, and single choices are
// flipped while one lowers e H e^T (a few sweeps, about one step's work). A channel keeps nearest
// rounding where that leaves a smaller e H e^T, so the result is never worse than nearest on the
// calibration data. The grid (each channel's fraction bits) is nearest rounding's: only the
// levels change.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/round_weights.h"

namespace vacc::graph {

// What learned rounding did to one layer.
struct LearnedRounding {
  Tensor levels;             // int8, shaped as the float weights
  int64_t channels = 0;      // output channels
  int64_t learned = 0;       // of which took the learned levels (the rest: nearest's)
  double nearest_error = 0;  // sum over channels of the damped e H e^T above, nearest rounding
  double error = 0;          // the same for the levels returned
};

// Rounds w ([O, ...]: output channel first, the layer's inputs in the order of the Hessian's
// rows) onto the grids 2^-frac_bits[o] with `steps` Adam steps per channel block.
LearnedRounding learn_rounding(const Tensor &w, const std::vector<int> &frac_bits,
                               const InputHessian &h, int steps);

// The compile-time bound: the steps each layer of `hessians` takes (by node name) so that the
// whole model's products with H (O * k^2 multiply-adds per step for a layer of O channels and
// k inputs, O * k * 2n where its n inputs were kept) stay within `seconds` at a nominal rate of
// kLearnedRoundingMacsPerSecond. The rate is fixed rather than measured so that one command
// gives the same package on every machine; the element-wise work per weight is not counted
// (docs/quantization.md has the rates measured). The budget is shared cheapest layer first,
// each taking at most kLearnedRoundingMaxSteps; a layer whose share comes to fewer than
// kLearnedRoundingMinSteps is left out (0 steps: it keeps Hessian rounding).
constexpr float kLearnedRoundingDamping = 0.01f;
constexpr int kLearnedRoundingMaxSteps = 1000;
constexpr int kLearnedRoundingMinSteps = 100;
constexpr double kLearnedRoundingMacsPerSecond = 4e9;
std::unordered_map<std::string, int> learned_rounding_steps(const Graph &graph,
                                                            const InputHessians &hessians,
                                                            double seconds);

// What quantize needs to round weights other than to the nearest level, and what learned
// rounding did (quantize adds to the counts).
struct WeightRounding {
  InputHessians hessians;
  // --rounding learned: Adam steps per layer (learned_rounding_steps); a layer with a Hessian
  // and no steps here is rounded with the Hessian (round_weights).
  std::unordered_map<std::string, int> learn_steps;
  int layers_learned = 0;
  int64_t channels = 0, channels_learned = 0;
  double nearest_error = 0, error = 0;  // summed LearnedRounding errors of those layers
};

}  // namespace vacc::graph
