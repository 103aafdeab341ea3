// A lowered operator: its DRAM buffers (inputs first, outputs last) and its loop nest. This
// is the unit every pass transforms and the pipeline dumps.
#pragma once

#include <string>
#include <vector>

#include "vacc/tir/node.h"

namespace vacc::tir {

struct Func {
  std::string name;
  std::vector<Buffer> params;  // global-scope buffers the caller provides
  Stmt body;
};

}  // namespace vacc::tir
