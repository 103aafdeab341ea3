// The "xrt" device (see xrt_device.h). Register writes of the host protocol become kernel
// arguments: XRT owns the control register and the interrupt registers of an ap_ctrl_hs
// kernel, so the start bit becomes xrt::run::start() and done becomes xrt::run::wait().
#include "vacc/driver/xrt_device.h"

#include <experimental/xrt_xclbin.h>
#include <fmt/format.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>

#include "vacc/driver/registers.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/isa/error_status.h"
#include "vacc/support/error.h"
#include "xrt_environment.h"

namespace vacc::driver {
namespace {

// Buffer objects are allocated in whole pages.
constexpr uint64_t kArenaAlignment = 4096;

const char *state_name(ert_cmd_state state) {
  switch (state) {
    case ERT_CMD_STATE_COMPLETED:
      return "completed";
    case ERT_CMD_STATE_ERROR:
      return "error";
    case ERT_CMD_STATE_ABORT:
      return "aborted";
    case ERT_CMD_STATE_TIMEOUT:
      return "timed out";
    case ERT_CMD_STATE_NORESPONSE:
      return "no response";
    default:
      return "unfinished";
  }
}

// Parses "--device": a decimal index, or a PCIe BDF ("0000:65:00.1" or "65:00.1").
bool is_index(const std::string &s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Runs an XRT call; XRT reports failures as std::exception, which become vacc::Error naming
// what was being done (a vacc::Error passes through unchanged).
template <typename F>
auto xrt_call(const std::string &what, F &&call) -> decltype(call()) {
  try {
    return call();
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    fail("XRT failed to {}: {}", what, e.what());
  }
}

class XrtDevice : public Device {
 public:
  XrtDevice(const XrtOptions &options, const isa::HwConfig &config)
      : options_(options), config_(config) {
    XclbinInfo info = check_xclbin(options.xclbin);
    unsigned count = xrt_device_count();
    if (count == 0) fail("{}", xrt_no_device_message());
    try {
      if (is_index(options.device)) {
        unsigned index = static_cast<unsigned>(std::stoul(options.device));
        if (index >= count)
          fail(
              "no FPGA device {}: XRT sees {} device(s), numbered 0 to {}; `vacc devices` "
              "lists them",
              index, count, count - 1);
        device_ = xrt::device(index);
      } else {
        device_ = xrt::device(options.device);
      }
    } catch (const Error &) {
      throw;
    } catch (const std::exception &e) {
      fail("cannot open FPGA device '{}': {}", options.device, e.what());
    }
    try {
      uuid_ = device_.load_xclbin(options.xclbin);
    } catch (const std::exception &e) {
      fail(
          "cannot load xclbin '{}' (built for platform '{}') onto device '{}': {}; the card's "
          "shell must match the platform the xclbin was linked for",
          options.xclbin, info.platform, options.device, e.what());
    }
    try {
      // Exclusive access: the counters are read through the compute unit's registers.
      kernel_ = xrt::kernel(device_, uuid_, xrt_kernel::kKernelName,
                            xrt::kernel::cu_access_mode::exclusive);
    } catch (const std::exception &e) {
      fail("cannot open kernel '{}' of xclbin '{}' for exclusive access: {}",
           xrt_kernel::kKernelName, options.xclbin, e.what());
    }
  }

  std::string name() const override { return "xrt"; }

  // The arena: one buffer object in the bank of the memory argument. Allocating again reuses
  // it when it is large enough and replaces it otherwise (device.h: one arena at a time).
  uint64_t allocate(uint64_t bytes) override {
    uint64_t want = std::max(bytes, options_.min_arena_bytes);
    want = (want + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (want == 0) want = kArenaAlignment;
    if (!arena_ || arena_.size() < want) {
      try {
        arena_ = xrt::bo(device_, want, kernel_.group_id(dram_arg_index()));
      } catch (const std::exception &e) {
        fail("cannot allocate {} bytes of FPGA device memory: {}", want, e.what());
      }
    }
    arena_base_ =
        xrt_call("query the device address of the arena", [&] { return arena_.address(); });
    return arena_base_;
  }

  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) override {
    uint64_t offset = arena_offset(address, bytes, "write");
    xrt_call("copy data to device memory", [&] {
      arena_.write(data, bytes, offset);
      arena_.sync(XCL_BO_SYNC_BO_TO_DEVICE, bytes, offset);
    });
  }

  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) override {
    uint64_t offset = arena_offset(address, bytes, "read");
    xrt_call("copy data from device memory", [&] {
      arena_.sync(XCL_BO_SYNC_BO_FROM_DEVICE, bytes, offset);
      arena_.read(data, bytes, offset);
    });
  }

  void write_register(uint32_t offset, uint32_t value) override {
    switch (offset) {
      case reg::kControl:
        if (value & reg::kControlStart) start();
        return;
      case reg::kGlobalInterruptEnable:
      case reg::kInterruptEnable:
      case reg::kInterruptStatus:
        return;  // XRT drives the interrupt registers of an ap_ctrl_hs kernel itself.
      case reg::kInsnCount:
      case reg::kBaseLow:
      case reg::kBaseHigh:
      case reg::kInsnOffset:
        args_[offset] = value;  // passed as kernel arguments at start
        return;
      case reg::kCycleLimit:
        xrt_call("write the cycle-limit register", [&] { kernel_.write_register(offset, value); });
        return;
      default:
        fail("register 0x{:02X} of the accelerator is not writable", offset);
    }
  }

  uint32_t read_register(uint32_t offset) override {
    return xrt_call(
        fmt::format("read register 0x{:02X} of kernel '{}'", offset, xrt_kernel::kKernelName),
        [&] { return kernel_.read_register(offset); });
  }

  void wait(double timeout_seconds) override {
    if (!run_) fail("xrt: wait() without a started run");
    auto ms = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
    ert_cmd_state state;
    try {
      state = run_.wait(ms);
    } catch (const std::exception &e) {
      fail("waiting for kernel '{}' failed: {}", xrt_kernel::kKernelName, e.what());
    }
    if (state == ERT_CMD_STATE_TIMEOUT) {
      try {
        run_.abort();  // best effort: an ap_ctrl_hs kernel cannot always be aborted
      } catch (const std::exception &) {
      }
      fail(
          "the accelerator did not finish within {} s (XRT run time-out); the program may "
          "deadlock: run it with `vacc sim` to see where",
          timeout_seconds);
    }
    if (state != ERT_CMD_STATE_COMPLETED)
      fail("the accelerator's run ended in state '{}' ({})", state_name(state),
           static_cast<int>(state));
    if (uint32_t error = read_register(reg::kErrorStatus))
      fail("{}", isa::error_status_message(error, read_register(reg::kErrorInsn)));
  }

  Counters counters() override {
    Counters c;
    c["cycles"] = uint64_t{read_register(reg::kCyclesHigh)} << 32 | read_register(reg::kCyclesLow);
    c["load_busy"] = read_register(reg::kLoadBusy);
    c["load_stall"] = read_register(reg::kLoadStall);
    c["compute_busy"] = read_register(reg::kComputeBusy);
    c["compute_stall"] = read_register(reg::kComputeStall);
    c["store_busy"] = read_register(reg::kStoreBusy);
    c["store_stall"] = read_register(reg::kStoreStall);
    c["gemm_busy"] = read_register(reg::kGemmBusy);
    return c;
  }

 private:
  static int dram_arg_index() {
    const auto &args = xrt_kernel::kernel_args();
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].kind == xrt_kernel::ArgKind::kGlobal) return static_cast<int>(i);
    VACC_CHECK(false) << "the kernel has no device-memory argument";
    return -1;
  }

  uint64_t arena_offset(uint64_t address, uint64_t bytes, const char *what) {
    if (!arena_) fail("xrt: {} of device memory before allocate()", what);
    if (address < arena_base_ || address - arena_base_ + bytes > arena_.size())
      fail("xrt: {} of {} bytes at device address 0x{:X} is outside the arena [0x{:X}, 0x{:X})",
           what, bytes, address, arena_base_, arena_base_ + arena_.size());
    return address - arena_base_;
  }

  void start() {
    uint64_t base = uint64_t{args_[reg::kBaseHigh]} << 32 | args_[reg::kBaseLow];
    try {
      run_ = xrt::run(kernel_);
      const auto &args = xrt_kernel::kernel_args();
      for (size_t i = 0; i < args.size(); ++i) {
        int index = static_cast<int>(i);
        if (args[i].kind == xrt_kernel::ArgKind::kGlobal) {
          // The arena itself when the program starts at its base (XRT then also checks the
          // memory bank); otherwise the raw device address.
          if (arena_ && base == arena_base_)
            run_.set_arg(index, arena_);
          else
            run_.set_arg(index, base);
        } else {
          run_.set_arg(index, args_[args[i].offset]);
        }
      }
      run_.start();
    } catch (const std::exception &e) {
      fail("cannot start kernel '{}': {}", xrt_kernel::kKernelName, e.what());
    }
  }

  XrtOptions options_;
  isa::HwConfig config_;
  xrt::device device_;
  xrt::uuid uuid_;
  xrt::kernel kernel_;
  xrt::bo arena_;
  uint64_t arena_base_ = 0;
  xrt::run run_;
  std::map<uint32_t, uint32_t> args_;  // argument registers written since the last start
};

}  // namespace

XrtOptions xrt_options(const std::string &xclbin, const std::string &device) {
  XrtOptions options;
  options.xclbin = xclbin;
  if (!device.empty()) options.device = device;
  if (const char *env = std::getenv("VACC_XCLBIN"); env && xclbin.empty()) options.xclbin = env;
  if (const char *env = std::getenv("VACC_XRT_DEVICE"); env && device.empty()) options.device = env;
  if (options.xclbin.empty())
    fail(
        "the xrt engine needs an xclbin: set VACC_XCLBIN=FILE or give --xclbin FILE");
  return options;
}

std::unique_ptr<Device> open_xrt_device(const XrtOptions &options, const isa::HwConfig &config) {
  return std::make_unique<XrtDevice>(options, config);
}

}  // namespace vacc::driver
