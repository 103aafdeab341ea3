// Window folding (im2col into the reduction): an accelerator convolution with few input
// channels wastes most of each GEMM's reduction on zero-padded channels (a 3-channel stem
// fills 3 of 16 lanes). Folded, its input is packed by a windowed vacc.PackNCHWnc that unfolds
// every kh x kw window into channels ([N, C, H, W] -> [N, C*kh*kw, OH, OW], blocked), and the
// convolution becomes 1x1 with stride 1 over those C*kh*kw channels: the same integer sums,
// far fewer GEMMs. Which convolutions fold is the backend's decision (lower::window_folding),
// passed in as a callback since graph/ does not link the backend.
#pragma once

#include <functional>

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"

namespace vacc::graph {

// True for an accelerator QConv the backend runs faster folded (and runs folded at all).
using WindowFolding = std::function<bool(const Node &)>;

// Requires partition() to have run and pack_layout() not yet. Returns the number of
// convolutions folded.
int fold_windows(Graph &graph, const isa::HwConfig &config, const WindowFolding &folds);

}  // namespace vacc::graph
