// Immutable loop-IR nodes. Every node is built through its make(), which checks the node's
// invariants (types agree, indices match the buffer's rank, extents positive) with VACC_CHECK:
// a malformed node is a compiler bug, not a user error. Variables and buffers have identity:
// two Vars are the same variable only when they are the same object; names are for people,
// and the printer makes them unique for display.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"
#include "vacc/tir/dtype.h"
#include "vacc/tir/node_kinds.h"

namespace vacc::tir {

enum class ExprKind : uint8_t {
#define VACC_X(name, ...) k##name,
  VACC_TIR_BINARY_NODES(VACC_X) VACC_TIR_OTHER_EXPR_NODES(VACC_X)
#undef VACC_X
};
enum class StmtKind : uint8_t {
#define VACC_X(name) k##name,
  VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
};
const char *expr_kind_name(ExprKind k);
const char *stmt_kind_name(StmtKind k);

struct ExprNode {
  const ExprKind kind;
  const DataType dtype;
  virtual ~ExprNode() = default;

 protected:
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
};

// A shared handle to an immutable expression node.
class Expr {
 public:
  Expr() = default;
  template <typename T>
  Expr(std::shared_ptr<const T> p) : p_(std::move(p)) {}  // NOLINT: implicit on purpose
  Expr(int v);                                            // NOLINT: an int32 literal
  const ExprNode *get() const { return p_.get(); }
  const ExprNode *operator->() const { return p_.get(); }
  bool defined() const { return p_ != nullptr; }
  bool same_as(const Expr &o) const { return p_ == o.p_; }
  ExprKind kind() const { return p_->kind; }
  DataType dtype() const { return p_->dtype; }
  template <typename T>
  const T *as() const {
    return p_ && p_->kind == T::kKind ? static_cast<const T *>(p_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> p_;
};

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  int64_t value;
  static Expr make(DataType t, int64_t v);
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

// A floating-point literal (CPU backend only).
struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  double value;
  static Expr make(DataType t, double v);
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};

// A pure math function of float operands (CPU backend only). kRound rounds half to even.
enum class CallOp : uint8_t { kExp, kLog, kSqrt, kTanh, kFloor, kCeil, kRound, kAbs };
const char *call_op_name(CallOp op);  // "exp", "log", ...
struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallOp op;
  std::vector<Expr> args;
  static Expr make(CallOp op, std::vector<Expr> args);
  Call(DataType t, CallOp o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
};

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  std::string name;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
};
using Var = std::shared_ptr<const VarNode>;
Var make_var(const std::string &name, DataType t = int32());

template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = K;
  Expr a, b;
  static Expr make(Expr a, Expr b);
  BinaryNode(DataType t, Expr x, Expr y) : ExprNode(K, t), a(std::move(x)), b(std::move(y)) {}
};
#define VACC_X(name, ...) using name = BinaryNode<ExprKind::k##name>;
VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
bool is_comparison(ExprKind k);  // EQ..GE, And, Or: bool result

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  Expr value;
  static Expr make(DataType t, Expr v);
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  Expr a;
  static Expr make(Expr a);
  explicit Not(Expr x) : ExprNode(kKind, DataType::bool_()), a(std::move(x)) {}
};

// cond ? t : f (both sides may be evaluated; used for padding and guards).
struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  Expr cond, t, f;
  static Expr make(Expr c, Expr t, Expr f);
  Select(Expr c, Expr x, Expr y)
      : ExprNode(kKind, x.dtype()), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};

// A buffer: a named, typed, dense row-major array in one memory scope. Scratchpad buffers
// keep the accelerator's tile as their two innermost dimensions. `vthread` is the virtual
// thread that owns a copy made by inject_virtual_threads (-1: shared).
struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  Scope scope = Scope::kGlobal;
  int vthread = -1;
  int64_t elems() const;
  int64_t tile_elems() const;  // product of the two innermost dimensions
  int64_t tiles() const { return elems() / tile_elems(); }
  std::vector<int64_t> strides() const;  // row-major, in elements
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer make_buffer(const std::string &name, DataType t, std::vector<int64_t> shape,
                   Scope scope = Scope::kGlobal, int vthread = -1);

struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLoad;
  Buffer buffer;
  std::vector<Expr> indices;
  static Expr make(Buffer b, std::vector<Expr> indices);
  Load(Buffer buf, std::vector<Expr> idx)
      : ExprNode(kKind, buf->dtype), buffer(std::move(buf)), indices(std::move(idx)) {}
};

// ---------------------------------------------------------------------------- statements

struct StmtNode {
  const StmtKind kind;
  virtual ~StmtNode() = default;

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};

class Stmt {
 public:
  Stmt() = default;
  template <typename T>
  Stmt(std::shared_ptr<const T> p) : p_(std::move(p)) {}  // NOLINT
  const StmtNode *get() const { return p_.get(); }
  bool defined() const { return p_ != nullptr; }
  bool same_as(const Stmt &o) const { return p_ == o.p_; }
  StmtKind kind() const { return p_->kind; }
  template <typename T>
  const T *as() const {
    return p_ && p_->kind == T::kKind ? static_cast<const T *>(p_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> p_;
};

struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  static Stmt make(Buffer b, std::vector<Expr> indices, Expr value);
  Store() : StmtNode(kKind) {}
};

// A hint that buffer[indices] is read soon: its cache line is fetched ahead of the loads (the
// CPU's software prefetch). It changes no value; where there is no cache to fill (an
// interpreter, the GPU, the accelerator) it does nothing.
struct Prefetch : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kPrefetch;
  Buffer buffer;
  std::vector<Expr> indices;
  static Stmt make(Buffer b, std::vector<Expr> indices);
  Prefetch() : StmtNode(kKind) {}
};

// Loops bound to a GPU grid (kBlock*) or thread block (kThread*) axis: on a GPU each block
// (thread) runs the body for its own index; everywhere else they are serial loops, and the IR
// means what it means sequentially (codegen/gpu keeps that meaning, docs/gpu_backend.md).
enum class ForKind : uint8_t {
  kSerial,
  kUnrolled,
  kVectorized,
  kParallel,
  kVThread,
  kBlockX,
  kBlockY,
  kBlockZ,
  kThreadX,
  kThreadY,
  kThreadZ
};
// "for", "unroll", "vectorize", "parallel", "vthread", "blockIdx.x", ..., "threadIdx.z"
const char *for_kind_name(ForKind k);
bool is_gpu_block(ForKind k);
bool is_gpu_thread(ForKind k);
// 0, 1, 2 for the x, y, z axis of a block or thread binding.
int gpu_axis(ForKind k);
// The binding of a GPU axis by name ("blockIdx.x", ..., "threadIdx.z"); false when unknown.
bool parse_gpu_binding(const std::string &name, ForKind *out);

// for (var = 0; var < extent; ++var) body. Extents are compile-time constants: bounds
// inference gives every loop a constant extent, and the accelerator needs them so.
struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  Var var;
  int64_t extent = 1;
  ForKind for_kind = ForKind::kSerial;
  Stmt body;
  static Stmt make(Var v, int64_t extent, ForKind k, Stmt body);
  For() : StmtNode(kKind) {}
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  Expr cond;
  Stmt then_case, else_case;  // else_case may be undefined
  static Stmt make(Expr cond, Stmt then_case, Stmt else_case = Stmt());
  IfThenElse() : StmtNode(kKind) {}
};

struct Seq : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  std::vector<Stmt> stmts;
  // Flattens nested Seqs; returns the single statement itself when there is one.
  static Stmt make(std::vector<Stmt> stmts);
  Seq() : StmtNode(kKind) {}
};

// Allocates `buffer` for the extent of body. `base` is the buffer's first tile in its
// scratchpad, assigned by plan_scratchpads (-1 before).
struct Allocate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Buffer buffer;
  int64_t base = -1;
  Stmt body;
  static Stmt make(Buffer b, Stmt body, int64_t base = -1);
  Allocate() : StmtNode(kKind) {}
};

// An annotation on a subtree: "pragma" = "dma_copy" | "alu", "tensorize" = intrinsic name.
struct Attr : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAttr;
  std::string key, value;
  Stmt body;
  static Stmt make(std::string key, std::string value, Stmt body);
  Attr() : StmtNode(kKind) {}
};

// A 2D DMA between a DRAM buffer and a scratchpad buffer (isa/README.md LOAD/STORE).
// Indices count tiles from each buffer's start; the expressions may use enclosing loop
// variables (codegen evaluates them per iteration). Load: for y < pad_top+y_size+pad_bottom,
// x < pad_left+x_size+pad_right: sram[sram_index + y*W + x] = padding ? 0 :
// dram[dram_index + (y-pad_top)*x_stride + (x-pad_left)]. Store narrows by truncation; a
// store with mem = inp (extensions.store_inp) writes an INP-scope buffer in place of DRAM.
enum class DmaDir : uint8_t { kLoad, kStore };
struct Dma : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kDma;
  DmaDir dir = DmaDir::kLoad;
  isa::MemId mem = isa::MemId::kInp;
  Buffer sram;
  Expr sram_index;
  Buffer dram;
  Expr dram_index;
  Expr y_size, x_size, x_stride;
  Expr pad_top, pad_bottom, pad_left, pad_right;
  static Stmt make(const Dma &fields);
  isa::Engine engine() const;
  Dma() : StmtNode(kKind) {}
};

// Index factors of one operand for the two folded loop levels (isa LoopFactors).
struct Factors {
  int64_t out = 0;
  int64_t in = 0;
  bool operator==(const Factors &) const = default;
};

// One GEMM instruction with one micro-op: for i < loop_out, j < loop_in:
// acc[acc_index + i*acc_f.out + j*acc_f.in] (=0 | += inp[..] * wgt[..]^T). Indices in tiles.
struct Gemm : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kGemm;
  bool reset = false;
  Buffer acc, inp, wgt;  // inp and wgt are null for a reset
  Expr acc_index, inp_index, wgt_index;
  int64_t loop_out = 1, loop_in = 1;
  Factors acc_f, inp_f, wgt_f;
  static Stmt make(const Gemm &fields);
  Gemm() : StmtNode(kKind) {}
};

// One ALU instruction with one micro-op over ACC tiles:
// dst[d'] = op(dst[d'], use_imm ? imm : src[s']), d' = dst_index + i*dst_f.out + j*dst_f.in.
struct Alu : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAlu;
  isa::AluOp op = isa::AluOp::kAdd;
  Buffer dst, src;  // src is null when use_imm
  Expr dst_index, src_index;
  bool use_imm = false;
  int64_t imm = 0;
  int64_t loop_out = 1, loop_in = 1;
  Factors dst_f, src_f;
  static Stmt make(const Alu &fields);
  Alu() : StmtNode(kKind) {}
};

// Dependency tokens between neighbouring engines. DepPush runs on `from` after its previous
// instruction in program order; DepPop runs on `to` before its next instruction.
struct DepPush : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kDepPush;
  isa::Engine from = isa::Engine::kLoad, to = isa::Engine::kCompute;
  static Stmt make(isa::Engine from, isa::Engine to);
  DepPush() : StmtNode(kKind) {}
};
struct DepPop : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kDepPop;
  isa::Engine from = isa::Engine::kLoad, to = isa::Engine::kCompute;
  static Stmt make(isa::Engine from, isa::Engine to);
  DepPop() : StmtNode(kKind) {}
};

// Node structs by kind name, for the X-macro driven visitor, mutator and printer.
namespace nodes {
#define VACC_X(name, ...) using name = tir::name;
VACC_TIR_BINARY_NODES(VACC_X)
VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
using IntImm = tir::IntImm;
using FloatImm = tir::FloatImm;
using Call = tir::Call;
using Var = tir::VarNode;
using Cast = tir::Cast;
using Not = tir::Not;
using Select = tir::Select;
using Load = tir::Load;
}  // namespace nodes

// The engine that runs an intrinsic statement, or false for other statements.
bool engine_of(const Stmt &s, isa::Engine *out);
// The memory a scratchpad scope maps to (inp, wgt, acc, uop).
isa::MemId mem_of_scope(Scope s);

}  // namespace vacc::tir
