#include "vacc/lower/join_programs.h"

namespace vacc::lower {

int join_programs(isa::Package &package) {
  int programs = 0;
  for (size_t i = 0; i < package.steps.size(); ++i) {
    isa::PackageStep &step = package.steps[i];
    step.joins_previous = step.commands && i > 0 && package.steps[i - 1].commands;
    programs += step.commands && !step.joins_previous;
  }
  return programs;
}

}  // namespace vacc::lower
