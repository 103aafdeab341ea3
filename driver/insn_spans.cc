#include "insn_spans.h"

#include <algorithm>

namespace vacc::driver {

std::vector<InsnSpan> spans_of(const std::vector<sim::InsnSlice> &slices) {
  std::vector<InsnSpan> spans;
  std::vector<bool> seen;
  for (const sim::InsnSlice &s : slices) {
    if (s.index >= spans.size()) {
      spans.resize(s.index + 1);
      seen.resize(s.index + 1, false);
    }
    InsnSpan &span = spans[s.index];
    span.start = seen[s.index] ? std::min(span.start, s.start) : s.start;
    span.end = std::max(span.end, s.end);
    seen[s.index] = true;
  }
  return spans;
}

}  // namespace vacc::driver
