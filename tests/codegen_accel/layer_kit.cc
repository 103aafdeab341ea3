#include "layer_kit.h"

#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"
#include "vacc/tir/interpreter.h"

namespace vacc::test {

std::vector<uint8_t> to_bytes(const std::vector<int64_t> &values, int bits) {
  const int nb = bits / 8;
  std::vector<uint8_t> out(values.size() * nb);
  for (size_t i = 0; i < values.size(); ++i)
    for (int b = 0; b < nb; ++b)
      out[i * nb + b] = static_cast<uint8_t>(static_cast<uint64_t>(values[i]) >> (8 * b));
  return out;
}

std::vector<int64_t> from_bytes(const std::vector<uint8_t> &bytes, int bits) {
  const int nb = bits / 8;
  std::vector<int64_t> out(bytes.size() / nb);
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t v = 0;
    for (int b = 0; b < nb; ++b) v |= uint64_t{bytes[i * nb + b]} << (8 * b);
    const int shift = 64 - bits;
    out[i] = static_cast<int64_t>(v << shift) >> shift;
  }
  return out;
}

LayerRun run_layer(const std::string &engine, const isa::HwConfig &config,
                   const lower::LoweredLayer &layer,
                   const std::vector<std::vector<int64_t>> &args) {
  const auto &list = layer.commands;
  VACC_CHECK(args.size() == list.buffers.size()) << "argument count";
  std::vector<std::vector<uint8_t>> bytes;
  for (size_t i = 0; i < args.size(); ++i)
    bytes.push_back(to_bytes(args[i], layer.op.func.params[i]->dtype.bits));
  // The output starts as args.back() (tests poison it), so an output never written is seen.
  auto device = driver::open_device(engine, config);
  runtime::ListRun run = runtime::run_command_list(*device, config, list, bytes);
  LayerRun out;
  out.out = from_bytes(run.buffers.back(), layer.op.func.params.back()->dtype.bits);
  out.counters = run.counters;
  return out;
}

std::vector<int64_t> interpret_layer(const isa::HwConfig &config,
                                     const lower::LoweredLayer &layer,
                                     std::vector<std::vector<int64_t>> args, int64_t *macs) {
  tir::InterpOptions o;
  o.config = &config;
  // The loop IR carries no tokens (lower.h: they are derived on the command list, which
  // verify_commands and the engines check).
  o.check_tokens = false;
  tir::InterpStats st = tir::interpret(layer.final_ir, args, o);
  if (macs) *macs = st.macs;
  return args.back();
}

}  // namespace vacc::test
