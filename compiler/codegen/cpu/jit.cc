#include "vacc/codegen/cpu/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "lower_llvm.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/codegen/llvm/lowering.h"
#include "vacc/support/error.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/printer.h"

namespace vacc::codegen::cpu {
namespace {

std::string to_string(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

void init_llvm() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)done;
}

llvm::orc::JITTargetMachineBuilder host_builder() {
  init_llvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  VACC_CHECK(static_cast<bool>(jtmb))
      << "LLVM cannot describe the host: " << to_string(jtmb.takeError());
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  return std::move(*jtmb);
}

}  // namespace

void Kernel::run(const std::vector<void *> &args) const {
  VACC_CHECK(args.size() == num_params_)
      << "kernel " << name_ << " takes " << num_params_ << " buffers, " << args.size() << " given";
  fn_(args.data());
}

struct Jit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  mutable std::mutex mu;
  struct Entry {
    tir::Func func;
    std::shared_ptr<const Kernel> kernel;
  };
  std::unordered_map<uint64_t, std::vector<Entry>> cache;
  JitStats stats;
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {
  llvm::orc::JITTargetMachineBuilder jtmb = host_builder();
  auto tm = jtmb.createTargetMachine();
  VACC_CHECK(static_cast<bool>(tm)) << to_string(tm.takeError());
  impl_->tm = std::move(*tm);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  VACC_CHECK(static_cast<bool>(jit))
      << "cannot create the LLVM JIT: " << to_string(jit.takeError());
  impl_->jit = std::move(*jit);
  llvm::orc::JITDylib &lib = impl_->jit->getMainJITDylib();
  // libm (expf, tanhf, ...) and malloc/free from the process; the thread pool by address.
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      impl_->jit->getDataLayout().getGlobalPrefix());
  VACC_CHECK(static_cast<bool>(gen)) << to_string(gen.takeError());
  lib.addGenerator(std::move(*gen));
  llvm::orc::SymbolMap syms;
  syms[impl_->jit->mangleAndIntern("vacc_cpu_parallel_for")] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(&vacc_cpu_parallel_for), llvm::JITSymbolFlags::Exported);
  llvm::Error err = lib.define(llvm::orc::absoluteSymbols(std::move(syms)));
  VACC_CHECK(!err) << to_string(std::move(err));
}

Jit::~Jit() = default;

Jit &Jit::global() {
  static Jit *jit = new Jit();  // never destroyed: kernels may run during static teardown
  return *jit;
}

JitStats Jit::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

std::shared_ptr<const Kernel> Jit::compile(const tir::Func &f) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t h = tir::structural_hash(f);
  auto &bucket = impl_->cache[h];
  for (const Impl::Entry &e : bucket) {
    if (tir::structural_equal(e.func, f)) {
      ++impl_->stats.cache_hits;
      return e.kernel;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string symbol = "vacc_kernel_" + std::to_string(impl_->stats.compiled);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = lower_to_llvm(f, *ctx, symbol);
  m->setDataLayout(impl_->jit->getDataLayout());
  m->setTargetTriple(impl_->tm->getTargetTriple().str());
  optimize_module(*m, impl_->tm.get(), /*vectorize=*/true);
  if (const char *dir = std::getenv("VACC_CPU_DUMP_DIR")) {
    // For inspection: the loop IR and the optimized LLVM IR of every compiled kernel.
    std::string base = std::string(dir) + "/" + symbol + "_" + f.name;
    std::ofstream(base + ".tir") << tir::to_string(f);
    std::string ir;
    llvm::raw_string_ostream os(ir);
    m->print(os, nullptr);
    std::ofstream(base + ".ll") << os.str();
  }
  llvm::Error err =
      impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)));
  VACC_CHECK(!err) << "JIT: " << to_string(std::move(err));
  auto sym = impl_->jit->lookup(symbol);
  VACC_CHECK(static_cast<bool>(sym)) << "JIT: " << to_string(sym.takeError());
  auto kernel = std::make_shared<const Kernel>(
      f.name, reinterpret_cast<Kernel::Fn>(sym->getAddress()), f.params.size());
  bucket.push_back({f, kernel});
  ++impl_->stats.compiled;
  impl_->stats.compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return kernel;
}

std::string llvm_ir(const tir::Func &f, bool optimize_ir) {
  llvm::orc::JITTargetMachineBuilder jtmb = host_builder();
  auto tm = jtmb.createTargetMachine();
  VACC_CHECK(static_cast<bool>(tm)) << to_string(tm.takeError());
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = lower_to_llvm(f, ctx, f.name);
  m->setDataLayout((*tm)->createDataLayout());
  m->setTargetTriple((*tm)->getTargetTriple().str());
  if (optimize_ir) optimize_module(*m, tm->get(), /*vectorize=*/true);
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, nullptr);
  return os.str();
}

int native_vector_bytes() {
  static int bytes = [] {
    llvm::StringMap<bool> features;
    if (!llvm::sys::getHostCPUFeatures(features)) return 16;
    if (features.lookup("avx512f")) return 64;
    if (features.lookup("avx2") || features.lookup("avx")) return 32;
    return 16;
  }();
  return bytes;
}

}  // namespace vacc::codegen::cpu
