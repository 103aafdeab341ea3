// The conv family's operators: one X(Name) each, an OpKind (kName) of the graph IR
// (vacc/graph/op_kind.h gathers the families). An operator added here needs its OpDef in this
// folder's def*.cc and, where a backend runs it, its parts beside it.
#pragma once

#define VACC_OPS_CONV(X) \
  X(Conv)                \
  X(ConvTranspose)       \
  X(QLinearConv)         \
  X(ConvInteger)         \
  X(QConv)               \
  X(QConvChain)          \
  X(ConvNCHWc)
