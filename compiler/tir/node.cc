#include "vacc/tir/node.h"

#include "vacc/support/error.h"

namespace vacc::tir {

std::string DataType::str() const {
  if (is_bool()) return "bool";
  if (is_uint()) return "uint" + std::to_string(bits);
  if (is_float()) return "float" + std::to_string(bits);
  return "int" + std::to_string(bits);
}

int64_t wrap_to(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64 || t.is_float()) return v;
  uint64_t mask = (uint64_t{1} << t.bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_uint()) return static_cast<int64_t>(u);
  if (u >> (t.bits - 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

const char *scope_name(Scope s) {
  switch (s) {
    case Scope::kGlobal:
      return "global";
    case Scope::kInp:
      return "inp";
    case Scope::kWgt:
      return "wgt";
    case Scope::kAcc:
      return "acc";
    case Scope::kUop:
      return "uop";
    case Scope::kLocal:
      return "local";
    case Scope::kShared:
      return "shared";
  }
  return "?";
}

bool parse_scope(const std::string &name, Scope *out) {
  for (Scope s : {Scope::kGlobal, Scope::kInp, Scope::kWgt, Scope::kAcc, Scope::kUop, Scope::kLocal,
                  Scope::kShared}) {
    if (name == scope_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char *expr_kind_name(ExprKind k) {
  switch (k) {
#define VACC_X(name, ...) \
  case ExprKind::k##name: \
    return #name;
    VACC_TIR_BINARY_NODES(VACC_X) VACC_TIR_OTHER_EXPR_NODES(VACC_X)
#undef VACC_X
  }
  return "?";
}

const char *stmt_kind_name(StmtKind k) {
  switch (k) {
#define VACC_X(name)      \
  case StmtKind::k##name: \
    return #name;
    VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
  }
  return "?";
}

const char *for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial:
      return "for";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kVectorized:
      return "vectorize";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVThread:
      return "vthread";
    case ForKind::kBlockX:
      return "blockIdx.x";
    case ForKind::kBlockY:
      return "blockIdx.y";
    case ForKind::kBlockZ:
      return "blockIdx.z";
    case ForKind::kThreadX:
      return "threadIdx.x";
    case ForKind::kThreadY:
      return "threadIdx.y";
    case ForKind::kThreadZ:
      return "threadIdx.z";
  }
  return "?";
}

bool is_gpu_block(ForKind k) {
  return k == ForKind::kBlockX || k == ForKind::kBlockY || k == ForKind::kBlockZ;
}
bool is_gpu_thread(ForKind k) {
  return k == ForKind::kThreadX || k == ForKind::kThreadY || k == ForKind::kThreadZ;
}
int gpu_axis(ForKind k) {
  switch (k) {
    case ForKind::kBlockY:
    case ForKind::kThreadY:
      return 1;
    case ForKind::kBlockZ:
    case ForKind::kThreadZ:
      return 2;
    default:
      return 0;
  }
}
bool parse_gpu_binding(const std::string &name, ForKind *out) {
  for (ForKind k : {ForKind::kBlockX, ForKind::kBlockY, ForKind::kBlockZ, ForKind::kThreadX,
                    ForKind::kThreadY, ForKind::kThreadZ}) {
    if (name == for_kind_name(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

Expr::Expr(int v) : p_(std::make_shared<IntImm>(int32(), v)) {}

Expr IntImm::make(DataType t, int64_t v) {
  return Expr(std::make_shared<const IntImm>(t, wrap_to(t, v)));
}

Expr FloatImm::make(DataType t, double v) {
  VACC_CHECK(t.is_float()) << "FloatImm of type " << t.str();
  return Expr(std::make_shared<const FloatImm>(t, v));
}

const char *call_op_name(CallOp op) {
  switch (op) {
    case CallOp::kExp:
      return "exp";
    case CallOp::kLog:
      return "log";
    case CallOp::kSqrt:
      return "sqrt";
    case CallOp::kTanh:
      return "tanh";
    case CallOp::kFloor:
      return "floor";
    case CallOp::kCeil:
      return "ceil";
    case CallOp::kRound:
      return "round";
    case CallOp::kAbs:
      return "abs";
  }
  return "?";
}

Expr Call::make(CallOp op, std::vector<Expr> args) {
  VACC_CHECK(args.size() == 1 && args[0].defined() && args[0].dtype().is_float())
      << call_op_name(op) << " takes one float operand";
  DataType t = args[0].dtype();
  return Expr(std::make_shared<const Call>(t, op, std::move(args)));
}

Var make_var(const std::string &name, DataType t) {
  VACC_CHECK(t.is_int()) << "loop variables are integers";
  return std::make_shared<const VarNode>(name, t);
}

bool is_comparison(ExprKind k) {
  switch (k) {
#define VACC_X(name, ...) case ExprKind::k##name:
    VACC_TIR_CMP_NODES(VACC_X)
#undef VACC_X
    return true;
    default:
      return false;
  }
}

template <ExprKind K>
Expr BinaryNode<K>::make(Expr a, Expr b) {
  VACC_CHECK(a.defined() && b.defined()) << expr_kind_name(K) << ": undefined operand";
  VACC_CHECK(a.dtype() == b.dtype())
      << expr_kind_name(K) << ": operand types differ: " << a.dtype().str() << " vs "
      << b.dtype().str();
  DataType t = a.dtype();
  if (K == ExprKind::kAnd || K == ExprKind::kOr) {
    VACC_CHECK(t.is_bool()) << "logic on non-bool";
  } else {
    VACC_CHECK(t.is_numeric()) << expr_kind_name(K) << " needs numeric operands";
    VACC_CHECK(!t.is_float() || (K != ExprKind::kShr && K != ExprKind::kMod))
        << expr_kind_name(K) << " on float operands";
  }
  if (is_comparison(K)) t = DataType::bool_();
  return Expr(std::make_shared<const BinaryNode<K>>(t, std::move(a), std::move(b)));
}
#define VACC_X(name, ...) template struct BinaryNode<ExprKind::k##name>;
VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X

Expr Cast::make(DataType t, Expr v) {
  VACC_CHECK(v.defined());
  return Expr(std::make_shared<const Cast>(t, std::move(v)));
}

Expr Not::make(Expr a) {
  VACC_CHECK(a.defined() && a.dtype().is_bool()) << "Not needs a bool";
  return Expr(std::make_shared<const Not>(std::move(a)));
}

Expr Select::make(Expr c, Expr t, Expr f) {
  VACC_CHECK(c.defined() && t.defined() && f.defined());
  VACC_CHECK(c.dtype().is_bool()) << "Select condition must be bool";
  VACC_CHECK(t.dtype() == f.dtype()) << "Select branches differ in type";
  return Expr(std::make_shared<const Select>(std::move(c), std::move(t), std::move(f)));
}

int64_t BufferNode::elems() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t BufferNode::tile_elems() const {
  size_t r = shape.size();
  if (r == 0) return 1;
  if (r == 1) return shape[0];
  return shape[r - 1] * shape[r - 2];
}

std::vector<int64_t> BufferNode::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

Buffer make_buffer(const std::string &name, DataType t, std::vector<int64_t> shape, Scope scope,
                   int vthread) {
  for (int64_t d : shape) VACC_CHECK(d > 0) << "buffer " << name << " has a dimension " << d;
  auto b = std::make_shared<BufferNode>();
  b->name = name;
  b->dtype = t;
  b->shape = std::move(shape);
  b->scope = scope;
  b->vthread = vthread;
  return b;
}

static void check_indices(const Buffer &b, const std::vector<Expr> &idx) {
  VACC_CHECK(b != nullptr) << "access to a null buffer";
  VACC_CHECK(idx.size() == b->shape.size())
      << "buffer " << b->name << " has rank " << b->shape.size() << " but " << idx.size()
      << " indices";
  for (const Expr &e : idx) {
    VACC_CHECK(e.defined() && e.dtype().is_int()) << "index of " << b->name << " not an int";
  }
}

Expr Load::make(Buffer b, std::vector<Expr> indices) {
  check_indices(b, indices);
  return Expr(std::make_shared<const Load>(std::move(b), std::move(indices)));
}

Stmt Store::make(Buffer b, std::vector<Expr> indices, Expr value) {
  check_indices(b, indices);
  VACC_CHECK(value.defined() && value.dtype() == b->dtype)
      << "store to " << b->name << ": value type " << (value.defined() ? value.dtype().str() : "?")
      << " vs buffer " << b->dtype.str();
  auto n = std::make_shared<Store>();
  n->buffer = std::move(b);
  n->indices = std::move(indices);
  n->value = std::move(value);
  return Stmt(std::shared_ptr<const Store>(n));
}

Stmt Prefetch::make(Buffer b, std::vector<Expr> indices) {
  check_indices(b, indices);
  auto n = std::make_shared<Prefetch>();
  n->buffer = std::move(b);
  n->indices = std::move(indices);
  return Stmt(std::shared_ptr<const Prefetch>(n));
}

Stmt For::make(Var v, int64_t extent, ForKind k, Stmt body) {
  VACC_CHECK(v != nullptr && body.defined()) << "incomplete loop";
  VACC_CHECK(extent > 0) << "loop " << v->name << " has extent " << extent;
  auto n = std::make_shared<For>();
  n->var = std::move(v);
  n->extent = extent;
  n->for_kind = k;
  n->body = std::move(body);
  return Stmt(std::shared_ptr<const For>(n));
}

Stmt IfThenElse::make(Expr cond, Stmt then_case, Stmt else_case) {
  VACC_CHECK(cond.defined() && cond.dtype().is_bool()) << "if condition must be bool";
  VACC_CHECK(then_case.defined());
  auto n = std::make_shared<IfThenElse>();
  n->cond = std::move(cond);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(std::shared_ptr<const IfThenElse>(n));
}

Stmt Seq::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt &s : stmts) {
    if (!s.defined()) continue;
    if (const Seq *q = s.as<Seq>()) {
      flat.insert(flat.end(), q->stmts.begin(), q->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<Seq>();
  n->stmts = std::move(flat);
  return Stmt(std::shared_ptr<const Seq>(n));
}

Stmt Allocate::make(Buffer b, Stmt body, int64_t base) {
  VACC_CHECK(b != nullptr && body.defined());
  auto n = std::make_shared<Allocate>();
  n->buffer = std::move(b);
  n->body = std::move(body);
  n->base = base;
  return Stmt(std::shared_ptr<const Allocate>(n));
}

Stmt Attr::make(std::string key, std::string value, Stmt body) {
  VACC_CHECK(body.defined());
  auto n = std::make_shared<Attr>();
  n->key = std::move(key);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(std::shared_ptr<const Attr>(n));
}

isa::MemId mem_of_scope(Scope s) {
  switch (s) {
    case Scope::kInp:
      return isa::MemId::kInp;
    case Scope::kWgt:
      return isa::MemId::kWgt;
    case Scope::kAcc:
      return isa::MemId::kAcc;
    case Scope::kUop:
      return isa::MemId::kUop;
    default:
      VACC_CHECK(false) << "scope " << scope_name(s) << " is not a scratchpad";
  }
  return isa::MemId::kInp;
}

isa::Engine Dma::engine() const {
  if (dir == DmaDir::kStore) return isa::Engine::kStore;
  if (mem == isa::MemId::kInp || mem == isa::MemId::kWgt) return isa::Engine::kLoad;
  return isa::Engine::kCompute;
}

Stmt Dma::make(const Dma &f) {
  VACC_CHECK(f.sram && f.dram) << "DMA needs both buffers";
  VACC_CHECK(is_scratchpad(f.sram->scope))
      << "DMA sram side " << f.sram->name << " in scope " << scope_name(f.sram->scope);
  const bool to_inp = f.dir == DmaDir::kStore && f.mem == isa::MemId::kInp;
  VACC_CHECK(f.dram->scope == (to_inp ? Scope::kInp : Scope::kGlobal))
      << "DMA dram side " << f.dram->name;
  for (const Expr *e : {&f.sram_index, &f.dram_index, &f.y_size, &f.x_size, &f.x_stride, &f.pad_top,
                        &f.pad_bottom, &f.pad_left, &f.pad_right}) {
    VACC_CHECK(e->defined() && e->dtype().is_int()) << "DMA field missing";
  }
  if (f.dir == DmaDir::kStore) {
    VACC_CHECK((f.mem == isa::MemId::kOut || to_inp) && f.sram->scope == Scope::kAcc)
        << "store from acc";
  } else {
    VACC_CHECK(f.mem != isa::MemId::kOut && mem_of_scope(f.sram->scope) == f.mem)
        << "load memory does not match buffer " << f.sram->name;
  }
  auto n = std::make_shared<Dma>(f);
  return Stmt(std::shared_ptr<const Dma>(n));
}

Stmt Gemm::make(const Gemm &f) {
  VACC_CHECK(f.acc && f.acc->scope == Scope::kAcc && f.acc_index.defined()) << "GEMM acc";
  if (!f.reset) {
    VACC_CHECK(f.inp && f.inp->scope == Scope::kInp && f.inp_index.defined()) << "GEMM inp";
    VACC_CHECK(f.wgt && f.wgt->scope == Scope::kWgt && f.wgt_index.defined()) << "GEMM wgt";
  } else {
    VACC_CHECK(!f.inp && !f.wgt) << "a reset GEMM reads nothing";
  }
  VACC_CHECK(f.loop_out >= 1 && f.loop_in >= 1) << "GEMM loop extents";
  auto n = std::make_shared<Gemm>(f);
  return Stmt(std::shared_ptr<const Gemm>(n));
}

Stmt Alu::make(const Alu &f) {
  VACC_CHECK(f.dst && f.dst->scope == Scope::kAcc && f.dst_index.defined()) << "ALU dst";
  if (f.use_imm) {
    VACC_CHECK(!f.src) << "ALU with an immediate has no src";
  } else {
    VACC_CHECK(f.src && f.src->scope == Scope::kAcc && f.src_index.defined()) << "ALU src";
  }
  VACC_CHECK(f.loop_out >= 1 && f.loop_in >= 1) << "ALU loop extents";
  auto n = std::make_shared<Alu>(f);
  return Stmt(std::shared_ptr<const Alu>(n));
}

static void check_neighbours(isa::Engine from, isa::Engine to) {
  int d = static_cast<int>(from) - static_cast<int>(to);
  VACC_CHECK(d == 1 || d == -1) << "tokens only flow between neighbouring engines";
}

Stmt DepPush::make(isa::Engine from, isa::Engine to) {
  check_neighbours(from, to);
  auto n = std::make_shared<DepPush>();
  n->from = from;
  n->to = to;
  return Stmt(std::shared_ptr<const DepPush>(n));
}

Stmt DepPop::make(isa::Engine from, isa::Engine to) {
  check_neighbours(from, to);
  auto n = std::make_shared<DepPop>();
  n->from = from;
  n->to = to;
  return Stmt(std::shared_ptr<const DepPop>(n));
}

bool engine_of(const Stmt &s, isa::Engine *out) {
  if (const Dma *d = s.as<Dma>()) {
    *out = d->engine();
    return true;
  }
  if (s.as<Gemm>() || s.as<Alu>()) {
    *out = isa::Engine::kCompute;
    return true;
  }
  return false;
}

}  // namespace vacc::tir
