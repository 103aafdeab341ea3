#include "emit_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"
#include "vacc/tir/loop_walker.h"
#include "vacc/tir/node.h"

namespace vacc::lower {
namespace {

using namespace vacc::tir;  // NOLINT: the emitter reads every node kind

int field_width(const isa::HwConfig &c, isa::Opcode op, const std::string &name) {
  for (const isa::Field &f : isa::insn_fields(c, op))
    if (f.name == name) return f.width;
  VACC_CHECK(false) << "no field " << name;
  return 0;
}

class CommandEmitter : private LoopWalker {
 public:
  CommandEmitter(const Func &f, const isa::HwConfig &c, std::vector<isa::CommandBuffer> *buffers)
      : func_(f), config_(c), buffers_(buffers) {
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Buffer &b = f.params[i];
      param_index_[b.get()] = static_cast<uint32_t>(i);
      buffers_->push_back({b->name, isa::MemId::kInp, static_cast<uint64_t>(b->tiles())});
    }
    mem_bits_ = field_width(c, isa::Opcode::kLoad, "sram_base");
  }

  CodegenCommands ops;

  using LoopWalker::exec;

 private:
  void enter_loop(const For *op) override {
    if (op->for_kind == ForKind::kVThread)
      fail("{}: virtual-thread loop '{}' reached code generation unexpanded", func_.name,
           op->var->name);
  }

  void exec_allocate(const Allocate *op) override {
    const Buffer &b = op->buffer;
    if (!is_scratchpad(b->scope) || b->scope == Scope::kUop)
      fail("{}: buffer '{}' in scope {} is host memory, which accelerator code cannot use",
           func_.name, b->name, scope_name(b->scope));
    if (op->base < 0)
      fail("{}: scratchpad buffer '{}' has no planned position (run plan_scratchpads)", func_.name,
           b->name);
    base_[b.get()] = op->base;
    exec(op->body);
    base_.erase(b.get());
  }

  void exec_store(const Store *op) override {
    fail(
        "{}: a scalar store to '{}' reached code generation; the accelerator runs only DMA, "
        "GEMM and ALU statements",
        func_.name, op->buffer->name);
  }

  void exec_dep_push(const DepPush *op) override {
    ops.push_back({isa::DepCommand{true, op->from, op->to}, {}});
  }
  void exec_dep_pop(const DepPop *op) override {
    ops.push_back({isa::DepCommand{false, op->from, op->to}, {}});
  }

  // "(oc.o=1, oh.o=3)": the iteration a diagnostic is about.
  std::string where() const {
    std::string s;
    for (const auto &[v, i] : loops())
      s += fmt::format("{}{}={}", s.empty() ? "" : ", ", v->name, i);
    return s.empty() ? "" : " at (" + s + ")";
  }

  [[noreturn]] void field_error(const std::string &what, const std::string &field, int64_t value,
                                const std::string &rule) const {
    fail("{}: {}{}: field {} = {} {}", func_.name, what, where(), field, value, rule);
  }

  void check_bits(const std::string &what, const std::string &field, int64_t v, int bits) const {
    if (v < 0) field_error(what, field, v, "is negative");
    if (v >= (int64_t{1} << bits))
      field_error(
          what, field, v,
          fmt::format("does not fit its {} bits (at most {})", bits, (int64_t{1} << bits) - 1));
  }

  int64_t base_of(const Buffer &b) const {
    auto it = base_.find(b.get());
    if (it == base_.end())
      fail("{}: scratchpad buffer '{}' is used outside its allocation", func_.name, b->name);
    return it->second;
  }

  void exec_dma(const Dma *op) override {
    const bool store = op->dir == DmaDir::kStore;
    const std::string what =
        fmt::format("dma.{} {} '{}' {} '{}'", store ? "store" : "load", isa::mem_id_name(op->mem),
                    op->sram->name, store ? "->" : "<-", op->dram->name);
    if (store && op->mem == isa::MemId::kInp) return store_inp(op, what);
    auto it = param_index_.find(op->dram.get());
    if (it == param_index_.end())
      fail("{}: {}: DRAM buffer '{}' is not a parameter of the operator", func_.name, what,
           op->dram->name);
    isa::CommandBuffer &buf = (*buffers_)[it->second];
    const isa::MemId mem = store ? isa::MemId::kOut : op->mem;
    if (mem_seen_.count(it->second) && buf.mem != mem)
      fail("{}: buffer '{}' is used as {} and as {} elements", func_.name, buf.name,
           isa::mem_id_name(buf.mem), isa::mem_id_name(mem));
    mem_seen_.insert({it->second, true});
    buf.mem = mem;

    isa::DmaCommand d;
    d.store = store;
    d.mem = mem;
    const int64_t y = eval(op->y_size), x = eval(op->x_size), stride = eval(op->x_stride);
    const int64_t pads[4] = {eval(op->pad_top), eval(op->pad_bottom), eval(op->pad_left),
                             eval(op->pad_right)};
    const char *pad_names[4] = {"pad_top", "pad_bottom", "pad_left", "pad_right"};
    check_bits(what, "y_size", y, isa::kDmaSizeBits);
    check_bits(what, "x_size", x, isa::kDmaSizeBits);
    check_bits(what, "x_stride", stride, isa::kDmaSizeBits);
    for (int k = 0; k < 4; ++k) {
      check_bits(what, pad_names[k], pads[k], isa::kPadBits);
      if (store && pads[k] != 0) field_error(what, pad_names[k], pads[k], "must be 0 on a STORE");
    }
    const int64_t sram = base_of(op->sram) + eval(op->sram_index);
    check_bits(what, "sram_base", sram, mem_bits_);
    const int64_t rows = pads[0] + y + pads[1], cols = pads[2] + x + pads[3];
    const isa::MemId spad = store ? isa::MemId::kAcc : mem;
    if (sram + rows * cols > config_.depth(spad))
      field_error(what, "sram_base", sram,
                  fmt::format("with {}x{} elements overruns the {} scratchpad ({} elements)", rows,
                              cols, isa::mem_id_name(spad), config_.depth(spad)));
    const int64_t dram = eval(op->dram_index);
    if (dram < 0) field_error(what, "dram_base", dram, "is negative");
    if (y > 0 && x > 0 && dram + (y - 1) * stride + x > static_cast<int64_t>(buf.elements))
      field_error(what, "dram_base", dram,
                  fmt::format("with {} rows of {} at stride {} reaches past the {} elements of "
                              "'{}'",
                              y, x, stride, buf.elements, buf.name));
    d.sram = static_cast<uint32_t>(sram);
    d.buffer = it->second;
    d.offset = static_cast<uint64_t>(dram);
    d.y = static_cast<uint32_t>(y);
    d.x = static_cast<uint32_t>(x);
    d.stride = static_cast<uint32_t>(stride);
    d.pad_top = static_cast<uint32_t>(pads[0]);
    d.pad_bottom = static_cast<uint32_t>(pads[1]);
    d.pad_left = static_cast<uint32_t>(pads[2]);
    d.pad_right = static_cast<uint32_t>(pads[3]);
    ops.push_back({d, {}});
  }

  // STORE INP: the destination is an INP-scope buffer, its planned position plus the index.
  void store_inp(const Dma *op, const std::string &what) {
    const int64_t y = eval(op->y_size), x = eval(op->x_size), stride = eval(op->x_stride);
    check_bits(what, "y_size", y, isa::kDmaSizeBits);
    check_bits(what, "x_size", x, isa::kDmaSizeBits);
    check_bits(what, "x_stride", stride, isa::kDmaSizeBits);
    const int64_t sram = base_of(op->sram) + eval(op->sram_index);
    check_bits(what, "sram_base", sram, mem_bits_);
    if (sram + y * x > config_.acc_depth())
      field_error(what, "sram_base", sram,
                  fmt::format("with {}x{} elements overruns the acc scratchpad ({} elements)", y, x,
                              config_.acc_depth()));
    const int64_t inp = base_of(op->dram) + eval(op->dram_index);
    if (y > 0 && x > 0 && inp + (y - 1) * stride + x > config_.inp_depth())
      field_error(what, "dram_base", inp,
                  fmt::format("with {} rows of {} at stride {} reaches past the inp scratchpad "
                              "({} elements)",
                              y, x, stride, config_.inp_depth()));
    isa::DmaCommand d;
    d.store = true;
    d.mem = isa::MemId::kInp;
    d.sram = static_cast<uint32_t>(sram);
    d.buffer = isa::kInpScratchpad;
    d.offset = static_cast<uint64_t>(inp);
    d.y = static_cast<uint32_t>(y);
    d.x = static_cast<uint32_t>(x);
    d.stride = static_cast<uint32_t>(stride);
    ops.push_back({d, {}});
  }

  // Checks one operand of a GEMM/ALU: its base index, factors, and the furthest tile the
  // loops reach, against the scratchpad `mem`.
  void check_operand(const std::string &what, const std::string &name, int64_t index,
                     const Factors &f, int64_t lo, int64_t li, isa::MemId mem, int factor_bits) {
    const int64_t depth = config_.depth(mem);
    if (index < 0 || index >= depth)
      field_error(
          what, name, index,
          fmt::format("is outside the {} scratchpad ({} elements)", isa::mem_id_name(mem), depth));
    check_bits(what, name + "_factor_out", f.out, factor_bits);
    check_bits(what, name + "_factor_in", f.in, factor_bits);
    const int64_t last = index + (lo - 1) * f.out + (li - 1) * f.in;
    if (last >= depth)
      field_error(what, name, index,
                  fmt::format("reaches element {} of the {} scratchpad ({} elements) in its loops",
                              last, isa::mem_id_name(mem), depth));
  }

  void check_loops(const std::string &what, int64_t lo, int64_t li) {
    for (auto [name, v] : {std::pair{"loop_out", lo}, std::pair{"loop_in", li}}) {
      if (v < 1) field_error(what, name, v, "must be at least 1");
      check_bits(what, name, v, isa::kLoopBits);
    }
  }

  void exec_gemm(const Gemm *op) override {
    const std::string what =
        fmt::format("gemm{} into '{}'", op->reset ? ".reset" : "", op->acc->name);
    check_loops(what, op->loop_out, op->loop_in);
    isa::GemmCommand g;
    g.reset = op->reset;
    g.loop_out = static_cast<uint32_t>(op->loop_out);
    g.loop_in = static_cast<uint32_t>(op->loop_in);
    isa::Uop u;
    const int64_t a = base_of(op->acc) + eval(op->acc_index);
    check_operand(what, "acc", a, op->acc_f, op->loop_out, op->loop_in, isa::MemId::kAcc,
                  config_.acc_index_bits());
    u.dst = static_cast<uint32_t>(a);
    g.acc = {static_cast<uint32_t>(op->acc_f.out), static_cast<uint32_t>(op->acc_f.in)};
    if (!op->reset) {
      const int64_t x = base_of(op->inp) + eval(op->inp_index);
      const int64_t w = base_of(op->wgt) + eval(op->wgt_index);
      check_operand(what, "inp", x, op->inp_f, op->loop_out, op->loop_in, isa::MemId::kInp,
                    config_.inp_index_bits());
      check_operand(what, "wgt", w, op->wgt_f, op->loop_out, op->loop_in, isa::MemId::kWgt,
                    config_.wgt_index_bits());
      u.src = static_cast<uint32_t>(x);
      u.wgt = static_cast<uint32_t>(w);
      g.inp = {static_cast<uint32_t>(op->inp_f.out), static_cast<uint32_t>(op->inp_f.in)};
      g.wgt = {static_cast<uint32_t>(op->wgt_f.out), static_cast<uint32_t>(op->wgt_f.in)};
    }
    ops.push_back({g, {u}});
  }

  void exec_alu(const Alu *op) override {
    const std::string what = fmt::format("alu.{} on '{}'", isa::alu_op_name(op->op), op->dst->name);
    check_loops(what, op->loop_out, op->loop_in);
    if (std::string why = isa::alu_op_unavailable(config_, op->op); !why.empty())
      fail("{}: {}", what, why);
    isa::AluCommand a;
    a.op = op->op;
    a.loop_out = static_cast<uint32_t>(op->loop_out);
    a.loop_in = static_cast<uint32_t>(op->loop_in);
    isa::Uop u;
    const int64_t d = base_of(op->dst) + eval(op->dst_index);
    check_operand(what, "dst", d, op->dst_f, op->loop_out, op->loop_in, isa::MemId::kAcc,
                  config_.acc_index_bits());
    u.dst = static_cast<uint32_t>(d);
    a.dst = {static_cast<uint32_t>(op->dst_f.out), static_cast<uint32_t>(op->dst_f.in)};
    a.use_imm = op->use_imm;
    if (op->use_imm) {
      const int64_t lim = int64_t{1} << (isa::kImmBits - 1);
      if (op->imm < -lim || op->imm >= lim)
        field_error(what, "imm", op->imm,
                    fmt::format("does not fit its {} signed bits", isa::kImmBits));
      a.imm = static_cast<int32_t>(op->imm);
    } else {
      const int64_t s = base_of(op->src) + eval(op->src_index);
      check_operand(what, "src", s, op->src_f, op->loop_out, op->loop_in, isa::MemId::kAcc,
                    config_.acc_index_bits());
      u.src = static_cast<uint32_t>(s);
      a.src = {static_cast<uint32_t>(op->src_f.out), static_cast<uint32_t>(op->src_f.in)};
      a.imm = static_cast<int32_t>(op->imm);  // SHR_CLIP's bounds beside the vector operand
    }
    ops.push_back({a, {u}});
  }

  using IntEvaluator::eval;
  int64_t var_value(const VarNode *var) override {
    const int64_t *v = loop_value(var);
    if (!v) fail("{}: variable '{}' is used outside its loop", func_.name, var->name);
    return *v;
  }
  int64_t load_value(const Load *load) override {
    fail(
        "{}: a host index reads tensor '{}'; accelerator addresses must depend on loop "
        "variables only",
        func_.name, load->buffer->name);
  }
  std::string eval_error(const std::string &what) override {
    return fmt::format("{}: a host index cannot be evaluated: {}{}", func_.name, what, where());
  }

  const Func &func_;
  const isa::HwConfig &config_;
  std::vector<isa::CommandBuffer> *buffers_;
  int mem_bits_ = 0;
  std::unordered_map<const BufferNode *, uint32_t> param_index_;
  std::map<uint32_t, bool> mem_seen_;
  std::unordered_map<const BufferNode *, int64_t> base_;
};

}  // namespace

CodegenCommands emit_commands(const tir::Func &f, const isa::HwConfig &config,
                              std::vector<isa::CommandBuffer> *buffers) {
  CommandEmitter emitter(f, config, buffers);
  emitter.exec(f.body);
  return std::move(emitter.ops);
}

}  // namespace vacc::lower
