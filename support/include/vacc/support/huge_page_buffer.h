// A zeroed byte buffer for large data that kernels stream through on every run (a model's
// packed weights, the activation arena). From 1 MiB on it is aligned to 2 MiB and advised to
// the kernel as transparent huge pages (madvise) before it is first touched: a layer's weights
// then take one TLB entry per 2 MiB instead of one per 4 KiB page, and streaming 10 MB of them
// no longer walks the page tables every 4 KiB (ResNet-18's float layer3 and layer4
// convolutions ran 10-15 % slower on 4 KiB pages). Where the system has transparent huge pages
// off, the advice is ignored and the buffer is an ordinary one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace vacc {

// The bytes from a 2 MiB-aligned start of a buffer of `bytes` advised as huge pages: none
// under 1 MiB; the buffer rounded up to whole huge pages where that adds at most a quarter of
// it (the last huge page is memory used whole), else its whole huge pages only (the rest stays
// in 4 KiB pages).
size_t huge_page_advice_bytes(size_t bytes);

class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  explicit HugePageBuffer(size_t bytes);
  uint8_t *data() { return p_.get(); }
  const uint8_t *data() const { return p_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t *p) const;
  };
  std::unique_ptr<uint8_t, Free> p_;
  size_t size_ = 0;
};

}  // namespace vacc
