// Gate-level simulation of the small config: Yosys synthesizes vacc_top to generic gates
// (memories kept as arrays), Verilator simulates that netlist, and random progen programs must
// leave device memory identical to fsim's and finish in exactly as many cycles (counter 0x28)
// as the RTL itself. "Synthesis finished" proves nothing when Yosys can drop logic silently;
// this proves the netlist still computes what the RTL computes. Opt-in (minutes to build):
// configure with -DVACC_HW_NETLIST_TEST=ON.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "Vvacc_top_netlist.h"
#include "Vvacc_top_small.h"
#include "top_harness.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/fsim.h"

namespace vacc::test {
namespace {

constexpr uint64_t kBase = 0x10000;

template <typename Top>
std::pair<HarnessResult, std::vector<uint8_t>> run(const isa::Program &p) {
  TopHarness<Top> h(kBase + p.dram.size() + 4096, 32);
  std::copy(p.dram.begin(), p.dram.end(), h.mem.begin() + kBase);
  const HarnessResult r = h.run(kBase, p.insn_offset, p.insn_count, 2000000, 4000000);
  return {r, std::vector<uint8_t>(h.mem.begin() + kBase, h.mem.begin() + kBase + p.dram.size())};
}

TEST(Netlist, SmallConfigNetlistMatchesRtlAndFsim) {
  const isa::HwConfig config = isa::load_config(VACC_TEST_CONFIG_DIR "/small.yaml");
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SCOPED_TRACE(progen::describe_program(config, seed));
    const isa::Program p = progen::generate_program(config, seed);
    std::vector<uint8_t> expected = p.dram;
    sim::Fsim fsim(config);
    fsim.run(expected, p.insn_offset, p.insn_count);
    const auto [rtl, rtl_dram] = run<Vvacc_top_small>(p);
    const auto [net, net_dram] = run<Vvacc_top_netlist>(p);
    ASSERT_EQ(net.error_status, 0u);
    ASSERT_EQ(rtl.error_status, 0u);
    EXPECT_EQ(net.cycles, rtl.cycles) << "the netlist takes a different number of cycles";
    for (int i = 0; i < 7; ++i) EXPECT_EQ(net.counters[i], rtl.counters[i]) << "counter " << i;
    ASSERT_EQ(rtl_dram, expected) << "the RTL differs from fsim";
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_EQ(int{net_dram[i]}, int{expected[i]}) << "first difference at byte " << i;
  }
}

}  // namespace
}  // namespace vacc::test
