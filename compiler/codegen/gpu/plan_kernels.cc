// plan_kernels: a Func's top-level loop nests become kernel launches; each kernel's outer
// blockIdx loops its grid, its phases' threadIdx loops its block; local buffers shared by
// phases are made private or shared, barriers inserted (ptx.h).
#include <map>

#include "passes.h"
#include "vacc/codegen/gpu/ptx.h"
#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::codegen::gpu {
namespace {

// The buffers a statement reads or writes, in order of first access.
std::vector<const tir::BufferNode *> buffers_used(const tir::Stmt &s) {
  std::vector<const tir::BufferNode *> out;
  auto add = [&](const tir::BufferNode *b) {
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  };
  struct V : tir::Visitor {
    std::function<void(const tir::BufferNode *)> add;
    void visit_Load(const tir::Load *op) override {
      add(op->buffer.get());
      Visitor::visit_Load(op);
    }
    void visit_Store(const tir::Store *op) override {
      add(op->buffer.get());
      Visitor::visit_Store(op);
    }
  } v;
  v.add = add;
  v.visit(s);
  return out;
}

int64_t shared_bytes(const tir::Stmt &s) {
  int64_t bytes = 0;
  tir::for_each_stmt(s, [&](const tir::Stmt &x) {
    if (const tir::Allocate *a = x.as<tir::Allocate>()) {
      if (a->buffer->scope == tir::Scope::kShared) {
        int64_t eb = a->buffer->dtype.is_bool() ? 1 : a->buffer->dtype.bits / 8;
        bytes += (a->buffer->elems() * eb + 15) / 16 * 16;
      }
    }
  });
  return bytes;
}

Kernel plan_kernel(const tir::Stmt &nest, const std::string &name, const Module &m) {
  Kernel k;
  k.name = name;
  k.grid = {1, 1, 1};
  // The grid: the perfect nest of blockIdx loops at the top.
  std::vector<const tir::For *> blocks;
  tir::Stmt body = nest;
  std::array<bool, 3> seen{};
  while (const tir::For *f = body.as<tir::For>()) {
    if (!tir::is_gpu_block(f->for_kind)) break;
    int axis = tir::gpu_axis(f->for_kind);
    if (seen[axis]) {
      fail("GPU backend: {}: loops '{}' and another are both bound to {}", m.name, f->var->name,
           tir::for_kind_name(f->for_kind));
    }
    int64_t limit = axis == 0 ? (int64_t{1} << 31) - 1 : 65535;
    if (f->extent > limit) {
      fail("GPU backend: {}: loop '{}' bound to {} has {} iterations; the grid allows {}", m.name,
           f->var->name, tir::for_kind_name(f->for_kind), f->extent, limit);
    }
    seen[axis] = true;
    k.grid[axis] = f->extent;
    blocks.push_back(f);
    body = f->body;
  }
  k.block = block_shape(body, m.name);
  tir::RangeMap grid_ranges;
  for (const tir::For *f : blocks) grid_ranges[f->var.get()] = {0, f->extent - 1};
  body = insert_barriers(privatize_locals(body, k.block, grid_ranges));
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    body = tir::For::make((*it)->var, (*it)->extent, (*it)->for_kind, body);
  }
  k.shared_bytes = shared_bytes(body);
  if (k.shared_bytes > kMaxSharedBytes) {
    fail("GPU backend: {}: kernel {} needs {} bytes of shared memory; a block has {}", m.name, name,
         k.shared_bytes, kMaxSharedBytes);
  }
  k.func.name = name;
  k.func.body = body;
  std::vector<const tir::BufferNode *> used = buffers_used(body);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (std::find(used.begin(), used.end(), m.buffers[i].get()) == used.end()) continue;
    k.func.params.push_back(m.buffers[i]);
    k.args.push_back(static_cast<int>(i));
  }
  return k;
}

}  // namespace

Module plan_kernels(const tir::Func &f) {
  Module m;
  m.name = f.name;
  m.buffers = f.params;
  m.num_params = f.params.size();
  // Without blockIdx loops the Func is one kernel of one block. Otherwise top-level
  // allocations are device temporaries the kernels share.
  tir::Stmt body = f.body;
  bool grid = false;
  tir::for_each_stmt(body, [&](const tir::Stmt &s) {
    if (const tir::For *l = s.as<tir::For>()) grid |= tir::is_gpu_block(l->for_kind);
  });
  while (const tir::Allocate *a = grid ? body.as<tir::Allocate>() : nullptr) {
    if (a->buffer->scope != tir::Scope::kGlobal && a->buffer->scope != tir::Scope::kLocal) break;
    m.buffers.push_back(tir::make_buffer(a->buffer->name, a->buffer->dtype, a->buffer->shape));
    body = tir::replace_buffers(a->body, {{a->buffer, m.buffers.back()}});
  }
  std::vector<tir::Stmt> nests;
  if (const tir::Seq *q = body.as<tir::Seq>(); q && grid) {
    nests = q->stmts;
  } else {
    nests = {body};
  }
  for (size_t i = 0; i < nests.size(); ++i) {
    std::string name = m.name + "_k" + std::to_string(i);
    for (char &c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    m.kernels.push_back(plan_kernel(nests[i], name, m));
  }
  return m;
}

}  // namespace vacc::codegen::gpu
