#include "vacc/tir/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "vacc/support/error.h"
#include "vacc/tir/loop_walker.h"
#include "vacc/tir/ops.h"

namespace vacc::tir {
namespace {

struct Storage {
  int64_t *data = nullptr;
  int64_t size = 0;
};

// Who touched a scratchpad tile last, and how many tokens that engine had pushed to each
// engine at that moment: a later access by engine E is ordered after it once E has popped
// more tokens from that engine than that count.
struct Access {
  int engine = -1;
  int64_t pushed[isa::kNumEngines] = {0, 0, 0};
};
struct TileRecord {
  Access write;
  Access reads[isa::kNumEngines];
};

class Interpreter : private LoopWalker {
 public:
  Interpreter(const Func &f, std::vector<std::vector<int64_t>> &args, const InterpOptions &o)
      : func_(f), options_(o) {
    VACC_CHECK(args.size() == f.params.size())
        << "interpret " << f.name << ": expected " << f.params.size() << " buffers";
    for (size_t i = 0; i < args.size(); ++i) {
      const Buffer &b = f.params[i];
      if (static_cast<int64_t>(args[i].size()) != b->elems()) {
        fail("interpret {}: buffer '{}' needs {} elements, got {}", f.name, b->name, b->elems(),
             args[i].size());
      }
      for (int64_t &v : args[i]) v = wrap_to(b->dtype, v);
      storage_[b.get()] = {args[i].data(), b->elems()};
    }
  }

  InterpStats stats;

  using LoopWalker::exec;

 private:
  static int idx(isa::Engine e) { return static_cast<int>(e); }

  using IntEvaluator::eval;
  int64_t var_value(const VarNode *var) override {
    const int64_t *v = loop_value(var);
    VACC_CHECK(v) << "unbound variable " << var->name;
    return *v;
  }
  int64_t load_value(const Load *op) override { return at(op->buffer, op->indices); }
  std::string eval_error(const std::string &what) override {
    return fmt::format("interpret {}: {}", func_.name, what);
  }

  Storage &storage(const Buffer &b) {
    auto it = storage_.find(b.get());
    VACC_CHECK(it != storage_.end()) << "buffer " << b->name << " has no storage";
    return it->second;
  }

  int64_t &at(const Buffer &b, const std::vector<Expr> &idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = eval(idx[d]);
      if (i < 0 || i >= b->shape[d]) {
        fail("interpret {}: index {} of dimension {} of buffer '{}' is out of bounds [0, {})",
             func_.name, i, d, b->name, b->shape[d]);
      }
      flat = flat * b->shape[d] + i;
    }
    return storage(b).data[flat];
  }

  void exec_store(const Store *op) override {
    int64_t v = eval(op->value);
    at(op->buffer, op->indices) = wrap_to(op->buffer->dtype, v);
  }

  void exec_dep_push(const DepPush *op) override {
    ++pushes_[idx(op->from)][idx(op->to)];
    ++stats.pushes;
  }

  void exec_dep_pop(const DepPop *op) override {
    int64_t &pops = pops_[idx(op->from)][idx(op->to)];
    if (options_.check_tokens && pops >= pushes_[idx(op->from)][idx(op->to)]) {
      fail(
          "interpret {}: deadlock: the {} engine pops a token from {} that was never "
          "pushed before it in program order",
          func_.name, isa::engine_name(op->to), isa::engine_name(op->from));
    }
    ++pops;
    ++stats.pops;
  }

  void exec_allocate(const Allocate *op) override {
    const Buffer &b = op->buffer;
    std::vector<int64_t> own;
    if (op->base >= 0 && options_.config && is_scratchpad(b->scope)) {
      isa::MemId mem = mem_of_scope(b->scope);
      std::vector<int64_t> &arena = arenas_[static_cast<int>(mem)];
      int64_t cap = int64_t{options_.config->depth(mem)} * b->tile_elems();
      if (arena.empty()) arena.assign(cap, 0);
      if ((op->base + b->tiles()) * b->tile_elems() > static_cast<int64_t>(arena.size())) {
        fail("interpret {}: buffer '{}' at tile {} overflows the {} scratchpad", func_.name,
             b->name, op->base, scope_name(b->scope));
      }
      storage_[b.get()] = {arena.data() + op->base * b->tile_elems(), b->elems()};
    } else {
      own.assign(b->elems(), 0);
      storage_[b.get()] = {own.data(), b->elems()};
    }
    exec(op->body);
    storage_.erase(b.get());
  }

  // Pointer to the first element of tile t of buffer b, bounds-checked.
  int64_t *tile(const Buffer &b, int64_t t, const char *what) {
    Storage &s = storage(b);
    int64_t te = b->tile_elems();
    if (t < 0 || (t + 1) * te > s.size) {
      fail("interpret {}: {} accesses tile {} of buffer '{}' which has {} tiles", func_.name, what,
           t, b->name, s.size / te);
    }
    return s.data + t * te;
  }

  void touch(int64_t *tile_ptr, isa::Engine engine, bool write, const Buffer &b) {
    if (!options_.check_tokens || !is_scratchpad(b->scope)) return;
    int e = idx(engine);
    TileRecord &r = tiles_[tile_ptr];
    auto ordered = [&](const Access &a, const char *kind) {
      if (a.engine < 0 || a.engine == e) return;
      if (pops_[a.engine][e] <= a.pushed[e]) {
        fail(
            "interpret {}: race on buffer '{}': the {} engine {} a tile that the {} engine "
            "{} without a dependency token in between",
            func_.name, b->name, isa::engine_name(engine), write ? "writes" : "reads",
            isa::engine_name(static_cast<isa::Engine>(a.engine)), kind);
      }
    };
    ordered(r.write, "wrote");
    if (write) {
      for (const Access &a : r.reads) ordered(a, "read");
    }
    Access now;
    now.engine = e;
    for (int k = 0; k < isa::kNumEngines; ++k) now.pushed[k] = pushes_[e][k];
    if (write) {
      r.write = now;
      for (Access &a : r.reads) a.engine = -1;
    } else {
      r.reads[e] = now;
    }
  }

  void exec_dma(const Dma *op) override {
    int64_t y = eval(op->y_size), x = eval(op->x_size), stride = eval(op->x_stride);
    int64_t pt = eval(op->pad_top), pb = eval(op->pad_bottom), pl = eval(op->pad_left),
            pr = eval(op->pad_right);
    int64_t sbase = eval(op->sram_index), dbase = eval(op->dram_index);
    int64_t te = op->sram->tile_elems();
    VACC_CHECK(op->dram->tile_elems() == te) << "DMA tile shapes differ";
    if (std::min({y, x, pt, pb, pl, pr}) < 0) {
      fail("interpret {}: DMA of '{}' has a negative size or padding", func_.name, op->sram->name);
    }
    isa::Engine engine = op->engine();
    if (op->dir == DmaDir::kLoad) {
      ++stats.dma_loads;
      int64_t W = pl + x + pr, H = pt + y + pb;
      for (int64_t r = 0; r < H; ++r) {
        for (int64_t c = 0; c < W; ++c) {
          int64_t *dst = tile(op->sram, sbase + r * W + c, "DMA load");
          touch(dst, engine, true, op->sram);
          bool pad = r < pt || r >= pt + y || c < pl || c >= pl + x;
          const int64_t *src =
              pad ? nullptr : tile(op->dram, dbase + (r - pt) * stride + (c - pl), "DMA load");
          for (int64_t k = 0; k < te; ++k) dst[k] = pad ? 0 : wrap_to(op->sram->dtype, src[k]);
        }
      }
    } else {
      ++stats.dma_stores;
      for (int64_t r = 0; r < y; ++r) {
        for (int64_t c = 0; c < x; ++c) {
          int64_t *src = tile(op->sram, sbase + r * x + c, "DMA store");
          touch(src, engine, false, op->sram);
          int64_t *dst = tile(op->dram, dbase + r * stride + c, "DMA store");
          for (int64_t k = 0; k < te; ++k) dst[k] = wrap_to(op->dram->dtype, src[k]);
        }
      }
    }
  }

  void exec_gemm(const Gemm *op) override {
    ++stats.gemms;
    const auto &as = op->acc->shape;
    int64_t B = as[as.size() - 2], O = as.back();
    int64_t I = op->reset ? 0 : op->inp->shape.back();
    int64_t a0 = eval(op->acc_index);
    int64_t x0 = op->reset ? 0 : eval(op->inp_index), k0 = op->reset ? 0 : eval(op->wgt_index);
    for (int64_t i = 0; i < op->loop_out; ++i) {
      for (int64_t j = 0; j < op->loop_in; ++j) {
        int64_t *acc = tile(op->acc, a0 + i * op->acc_f.out + j * op->acc_f.in, "GEMM");
        touch(acc, isa::Engine::kCompute, true, op->acc);
        if (op->reset) {
          std::fill(acc, acc + B * O, 0);
          continue;
        }
        int64_t *inp = tile(op->inp, x0 + i * op->inp_f.out + j * op->inp_f.in, "GEMM");
        int64_t *wgt = tile(op->wgt, k0 + i * op->wgt_f.out + j * op->wgt_f.in, "GEMM");
        touch(inp, isa::Engine::kCompute, false, op->inp);
        touch(wgt, isa::Engine::kCompute, false, op->wgt);
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t o = 0; o < O; ++o) {
            int64_t sum = acc[b * O + o];
            for (int64_t c = 0; c < I; ++c) sum += inp[b * I + c] * wgt[o * I + c];
            acc[b * O + o] = wrap_to(op->acc->dtype, sum);
          }
        }
        stats.macs += B * O * I;
      }
    }
  }

  void exec_alu(const Alu *op) override {
    ++stats.alus;
    int64_t te = op->dst->tile_elems();
    int64_t d0 = eval(op->dst_index), s0 = op->use_imm ? 0 : eval(op->src_index);
    int bits = op->dst->dtype.bits;
    for (int64_t i = 0; i < op->loop_out; ++i) {
      for (int64_t j = 0; j < op->loop_in; ++j) {
        int64_t *dst = tile(op->dst, d0 + i * op->dst_f.out + j * op->dst_f.in, "ALU");
        const int64_t *src = nullptr;
        if (!op->use_imm) {
          int64_t *s = tile(op->src, s0 + i * op->src_f.out + j * op->src_f.in, "ALU");
          touch(s, isa::Engine::kCompute, false, op->src);
          src = s;
        }
        touch(dst, isa::Engine::kCompute, true, op->dst);
        for (int64_t e = 0; e < te; ++e) {
          int64_t a = dst[e], b = op->use_imm ? op->imm : src[e];
          int64_t r = 0;
          switch (op->op) {
            case isa::AluOp::kMin:
              r = std::min(a, b);
              break;
            case isa::AluOp::kMax:
              r = std::max(a, b);
              break;
            case isa::AluOp::kAdd:
              r = a + b;
              break;
            case isa::AluOp::kShr:
              r = shift_right(a, b, bits);
              break;
            case isa::AluOp::kMul:
              r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
              break;
            case isa::AluOp::kClip: {
              const auto b32 = static_cast<int32_t>(b);
              r = std::min(std::max(a, int64_t{isa::clip_low(b32)}), int64_t{isa::clip_high(b32)});
              break;
            }
            case isa::AluOp::kShrClip: {
              const auto imm = static_cast<int32_t>(op->imm);
              r = std::min(std::max(wrap_to(op->dst->dtype, shift_right(a, b, bits)),
                                    int64_t{isa::clip_low(imm)}),
                           int64_t{isa::clip_high(imm)});
              break;
            }
          }
          dst[e] = wrap_to(op->dst->dtype, r);
        }
      }
    }
  }

  const Func &func_;
  const InterpOptions &options_;
  std::unordered_map<const BufferNode *, Storage> storage_;
  std::vector<int64_t> arenas_[isa::kNumMemIds];
  std::unordered_map<const int64_t *, TileRecord> tiles_;
  int64_t pushes_[isa::kNumEngines][isa::kNumEngines] = {};
  int64_t pops_[isa::kNumEngines][isa::kNumEngines] = {};
};

}  // namespace

InterpStats interpret(const Func &f, std::vector<std::vector<int64_t>> &args,
                      const InterpOptions &options) {
  for (const Buffer &b : f.params) {
    if (b->dtype.is_float()) {
      fail("interpret {}: float buffer '{}' runs on the CPU backend only", f.name, b->name);
    }
  }
  Interpreter in(f, args, options);
  in.exec(f.body);
  return in.stats;
}

}  // namespace vacc::tir
