#include "vacc/graph/macs.h"

#include "vacc/graph/op_registry.h"

namespace vacc::graph {

int64_t count_macs(const Node &node) {
  const Value *out = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!out) return 0;
  const OpDef &def = op_def(node.op);
  return def.macs ? def.macs(node) : 0;
}

}  // namespace vacc::graph
