// A deterministic text form of the loop IR: the same IR always prints the same text, and
// variables or buffers that share a name get a numeric suffix in order of appearance
// (names are for display only; identity is the object). Pass tests compare these texts.
#pragma once

#include <string>

#include "vacc/tir/func.h"
#include "vacc/tir/node.h"

namespace vacc::tir {

std::string to_string(const Expr &e);
std::string to_string(const Stmt &s);
std::string to_string(const Func &f);

}  // namespace vacc::tir
