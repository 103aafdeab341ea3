#include "vacc/runtime/session.h"


#include "vacc/driver/registers.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/program.h"
#include "vacc/support/error.h"

namespace vacc::runtime {

Session::Session(driver::Device &device, const isa::HwConfig &config, uint64_t arena_bytes,
                 uint64_t uop_pool_capacity, uint64_t max_insns)
    : device_(device),
      config_(config),
      base_(device.allocate(arena_bytes)),
      memory_(arena_bytes, isa::region_alignment(config)) {
  uop_pool_ = memory_.allocate(uop_pool_capacity * config_.uop_bytes(), "the micro-op pool");
  insns_ = memory_.allocate(max_insns * isa::kInsnBytes, "the instruction stream");
}

DeviceBuffer Session::allocate(uint64_t bytes, const std::string &what) {
  return memory_.allocate(bytes, what);
}

void Session::write(const DeviceBuffer &buffer, const void *data, uint64_t bytes,
                    uint64_t offset) {
  VACC_CHECK(offset + bytes <= buffer.bytes) << "write past the end of a device buffer";
  device_.write_memory(base_ + buffer.offset + offset, static_cast<const uint8_t *>(data),
                       bytes);
}

void Session::read(const DeviceBuffer &buffer, void *data, uint64_t bytes, uint64_t offset) const {
  VACC_CHECK(offset + bytes <= buffer.bytes) << "read past the end of a device buffer";
  device_.read_memory(base_ + buffer.offset + offset, static_cast<uint8_t *>(data), bytes);
}

uint64_t Session::element_of(const DeviceBuffer &buffer, isa::MemId mem) const {
  const uint64_t tile = config_.tile_bytes(mem);
  VACC_CHECK(buffer.offset % tile == 0) << "buffer not aligned to its elements";
  return buffer.offset / tile;
}

CommandQueue Session::queue() const {
  return CommandQueue(config_, uop_pool_.offset / config_.uop_bytes(),
                      uop_pool_.bytes / config_.uop_bytes());
}

driver::Counters Session::run(CommandQueue &queue, double timeout_seconds,
                              std::vector<size_t> *step_starts) {
  const RecordedStream stream = queue.finish();
  if (step_starts) *step_starts = stream.step_starts;  // also for naming a step in an error
  if (stream.insns.size() * isa::kInsnBytes > insns_.bytes)
    fail("the command stream holds {} instructions, more than the {} the session reserved",
         stream.insns.size(), insns_.bytes / isa::kInsnBytes);
  const int ub = config_.uop_bytes();
  std::vector<uint8_t> bytes(stream.uop_pool.size() * ub);
  for (size_t i = 0; i < stream.uop_pool.size(); ++i) {
    const uint64_t bits = isa::encode_uop(config_, stream.uop_pool[i]);
    for (int b = 0; b < ub; ++b) bytes[i * ub + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  if (!bytes.empty()) device_.write_memory(base_ + uop_pool_.offset, bytes.data(), bytes.size());
  bytes.assign(stream.insns.size() * isa::kInsnBytes, 0);
  for (size_t i = 0; i < stream.insns.size(); ++i)
    isa::store_word(isa::encode(config_, stream.insns[i]), bytes.data() + i * isa::kInsnBytes);
  if (!bytes.empty()) device_.write_memory(base_ + insns_.offset, bytes.data(), bytes.size());

  device_.write_register(driver::reg::kInsnCount, static_cast<uint32_t>(stream.insns.size()));
  device_.write_register(driver::reg::kBaseLow, static_cast<uint32_t>(base_));
  device_.write_register(driver::reg::kBaseHigh, static_cast<uint32_t>(base_ >> 32));
  device_.write_register(driver::reg::kInsnOffset, static_cast<uint32_t>(insns_.offset));
  device_.write_register(driver::reg::kControl, driver::reg::kControlStart);
  device_.wait(timeout_seconds);
  driver::Counters counters = device_.counters();
  counters["runtime_insns"] = stream.insns.size();
  counters["runtime_uop_loads"] = stream.uop_loads;
  return counters;
}

}  // namespace vacc::runtime
