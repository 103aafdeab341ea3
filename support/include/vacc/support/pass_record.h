// One pass (or compile stage) as it ran: its name, its wall time and what it did. The graph
// pipeline, the accelerator lowering and the compile driver all report their passes as these.
#pragma once

#include <string>

namespace vacc {

struct PassRecord {
  std::string name;
  double milliseconds = 0;
  std::string summary;  // e.g. "12 nodes folded"; "" when the pass says nothing
};

}  // namespace vacc
