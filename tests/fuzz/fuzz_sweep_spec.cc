// The sweep spec reader (`vacc sweep SPEC`): parse and validate, then expand the points of a
// spec whose base is inline or a bundled config, each point's config validated as a worker
// would. A base naming a file is not opened: the fuzzer must not read the machine's files.
#include "fuzz_targets.h"
#include "vacc/sweep/points.h"
#include "vacc/sweep/spec.h"

namespace vacc::fuzz {

void fuzz_sweep_spec(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  const sweep::SweepSpec spec = sweep::parse_spec(text, "fuzz-sweep.yaml");
  // Few enough points that each input stays well under the fuzzers' one-second hang limit
  // on a loaded machine: a point's config (validated, its hardware package generated) costs
  // about 3 ms under ASan, so 16 (64 points, 0.19 s alone, passed 1 s at load 7).
  if (spec.num_points() > 16) return;
  std::string base;
  if (!spec.base_yaml.empty())
    base = spec.base_yaml;
  else if (spec.base.find('/') == std::string::npos && spec.base.find('.') == std::string::npos)
    base = sweep::base_config_text(spec, ".");
  else
    return;
  for (const sweep::Point &p : sweep::expand_points(spec, base)) {
    p.label();
    if (p.config) sweep::point_config(p.config_yaml, p.config->name);
  }
}

}  // namespace vacc::fuzz
