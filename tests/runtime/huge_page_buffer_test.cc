// support/huge_page_buffer.h: where the advice for transparent huge pages starts and ends, and
// the buffer's size, alignment and zeroed contents (whether the system then backs it with huge
// pages depends on its settings and free memory, so that is not asserted).
#include "vacc/support/huge_page_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(HugePageBuffer, AdviceCoversWholeHugePagesWhereTheRoundingIsSmall) {
  EXPECT_EQ(vacc::huge_page_advice_bytes(0), 0u);
  EXPECT_EQ(vacc::huge_page_advice_bytes(kMiB - 1), 0u);
  // 1.75 MiB rounds up to one 2 MiB page (a seventh more); 1.5 MiB would add a third: none.
  EXPECT_EQ(vacc::huge_page_advice_bytes(7 * kMiB / 4), 2 * kMiB);
  EXPECT_EQ(vacc::huge_page_advice_bytes(3 * kMiB / 2), 0u);
  EXPECT_EQ(vacc::huge_page_advice_bytes(4 * kMiB), 4 * kMiB);
  // ResNet-18's layer3 weight panels, 2.25 MiB: rounding would add 1.75, so its one whole
  // page only; layer4's, 9 MiB: rounded up to 10.
  EXPECT_EQ(vacc::huge_page_advice_bytes(2359296), 2 * kMiB);
  EXPECT_EQ(vacc::huge_page_advice_bytes(9437184), 10 * kMiB);
  // 7.5 MiB rounds up to 8 (a fifteenth more).
  EXPECT_EQ(vacc::huge_page_advice_bytes(15 * kMiB / 2), 8 * kMiB);
}

TEST(HugePageBuffer, IsZeroedAlignedAndWritable) {
  for (size_t bytes : {size_t{1}, size_t{4096}, kMiB, 9437184 + size_t{3}}) {
    vacc::HugePageBuffer b(bytes);
    ASSERT_EQ(b.size(), bytes);
    ASSERT_NE(b.data(), nullptr);
    const auto at = reinterpret_cast<uintptr_t>(b.data());
    EXPECT_EQ(at % (bytes >= kMiB ? 2 * kMiB : 64), 0u) << bytes;
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; ++i) nonzero += b.data()[i] != 0;
    EXPECT_EQ(nonzero, 0u) << bytes;
    b.data()[bytes - 1] = 7;
    EXPECT_EQ(b.data()[bytes - 1], 7);
  }
  vacc::HugePageBuffer empty(0);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
}

}  // namespace
