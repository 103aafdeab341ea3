#include "vacc/codegen/cpu/jit.h"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
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
#include <optional>

#include "lower_llvm.h"
#include "vacc/codegen/cpu/kernel_cache.h"
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
  std::optional<KernelCache> disk;
  std::function<void(const std::string &)> note;
  bool disk_write_failed_reported = false;

  // Object code for f, its entry point named `symbol`.
  std::unique_ptr<llvm::MemoryBuffer> generate(const tir::Func &f, const std::string &symbol);
  // The kernel in `object`, linked into the JIT.
  std::shared_ptr<const Kernel> link(const tir::Func &f, std::unique_ptr<llvm::MemoryBuffer> object,
                                     const std::string &symbol);
};

std::unique_ptr<llvm::MemoryBuffer> Jit::Impl::generate(const tir::Func &f,
                                                        const std::string &symbol) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = lower_to_llvm(f, *ctx, symbol);
  m->setDataLayout(jit->getDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  optimize_module(*m, tm.get(), /*vectorize=*/true);
  if (const char *dir = std::getenv("VACC_CPU_DUMP_DIR")) {
    // For inspection: the loop IR and the optimized LLVM IR of every compiled kernel.
    std::string base = std::string(dir) + "/" + symbol + "_" + f.name;
    std::ofstream(base + ".tir") << tir::to_string(f);
    std::string ir;
    llvm::raw_string_ostream os(ir);
    m->print(os, nullptr);
    std::ofstream(base + ".ll") << os.str();
  }
  llvm::orc::SimpleCompiler compiler(*tm);
  auto object = compiler(*m);
  VACC_CHECK(static_cast<bool>(object)) << "JIT: " << to_string(object.takeError());
  return std::move(*object);
}

std::shared_ptr<const Kernel> Jit::Impl::link(const tir::Func &f,
                                              std::unique_ptr<llvm::MemoryBuffer> object,
                                              const std::string &symbol) {
  llvm::Error err = jit->addObjectFile(std::move(object));
  VACC_CHECK(!err) << "JIT: " << to_string(std::move(err));
  auto sym = jit->lookup(symbol);
  VACC_CHECK(static_cast<bool>(sym)) << "JIT: " << to_string(sym.takeError());
  return std::make_shared<const Kernel>(f.name, reinterpret_cast<Kernel::Fn>(sym->getAddress()),
                                        f.params.size());
}

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

std::string Jit::generator() const {
  return fmt::format("{} {} {} llvm {} vacc {}", impl_->tm->getTargetTriple().str(),
                     impl_->tm->getTargetCPU().str(), impl_->tm->getTargetFeatureString().str(),
                     LLVM_VERSION_STRING, build_id());
}

void Jit::use_disk_cache(const std::string &dir, std::function<void(const std::string &)> note) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (dir.empty() || build_id() == "unknown") {
    impl_->disk.reset();  // without a build id, stale code could not be told apart
  } else {
    impl_->disk.emplace(dir);
  }
  impl_->note =
      note ? std::move(note) : [](const std::string &m) { fmt::print(stderr, "vacc: {}\n", m); };
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
  std::shared_ptr<const Kernel> kernel;
  // The disk cache keys on the structural hash alone: only the first of several structurally
  // different Funcs with one hash (never seen in practice) goes through it.
  if (impl_->disk && bucket.empty()) {
    const KernelCache &disk = *impl_->disk;
    const std::string key = KernelCache::key(f, generator());
    const std::string symbol = "vacc_kernel_" + key.substr(0, 16) + "_" + key.substr(17);
    KernelCache::Entry entry = disk.load(key);
    if (!entry.object) {
      FileLock held = disk.lock(key);  // another process may be compiling it: wait, then look
      if (held.error().empty()) entry = disk.load(key);
      if (!entry.object) {
        if (!entry.problem.empty()) {
          ++impl_->stats.disk_damaged;
          impl_->note(fmt::format("kernel cache entry {} is damaged ({}); compiling {} again",
                                  disk.path(key), entry.problem, f.name));
        }
        std::unique_ptr<llvm::MemoryBuffer> object = impl_->generate(f, symbol);
        ++impl_->stats.compiled;
        const std::string stored =
            disk.store(key, std::string(object->getBufferStart(), object->getBufferSize()));
        if (!stored.empty() && !impl_->disk_write_failed_reported) {
          impl_->disk_write_failed_reported = true;
          impl_->note(
              fmt::format("cannot write the kernel cache ({}); kernels will be compiled "
                          "again next time (set VACC_CACHE_DIR to a writable directory)",
                          stored));
        }
        kernel = impl_->link(f, std::move(object), symbol);
      }
    }
    if (!kernel) {
      ++impl_->stats.disk_hits;
      kernel = impl_->link(f, llvm::MemoryBuffer::getMemBufferCopy(*entry.object, key), symbol);
    }
  } else {
    std::string symbol = "vacc_kernel_" + std::to_string(impl_->stats.compiled);
    kernel = impl_->link(f, impl_->generate(f, symbol), symbol);
    ++impl_->stats.compiled;
  }
  bucket.push_back({f, kernel});
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
