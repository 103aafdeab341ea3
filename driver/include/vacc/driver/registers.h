// The register map as the drivers name it: the contract itself lives in isa/registers.h.
#pragma once

#include "vacc/isa/registers.h"

namespace vacc::driver {
namespace reg = isa::reg;
}  // namespace vacc::driver
