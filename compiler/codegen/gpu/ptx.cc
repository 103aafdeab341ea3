// compile: plan_kernels, then every kernel lowered into one NVPTX module, optimized with the
// O3 pipeline for the target GPU and printed as PTX by LLVM's NVPTX backend.
#include "vacc/codegen/gpu/ptx.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>
#include <unordered_map>

#include "nvptx_lowering.h"
#include "vacc/codegen/llvm/lowering.h"
#include "vacc/support/error.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"

namespace vacc::codegen::gpu {
namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

std::unique_ptr<llvm::TargetMachine> target_machine(const Target &target) {
  static bool init = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)init;
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  VACC_CHECK(t) << "LLVM has no NVPTX target: " << err;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(t->createMCSubtargetInfo(kTriple, "", ""));
  if (!sti || !sti->isCPUStringValid(target.arch)) {
    fail("GPU backend: LLVM 14's NVPTX target does not know '{}' (it knows up to sm_86)",
         target.arch);
  }
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(kTriple, target.arch, "", llvm::TargetOptions(), llvm::None,
                             llvm::None, llvm::CodeGenOpt::Aggressive));
  VACC_CHECK(tm) << "no NVPTX target machine for " << target.arch;
  return tm;
}

std::unique_ptr<llvm::Module> lower_module(const Module &plan, llvm::LLVMContext &ctx,
                                           llvm::TargetMachine *tm, bool optimize_ir) {
  auto m = std::make_unique<llvm::Module>(plan.name, ctx);
  m->setTargetTriple(kTriple);
  m->setDataLayout(tm->createDataLayout());
  for (const Kernel &k : plan.kernels) lower_kernel(k, ctx, *m);
  if (optimize_ir) optimize_module(*m, tm, /*vectorize=*/false);
  return m;
}

std::string emit_ptx(llvm::Module &m, llvm::TargetMachine *tm) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  bool failed = tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile);
  VACC_CHECK(!failed) << "the NVPTX target cannot emit PTX";
  pm.run(m);
  return std::string(ptx.str());
}

struct Cache {
  std::mutex mu;
  struct Entry {
    tir::Func func;
    std::string arch;
    Module module;
  };
  std::unordered_map<uint64_t, std::vector<Entry>> entries;
};

}  // namespace

Module compile(const tir::Func &f, const Target &target) {
  static Cache cache;
  uint64_t h = tir::structural_hash(f);
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    for (const Cache::Entry &e : cache.entries[h]) {
      if (e.arch == target.arch && tir::structural_equal(e.func, f)) {
        // The cached module's buffers are the first Func's: rebind them to f's, in the module
        // and in its kernels' parameters and bodies, so the module reads as compiled from f.
        Module m = e.module;
        m.name = f.name;
        std::vector<std::pair<tir::Buffer, tir::Buffer>> rebind;
        for (size_t i = 0; i < f.params.size(); ++i) {
          rebind.emplace_back(m.buffers[i], f.params[i]);
          m.buffers[i] = f.params[i];
        }
        for (Kernel &k : m.kernels) {
          k.func.body = tir::replace_buffers(k.func.body, rebind);
          for (size_t j = 0; j < k.func.params.size(); ++j)
            k.func.params[j] = m.buffers[static_cast<size_t>(k.args[j])];
        }
        return m;
      }
    }
  }
  Module m = plan_kernels(f);
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(target);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = lower_module(m, ctx, tm.get(), true);
  m.ptx = emit_ptx(*lm, tm.get());
  m.arch = target.arch;
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.entries[h].push_back({f, target.arch, m});
  return m;
}

std::string nvptx_llvm_ir(const tir::Func &f, bool optimize_ir, const Target &target) {
  Module m = plan_kernels(f);
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(target);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = lower_module(m, ctx, tm.get(), optimize_ir);
  std::string s;
  llvm::raw_string_ostream os(s);
  lm->print(os, nullptr);
  return os.str();
}

}  // namespace vacc::codegen::gpu
