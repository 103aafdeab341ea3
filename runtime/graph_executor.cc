#include "vacc/runtime/graph_executor.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "vacc/isa/assembly.h"
#include "vacc/isa/command.h"
#include "vacc/isa/program.h"
#include "vacc/runtime/program_replay.h"
#include "vacc/runtime/session.h"
#include "vacc/support/align.h"
#include "vacc/support/error.h"
#include "vacc/support/huge_page_buffer.h"

namespace vacc::runtime {

namespace {

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace

int64_t RunProfile::macs(isa::StepTarget where) const {
  int64_t n = 0;
  for (const auto &s : steps)
    if (s.where == where) n += s.macs;
  return n;
}

int64_t RunProfile::executed_macs(isa::StepTarget where) const {
  int64_t n = 0;
  for (const auto &s : steps)
    if (s.where == where) n += s.executed_macs;
  return n;
}

std::optional<uint64_t> RunProfile::cycles() const {
  std::optional<uint64_t> total;
  for (const auto &s : steps)
    if (s.cycles) total = total.value_or(0) + *s.cycles;
  return total;
}

int RunProfile::steps_on(isa::StepTarget where) const {
  int n = 0;
  for (const auto &s : steps) n += s.where == where;
  return n;
}

int RunProfile::programs() const {
  int n = 0;
  for (const auto &s : steps) n += s.where == isa::StepTarget::kAccel && s.program == s.index;
  return n;
}

int RunProfile::transitions() const {
  int n = 0;
  for (size_t i = 1; i < steps.size(); ++i) n += steps[i].where != steps[i - 1].where;
  return n;
}

struct GraphExecutor::Impl {
  const isa::Package &package;
  HostKernels &host;
  driver::Device *device;
  isa::HwConfig config;
  HugePageBuffer arena;  // the activations: streamed through on every run
  std::vector<std::optional<isa::CommandList>> lists;  // per step
  // Per accelerator step: the last step of the device program it starts (itself unless later
  // steps join it); meaningful for the first step of a program.
  std::vector<size_t> program_last;
  bool timed_spans = false;  // the device times each instruction (Device::spans())
  std::unique_ptr<Session> session;
  DeviceBuffer device_arena;
  std::map<int32_t, DeviceBuffer> device_constants;  // tensor index -> uploaded copy

  Impl(const isa::Package &p, HostKernels &h, driver::Device *d, const isa::HwConfig &c)
      : package(p), host(h), device(d), config(c), arena(p.arena_bytes) {
    lists.resize(p.steps.size());
    program_last.resize(p.steps.size());
    uint64_t max_uops = 16, max_insns = 64, constant_bytes = 0;
    uint64_t program_uops = 0, program_insns = 0;
    size_t program_first = 0;
    const uint64_t align = isa::region_alignment(config);
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const isa::PackageStep &s = p.steps[i];
      if (!s.commands) continue;
      isa::CommandList list;
      try {
        list = isa::deserialize(p.blobs.at(*s.commands));
      } catch (const Error &e) {
        fail("step {} ('{}'): its command list is corrupt: {}", i, s.name, e.what());
      }
      isa::check_command_list(list, config);
      if (list.buffers.size() != s.bindings.size())
        fail("step {} ('{}'): {} tensors bound to a command list of {} buffers", i, s.name,
             s.bindings.size(), list.buffers.size());
      // A program's micro-op pool and instruction stream hold all its steps' (each step's
      // boundary adds a few carriers of tokens).
      if (!s.joins_previous) {
        program_first = i;
        program_uops = program_insns = 0;
      }
      program_last[program_first] = i;
      program_uops += list.total_kernel_uops() + 16;
      program_insns += 2 * list.commands.size() + 64;
      max_uops = std::max(max_uops, program_uops);
      max_insns = std::max(max_insns, program_insns);
      for (int32_t t : s.bindings)
        if (p.tensors[t].is_constant() && !device_constants.count(t)) {
          device_constants[t] = {};
          constant_bytes += align_up(std::max<int64_t>(p.tensors[t].bytes(), 1), align);
        }
      lists[i] = std::move(list);
    }
    if (device_constants.empty() && max_insns == 64) return;  // nothing for the accelerator
    if (!device) fail("the package has accelerator steps: run it on a device (--sim or --fpga)");
    const uint64_t bytes = align_up(std::max<int64_t>(p.arena_bytes, 1), align) + constant_bytes +
                           align_up(max_uops * config.uop_bytes(), align) +
                           align_up(max_insns * isa::kInsnBytes, align) + 4 * align;
    session = std::make_unique<Session>(*device, config, bytes, max_uops, max_insns);
    for (size_t i = 0; i < p.steps.size(); ++i)
      if (p.steps[i].joins_previous) timed_spans = device->record_spans(true);
    device_arena = session->allocate(std::max<int64_t>(p.arena_bytes, 1), "the activation arena");
    for (auto &[t, buffer] : device_constants) {
      const isa::PackageTensor &pt = p.tensors[t];
      buffer = session->allocate(std::max<int64_t>(pt.bytes(), 1), pt.name);
      const auto &blob = p.blobs[*pt.blob];
      if (!blob.empty()) session->write(buffer, blob.data(), blob.size());
    }
  }

  const uint8_t *tensor_data(int32_t t) const {
    const isa::PackageTensor &pt = package.tensors[t];
    if (pt.is_constant()) return package.blobs[*pt.blob].data();
    VACC_CHECK(pt.arena_offset >= 0) << "tensor '" << pt.name << "' has no arena slot";
    return arena.data() + pt.arena_offset;
  }
  uint8_t *mutable_data(int32_t t) {
    const isa::PackageTensor &pt = package.tensors[t];
    VACC_CHECK(!pt.is_constant() && pt.arena_offset >= 0)
        << "step output '" << pt.name << "' has no arena slot";
    return arena.data() + pt.arena_offset;
  }

  // Records accelerator steps first..last as one device program into `queue`; `upload`: also
  // copy their inputs from the host arena to the device (what a run does). Returns how each
  // step's weights meet the step before (ProgramReplay::boundaries()).
  std::vector<std::string> record_program(size_t first, size_t last, CommandQueue &queue,
                                          bool upload) {
    ProgramReplay program(queue, config);
    std::set<int32_t> written;  // tensors an earlier step of the program stores
    for (size_t index = first; index <= last; ++index) {
      const isa::PackageStep &s = package.steps[index];
      const isa::CommandList &list = *lists[index];
      std::vector<uint64_t> elements;
      std::vector<ProgramReplay::Source> sources;
      for (size_t b = 0; b < s.bindings.size(); ++b) {
        const int32_t t = s.bindings[b];
        const isa::PackageTensor &pt = package.tensors[t];
        const isa::MemId mem = list.buffers[b].mem;
        const uint64_t tile = config.tile_bytes(mem);
        bool from_previous = false;
        if (index > first)
          for (int32_t o : package.steps[index - 1].outputs) from_previous |= o == t;
        using Source = ProgramReplay::Source;
        sources.push_back(pt.is_constant() ? Source::kConstant
                          : from_previous  ? Source::kPrevious
                                           : Source::kEarlier);
        if (pt.is_constant()) {
          elements.push_back(session->element_of(device_constants.at(t), mem));
          continue;
        }
        const uint64_t at = device_arena.offset + pt.arena_offset;
        if (at % tile != 0)
          fail(
              "step {} ('{}'): tensor '{}' at arena offset {} is not aligned to {}-byte {} "
              "elements: recompile the package",
              index, s.name, pt.name, pt.arena_offset, tile, isa::mem_id_name(mem));
        elements.push_back(at / tile);
        bool is_output = false;
        for (int32_t o : s.outputs) is_output |= o == t;
        // What the host or the model gave: an earlier step of the program made the rest.
        if (upload && !is_output && !written.count(t))
          session->write(device_arena, arena.data() + pt.arena_offset, pt.bytes(), pt.arena_offset);
      }
      program.add(list, elements, sources);
      for (int32_t o : s.outputs)
        if (o >= 0) written.insert(o);
    }
    return program.boundaries();
  }

  // Runs accelerator steps first..last as one device program (one step: its own program).
  // `profs` holds their profiles, filled in here with what the device counted.
  void run_accel(size_t first, size_t last, std::vector<StepProfile> &profs) {
    CommandQueue queue = session->queue();
    record_program(first, last, queue, /*upload=*/true);
    driver::Counters counters;
    std::vector<size_t> starts;
    try {
      counters = session->run(queue, 600, &starts);
    } catch (const Error &e) {  // the device names the instruction; this names the layer
      size_t at = first;
      std::smatch m;
      const std::string what = e.what();
      if (std::regex_search(what, m, std::regex("instruction ([0-9]+)"))) {
        const size_t insn = std::stoull(m[1].str());
        for (size_t k = 1; k < starts.size(); ++k)
          if (insn >= starts[k]) at = first + k;
      }
      const isa::PackageStep &s = package.steps[at];
      if (first == last) fail("step {} ('{}', {}): {}", at, s.name, s.op, what);
      fail(
          "step {} ('{}', {}): {} (steps {}..{} run as one program; --program-per-layer runs "
          "each alone)",
          at, s.name, s.op, what, first, last);
    }
    // In step order: where a later step reuses an earlier one's memory, its bytes come last.
    for (size_t index = first; index <= last; ++index)
      for (int32_t o : package.steps[index].outputs) {
        if (o < 0) continue;
        const isa::PackageTensor &pt = package.tensors[o];
        session->read(device_arena, arena.data() + pt.arena_offset, pt.bytes(), pt.arena_offset);
      }
    const auto cycles = counters.find("cycles");
    StepProfile &head = profs[0];
    // What the device executes: also the work a tiling repeats (a fused pool's overlapping
    // windows), which the package's count from the layer's shapes does not see. The device's
    // counter where it counts one step; each step's GEMMs counted where it counts several.
    if (auto it = counters.find("macs"); first == last && it != counters.end() && it->second)
      head.executed_macs = static_cast<int64_t>(it->second);
    if (first != last)
      for (size_t k = 0; k < profs.size(); ++k)
        profs[k].executed_macs = static_cast<int64_t>(lists[first + k]->gemm_macs(config));
    if (cycles != counters.end()) head.cycles = cycles->second;
    head.counters = std::move(counters);
    if (first == last || !head.cycles || !timed_spans) return;
    const std::vector<driver::InsnSpan> spans = device->spans();
    if (spans.empty()) return;
    const uint64_t total = *head.cycles;
    uint64_t done = 0;  // when the steps so far had all finished
    for (size_t k = 0; k < profs.size(); ++k) {
      const size_t from = starts.at(k);
      const size_t to =
          std::min(k + 1 < starts.size() ? starts[k + 1] : spans.size(), spans.size());
      uint64_t begin = UINT64_MAX, end = done;
      for (size_t i = from; i < to; ++i) {
        begin = std::min(begin, spans[i].start);
        end = std::max(end, spans[i].end);
      }
      if (k + 1 == profs.size()) end = std::max(end, total);  // FINISH and the last drain
      if (k > 0) profs[k].overlap_cycles = begin < done ? done - begin : 0;
      profs[k].cycles = end - done;
      done = end;
    }
  }

  void run_host(size_t index) {
    const isa::PackageStep &s = package.steps[index];
    std::vector<const uint8_t *> ins;
    std::vector<uint8_t *> outs;
    for (int32_t t : s.inputs) ins.push_back(t < 0 ? nullptr : tensor_data(t));
    for (int32_t t : s.outputs) outs.push_back(t < 0 ? nullptr : mutable_data(t));
    host.run(index, ins, outs);
  }
};

GraphExecutor::GraphExecutor(const isa::Package &package, HostKernels &host, driver::Device *device,
                             const isa::HwConfig &config)
    : impl_(std::make_unique<Impl>(package, host, device, config)) {}

GraphExecutor::~GraphExecutor() = default;

std::vector<ProgramListing> GraphExecutor::program_listings() const {
  const isa::Package &p = impl_->package;
  std::vector<ProgramListing> out;
  for (size_t first = 0; first < p.steps.size(); ++first) {
    if (!impl_->lists[first] || p.steps[first].joins_previous) continue;
    ProgramListing listing;
    listing.first = first;
    listing.last = impl_->program_last[first];
    CommandQueue queue = impl_->session->queue();
    const std::vector<std::string> boundaries =
        impl_->record_program(listing.first, listing.last, queue, /*upload=*/false);
    const RecordedStream stream = queue.finish();
    listing.instructions = stream.insns.size();
    listing.text = fmt::format(
        "# one device program: steps {}..{}, {} instructions, {} micro-ops in its pool\n", first,
        listing.last, stream.insns.size(), stream.uop_pool.size());
    size_t next = 0;  // the next step boundary
    for (size_t i = 0; i < stream.insns.size(); ++i) {
      while (next < stream.step_starts.size() && stream.step_starts[next] == i) {
        const isa::PackageStep &s = p.steps[first + next];
        listing.text += fmt::format("# step {} '{}' ({})\n", first + next, s.name, s.op);
        if (!boundaries.at(next).empty()) listing.text += "#   " + boundaries[next] + "\n";
        ++next;
      }
      listing.text +=
          fmt::format("{:6}  {}\n", i, isa::format_insn(impl_->config, stream.insns[i]));
    }
    out.push_back(std::move(listing));
  }
  return out;
}

std::vector<HostTensor> GraphExecutor::run(const std::vector<HostTensor> &inputs,
                                           RunProfile *profile, const StepObserver &observer) {
  using Clock = std::chrono::steady_clock;
  const isa::Package &p = impl_->package;
  const auto start = Clock::now();
  if (inputs.size() != p.inputs.size())
    fail("the model takes {} input(s), got {}", p.inputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const isa::PackageTensor &t = p.tensors[p.inputs[i]];
    if (inputs[i].dtype != t.dtype || int64_t(inputs[i].data.size()) != t.bytes())
      fail("input {} ('{}') needs {} {}, got {} {}", i, t.name, t.dtype, shape_text(t.shape),
           inputs[i].dtype, shape_text(inputs[i].shape));
    std::memcpy(impl_->mutable_data(p.inputs[i]), inputs[i].data.data(), t.bytes());
  }
  if (profile) profile->steps.clear();
  auto profile_of = [&](size_t i) {
    const isa::PackageStep &s = p.steps[i];
    StepProfile prof;
    prof.index = prof.program = i;
    prof.op = s.op;
    prof.name = s.name;
    prof.macs = s.model_macs;
    prof.executed_macs = s.macs;
    prof.note = s.note;
    prof.schedule = s.schedule;
    return prof;
  };
  auto observe = [&](size_t i) {
    if (!observer) return;
    std::vector<const uint8_t *> outs;
    for (int32_t o : p.steps[i].outputs) outs.push_back(o < 0 ? nullptr : impl_->tensor_data(o));
    observer(i, outs);
  };
  for (size_t i = 0; i < p.steps.size();) {
    const auto t0 = Clock::now();
    std::vector<StepProfile> profs{profile_of(i)};
    if (impl_->lists[i]) {
      const size_t last = observer ? i : impl_->program_last[i];
      for (size_t k = i + 1; k <= last; ++k) profs.push_back(profile_of(k));
      for (StepProfile &prof : profs) {
        prof.where = isa::StepTarget::kAccel;
        prof.program = i;
      }
      impl_->run_accel(i, last, profs);
    } else {
      profs[0].where = isa::StepTarget::kCpu;
      impl_->run_host(i);
    }
    // Wall time: a program's steps share it.
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (StepProfile &prof : profs) {
      prof.seconds = seconds / static_cast<double>(profs.size());
      observe(prof.index);
      ++i;
      if (profile) profile->steps.push_back(std::move(prof));
    }
  }
  std::vector<HostTensor> outputs;
  for (int32_t o : p.outputs) {
    const isa::PackageTensor &t = p.tensors[o];
    HostTensor h;
    h.dtype = t.dtype;
    h.shape = t.shape;
    const uint8_t *d = impl_->tensor_data(o);
    h.data.assign(d, d + t.bytes());
    outputs.push_back(std::move(h));
  }
  if (profile) profile->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return outputs;
}

}  // namespace vacc::runtime
