// Resource bounds on what an input file may claim. A model, package or .npy file states its
// tensors' shapes before their data; a corrupt or hostile one can claim dimensions whose
// product overflows 64 bits or exceeds any memory this machine has. Every reader checks a
// claimed shape here before allocating, so such a file is refused with a message naming the
// tensor instead of crashing or exhausting memory.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vacc {

// The largest tensor vacc allocates, in bytes: $VACC_MAX_TENSOR_BYTES when set (read once),
// else 4 GiB, far above any tensor of a model that runs on these accelerators.
uint64_t max_tensor_bytes();
// Overrides the limit for this process (tests and fuzzers use small ones).
void set_max_tensor_bytes(uint64_t bytes);

// Bytes of a tensor of `shape` with `item_bytes` per element. Throws vacc::Error "WHAT: ..."
// when a dimension is negative, the element count overflows, or the bytes exceed
// max_tensor_bytes() (for an empty tensor: those of its non-zero dimensions).
uint64_t checked_tensor_bytes(std::span<const int64_t> shape, int item_bytes,
                              const std::string &what);

}  // namespace vacc
