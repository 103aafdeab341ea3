// The math family's operators: one X(Name) each, an OpKind (kName) of the graph IR
// (vacc/graph/op_kind.h gathers the families). An operator added here needs its OpDef in this
// folder's def*.cc and, where a backend runs it, its parts beside it.
#pragma once

#define VACC_OPS_MATH(X) \
  X(Tanh)                \
  X(Exp)                 \
  X(Log)                 \
  X(Sqrt)                \
  X(Erf)                 \
  X(Reciprocal)          \
  X(Floor)               \
  X(Ceil)                \
  X(Abs)                 \
  X(Neg)                 \
  X(HardSigmoid)         \
  X(HardSwish)           \
  X(Pow)                 \
  X(Sum)                 \
  X(Mean)                \
  X(Max)                 \
  X(Min)                 \
  X(Gelu)                \
  X(Mod)
