// The elementwise family's operators: one X(Name) each, an OpKind (kName) of the graph IR
// (vacc/graph/op_kind.h gathers the families). An operator added here needs its OpDef in this
// folder's def*.cc and, where a backend runs it, its parts beside it.
#pragma once

#define VACC_OPS_ELEMENTWISE(X) \
  X(Relu)                       \
  X(Clip)                       \
  X(LeakyRelu)                  \
  X(Sigmoid)                    \
  X(Add)                        \
  X(Sub)                        \
  X(Mul)                        \
  X(Div)                        \
  X(Identity)                   \
  X(Dropout)                    \
  X(Equal)                      \
  X(Where)                      \
  X(Expand)                     \
  X(Cast)                       \
  X(CastLike)
