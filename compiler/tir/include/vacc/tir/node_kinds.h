// The one list of loop-IR node kinds. Every enum, visitor, mutator, printer and equality
// check is generated from these lists, so adding a node is one line here plus its struct.
#pragma once

// Expressions whose struct is BinaryNode<kind> (two operands of the same type).
// X(Name, printed operator)
#define VACC_TIR_ARITH_NODES(X) \
  X(Add, "+")                   \
  X(Sub, "-")                   \
  X(Mul, "*")                   \
  X(Div, "/")                   \
  X(Mod, "%")                   \
  X(Min, "min")                 \
  X(Max, "max")                 \
  X(Shr, ">>")

// Comparisons (int operands, bool result) and logic (bool operands).
#define VACC_TIR_CMP_NODES(X) \
  X(EQ, "==")                 \
  X(NE, "!=")                 \
  X(LT, "<")                  \
  X(LE, "<=")                 \
  X(GT, ">")                  \
  X(GE, ">=")                 \
  X(And, "&&")                \
  X(Or, "||")

#define VACC_TIR_BINARY_NODES(X) VACC_TIR_ARITH_NODES(X) VACC_TIR_CMP_NODES(X)

#define VACC_TIR_OTHER_EXPR_NODES(X) \
  X(IntImm)                          \
  X(FloatImm)                        \
  X(Call)                            \
  X(Var)                             \
  X(Cast)                            \
  X(Not)                             \
  X(Select)                          \
  X(Load)

#define VACC_TIR_STMT_NODES(X) \
  X(Store)                     \
  X(Prefetch)                  \
  X(For)                       \
  X(IfThenElse)                \
  X(Seq)                       \
  X(Allocate)                  \
  X(Attr)                      \
  X(Dma)                       \
  X(Gemm)                      \
  X(Alu)                       \
  X(DepPush)                   \
  X(DepPop)
