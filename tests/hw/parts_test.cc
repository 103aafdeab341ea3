// FPGA part capacities and the fit check (no synthesis: a hand-made report).
#include <gtest/gtest.h>

#include "vacc/hw/lint.h"
#include "vacc/hw/parts.h"
#include "vacc/hw/synth.h"
#include "vacc/support/error.h"

namespace vacc::hw {
namespace {

TEST(Parts, FindsByPrefixOfAPartNumber) {
  ASSERT_TRUE(find_part("xc7z020clg400-1"));
  EXPECT_EQ(find_part("xc7z020clg400-1")->dsps, 220);
  ASSERT_TRUE(find_part("XCU250-FIGD2104-2L-E"));
  EXPECT_EQ(find_part("xcu250")->bram36, 2688);
  EXPECT_FALSE(find_part("ep4ce22"));
}

TEST(Parts, FitComparesEveryResource) {
  SynthReport r;
  r.luts = 40000;
  r.ffs = 50000;
  r.dsps = 100;
  r.ramb36 = 100;
  r.ramb18 = 20;  // 110 RAMB36 equivalents
  const PartFit ok = check_fit(r, *find_part("xc7z020"));
  EXPECT_TRUE(ok.fits);
  EXPECT_NEAR(ok.bram_pct, 100.0 * 110 / 140, 1e-9);
  r.dsps = 221;  // one more than a Zynq-7020 has
  EXPECT_FALSE(check_fit(r, *find_part("xc7z020")).fits);
  EXPECT_TRUE(check_fit(r, *find_part("xcu250")).fits);
}

// tests/error-style: the message names the option and lists what is accepted.
TEST(Parts, UnknownPartIsAnErrorListingKnownParts) {
  try {
    require_part("ep4ce22");
    FAIL() << "expected vacc::Error";
  } catch (const vacc::Error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown FPGA part 'ep4ce22' for --part"), std::string::npos) << m;
    EXPECT_NE(m.find("xc7z020"), std::string::npos) << m;
    EXPECT_NE(m.find("xcu250"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace vacc::hw
