#include "vacc/isa/command.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "vacc/support/error.h"

namespace vacc::isa {
namespace {

constexpr char kCommandListMagic[8] = {'V', 'A', 'C', 'C', 'C', 'M', 'D', 'S'};
constexpr uint32_t kVersion = 2;  // 2: GEMM/ALU overlap flag
enum Tag : uint8_t { kTagDma = 1, kTagGemm = 2, kTagAlu = 3, kTagDep = 4 };

class Writer {
 public:
  std::vector<uint8_t> bytes;
  void u8(uint8_t v) { bytes.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void factors(const LoopFactors &f) {
    u32(f.out);
    u32(f.in);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t> &b) : b_(b) {}
  void need(size_t n) const {
    if (pos_ + n > b_.size())
      fail("command list: truncated at byte {} (needs {} more of {})", pos_, n, b_.size());
  }
  uint8_t u8() {
    need(1);
    return b_[pos_++];
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{b_[pos_++]} << (8 * i);
    return v;
  }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{b_[pos_++]} << (8 * i);
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(b_.begin() + pos_, b_.begin() + pos_ + n);
    pos_ += n;
    return s;
  }
  LoopFactors factors() {
    LoopFactors f;
    f.out = u32();
    f.in = u32();
    return f;
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == b_.size(); }

 private:
  const std::vector<uint8_t> &b_;
  size_t pos_ = 0;
};

MemId mem_of(uint8_t v) {
  if (v >= kNumMemIds) fail("command list: invalid memory id {}", v);
  return static_cast<MemId>(v);
}
Engine engine_of_byte(uint8_t v) {
  if (v >= kNumEngines) fail("command list: invalid engine {}", v);
  return static_cast<Engine>(v);
}

}  // namespace

uint32_t CommandList::intern_kernel(const UopKernel &kernel) {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i] == kernel) return static_cast<uint32_t>(i);
  kernels.push_back(kernel);
  return static_cast<uint32_t>(kernels.size() - 1);
}

size_t CommandList::count_gemm() const {
  size_t n = 0;
  for (const auto &c : commands) n += std::holds_alternative<GemmCommand>(c);
  return n;
}
size_t CommandList::count_alu() const {
  size_t n = 0;
  for (const auto &c : commands) n += std::holds_alternative<AluCommand>(c);
  return n;
}
size_t CommandList::count_dma() const {
  size_t n = 0;
  for (const auto &c : commands) n += std::holds_alternative<DmaCommand>(c);
  return n;
}
size_t CommandList::total_kernel_uops() const {
  size_t n = 0;
  for (const auto &k : kernels) n += k.size();
  return n;
}

uint64_t CommandList::gemm_macs(const HwConfig &config) const {
  uint64_t uops = 0;
  for (const Command &c : commands)
    if (const auto *g = std::get_if<GemmCommand>(&c); g && !g->reset)
      uops += uint64_t{g->loop_out} * g->loop_in * kernels.at(g->kernel).size();
  return uops * static_cast<uint64_t>(config.peak_macs_per_cycle());
}

void check_command_list(const CommandList &list, const HwConfig &config) {
  if (list.isa_fingerprint != config.isa_fingerprint())
    fail("command list '{}' was built for config '{}', whose ISA layout differs from config '{}'",
         list.name, list.config_name, config.name);
}

std::vector<uint8_t> serialize(const CommandList &list) {
  Writer w;
  w.bytes.insert(w.bytes.end(), kCommandListMagic, kCommandListMagic + 8);
  w.u32(kVersion);
  w.str(list.name);
  w.str(list.config_name);
  w.u64(list.isa_fingerprint);
  w.u32(static_cast<uint32_t>(list.buffers.size()));
  for (const auto &b : list.buffers) {
    w.str(b.name);
    w.u8(static_cast<uint8_t>(b.mem));
    w.u64(b.elements);
  }
  w.u32(static_cast<uint32_t>(list.kernels.size()));
  for (const auto &k : list.kernels) {
    w.u32(static_cast<uint32_t>(k.size()));
    for (const Uop &u : k) {
      w.u32(u.dst);
      w.u32(u.src);
      w.u32(u.wgt);
    }
  }
  w.u32(static_cast<uint32_t>(list.commands.size()));
  for (const auto &c : list.commands) {
    if (const auto *d = std::get_if<DmaCommand>(&c)) {
      w.u8(kTagDma);
      w.u8(d->store);
      w.u8(static_cast<uint8_t>(d->mem));
      w.u32(d->sram);
      w.u32(d->buffer);
      w.u64(d->offset);
      for (uint32_t v : {d->y, d->x, d->stride, d->pad_top, d->pad_bottom, d->pad_left,
                         d->pad_right})
        w.u32(v);
    } else if (const auto *g = std::get_if<GemmCommand>(&c)) {
      w.u8(kTagGemm);
      w.u32(g->kernel);
      w.u8(static_cast<uint8_t>(g->reset | g->assign << 1));  // assign in bit 1: old bytes kept
      w.u32(g->loop_out);
      w.u32(g->loop_in);
      w.factors(g->acc);
      w.factors(g->inp);
      w.factors(g->wgt);
      w.u8(g->overlap);
    } else if (const auto *a = std::get_if<AluCommand>(&c)) {
      w.u8(kTagAlu);
      w.u32(a->kernel);
      w.u8(static_cast<uint8_t>(a->op));
      w.u32(a->loop_out);
      w.u32(a->loop_in);
      w.factors(a->dst);
      w.factors(a->src);
      w.u8(a->use_imm);
      w.u32(static_cast<uint32_t>(a->imm));
      w.u8(a->overlap);
    } else {
      const auto &p = std::get<DepCommand>(c);
      w.u8(kTagDep);
      w.u8(p.push);
      w.u8(static_cast<uint8_t>(p.from));
      w.u8(static_cast<uint8_t>(p.to));
    }
  }
  return w.bytes;
}

CommandList deserialize(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kCommandListMagic, 8) != 0)
    fail("command list: bad magic (not a serialized vacc command list)");
  Reader r(bytes);
  for (int i = 0; i < 8; ++i) r.u8();
  uint32_t version = r.u32();
  if (version != kVersion)
    fail("command list: format version {} is not supported (this vacc reads {})", version,
         kVersion);
  CommandList list;
  list.name = r.str();
  list.config_name = r.str();
  list.isa_fingerprint = r.u64();
  uint32_t nb = r.u32();
  for (uint32_t i = 0; i < nb; ++i) {
    CommandBuffer b;
    b.name = r.str();
    b.mem = mem_of(r.u8());
    b.elements = r.u64();
    list.buffers.push_back(b);
  }
  uint32_t nk = r.u32();
  for (uint32_t i = 0; i < nk; ++i) {
    uint32_t n = r.u32();
    r.need(size_t{n} * 12);
    UopKernel k(n);
    for (Uop &u : k) {
      u.dst = r.u32();
      u.src = r.u32();
      u.wgt = r.u32();
    }
    list.kernels.push_back(std::move(k));
  }
  uint32_t nc = r.u32();
  r.need(nc);  // each command takes at least its tag byte: a count past the bytes left is a
               // truncated or corrupt list, not a reason to reserve gigabytes
  list.commands.reserve(nc);
  for (uint32_t i = 0; i < nc; ++i) {
    uint8_t tag = r.u8();
    switch (tag) {
      case kTagDma: {
        DmaCommand d;
        d.store = r.u8() != 0;
        d.mem = mem_of(r.u8());
        d.sram = r.u32();
        d.buffer = r.u32();
        d.offset = r.u64();
        for (uint32_t *v : {&d.y, &d.x, &d.stride, &d.pad_top, &d.pad_bottom, &d.pad_left,
                            &d.pad_right})
          *v = r.u32();
        if (d.to_inp() != (d.buffer == kInpScratchpad))
          fail("command list: command {} is a {} naming {}", i,
               d.to_inp() ? "STORE INP (destination: the INP scratchpad)" : "DMA to or from DRAM",
               d.buffer == kInpScratchpad ? "the INP scratchpad as its buffer" : "a DRAM buffer");
        if (!d.to_inp() && d.buffer >= list.buffers.size())
          fail("command list: command {} names buffer {} of {}", i, d.buffer, list.buffers.size());
        list.commands.emplace_back(d);
        break;
      }
      case kTagGemm: {
        GemmCommand g;
        g.kernel = r.u32();
        const uint8_t flags = r.u8();
        if (flags > 3) fail("command list: command {} has invalid GEMM flags {}", i, flags);
        g.reset = (flags & 1) != 0;
        g.assign = (flags & 2) != 0;
        g.loop_out = r.u32();
        g.loop_in = r.u32();
        g.acc = r.factors();
        g.inp = r.factors();
        g.wgt = r.factors();
        g.overlap = r.u8() != 0;
        if (g.kernel >= list.kernels.size())
          fail("command list: command {} names kernel {} of {}", i, g.kernel, list.kernels.size());
        list.commands.emplace_back(g);
        break;
      }
      case kTagAlu: {
        AluCommand a;
        a.kernel = r.u32();
        uint8_t op = r.u8();
        if (op >= kNumAluOps) fail("command list: command {} has invalid ALU op {}", i, op);
        a.op = static_cast<AluOp>(op);
        a.loop_out = r.u32();
        a.loop_in = r.u32();
        a.dst = r.factors();
        a.src = r.factors();
        a.use_imm = r.u8() != 0;
        a.imm = static_cast<int32_t>(r.u32());
        a.overlap = r.u8() != 0;
        if (a.kernel >= list.kernels.size())
          fail("command list: command {} names kernel {} of {}", i, a.kernel, list.kernels.size());
        list.commands.emplace_back(a);
        break;
      }
      case kTagDep: {
        DepCommand p;
        p.push = r.u8() != 0;
        p.from = engine_of_byte(r.u8());
        p.to = engine_of_byte(r.u8());
        list.commands.emplace_back(p);
        break;
      }
      default:
        fail("command list: command {} has unknown tag {}", i, tag);
    }
  }
  if (!r.done()) fail("command list: {} trailing bytes", bytes.size() - r.pos());
  return list;
}

std::string to_text(const CommandList &list) {
  std::string out = fmt::format("# command list '{}' for config '{}'\n", list.name,
                                list.config_name);
  for (size_t i = 0; i < list.buffers.size(); ++i)
    out += fmt::format(".buffer {} {} {}\n", list.buffers[i].name,
                       mem_id_name(list.buffers[i].mem), list.buffers[i].elements);
  for (size_t i = 0; i < list.kernels.size(); ++i) {
    out += fmt::format(".kernel {}:", i);
    for (const Uop &u : list.kernels[i]) out += fmt::format(" ({},{},{})", u.dst, u.src, u.wgt);
    out += '\n';
  }
  for (const auto &c : list.commands) {
    if (const auto *d = std::get_if<DmaCommand>(&c)) {
      out += fmt::format("{}.{} sram={} buf={}+{} y={} x={} stride={}", d->store ? "store" : "load",
                         mem_id_name(d->mem), d->sram,
                         d->to_inp() ? "inp" : list.buffers.at(d->buffer).name, d->offset, d->y,
                         d->x, d->stride);
      if (!d->store)
        out += fmt::format(" pad={},{},{},{}", d->pad_top, d->pad_bottom, d->pad_left,
                           d->pad_right);
    } else if (const auto *g = std::get_if<GemmCommand>(&c)) {
      out += fmt::format("gemm{} kernel={} loop={},{} acc={},{} inp={},{} wgt={},{}",
                         g->reset    ? ".reset"
                         : g->assign ? ".assign"
                                     : "",
                         g->kernel, g->loop_out, g->loop_in, g->acc.out, g->acc.in, g->inp.out,
                         g->inp.in, g->wgt.out, g->wgt.in);
      if (g->overlap) out += " overlap";
    } else if (const auto *a = std::get_if<AluCommand>(&c)) {
      out += fmt::format("alu.{} kernel={} loop={},{} dst={},{}", alu_op_name(a->op), a->kernel,
                         a->loop_out, a->loop_in, a->dst.out, a->dst.in);
      out += a->use_imm ? fmt::format(" imm={}", a->imm)
                        : fmt::format(" src={},{}", a->src.out, a->src.in);
      if (a->op == AluOp::kShrClip && !a->use_imm)
        out += fmt::format(" bounds={},{}", clip_low(a->imm), clip_high(a->imm));
      if (a->overlap) out += " overlap";
    } else {
      const auto &p = std::get<DepCommand>(c);
      out += fmt::format("dep.{} {} -> {}", p.push ? "push" : "pop", engine_name(p.from),
                         engine_name(p.to));
    }
    out += '\n';
  }
  return out;
}

}  // namespace vacc::isa
