// The reduce family's operators: one X(Name) each, an OpKind (kName) of the graph IR
// (vacc/graph/op_kind.h gathers the families). An operator added here needs its OpDef in this
// folder's def*.cc and, where a backend runs it, its parts beside it.
#pragma once

#define VACC_OPS_REDUCE(X) \
  X(ReduceSum)             \
  X(ReduceMean)            \
  X(ReduceMax)             \
  X(ReduceMin)             \
  X(ReduceProd)            \
  X(ReduceL1)              \
  X(ReduceL2)              \
  X(ReduceLogSum)          \
  X(ReduceLogSumExp)       \
  X(ReduceSumSquare)       \
  X(ArgMax)                \
  X(ArgMin)                \
  X(CumSum)                \
  X(GlobalMaxPool)
