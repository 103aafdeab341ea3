#include "vacc/support/huge_page_buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace vacc {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{1} << 20;
}  // namespace

size_t huge_page_advice_bytes(size_t bytes) {
  if (bytes < kHugeFrom) return 0;
  const size_t up = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  return up - bytes <= bytes / 4 ? up : bytes / kHugePage * kHugePage;
}

void HugePageBuffer::Free::operator()(uint8_t *p) const {
  std::free(p);
}

HugePageBuffer::HugePageBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  const size_t advised = huge_page_advice_bytes(bytes);
  const size_t align = bytes >= kHugeFrom ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  p_.reset(static_cast<uint8_t *>(std::aligned_alloc(align, rounded)));
  if (!p_) throw std::bad_alloc();
  // Advice only: a kernel without transparent huge pages answers EINVAL, and nothing changes.
  if (advised > 0) madvise(p_.get(), advised, MADV_HUGEPAGE);
  std::memset(p_.get(), 0, bytes);
}

}  // namespace vacc
