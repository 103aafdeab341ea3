#include "vacc/remote/protocol.h"

#include <fmt/format.h>

#include <limits>

#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::remote {

v1::Tensor encode_tensor(const runtime::HostTensor &tensor) {
  v1::Tensor t;
  t.set_dtype(tensor.dtype);
  for (int64_t d : tensor.shape) t.add_shape(d);
  t.set_data(tensor.data.data(), tensor.data.size());
  return t;
}

runtime::HostTensor decode_tensor(const v1::Tensor &tensor, const std::string &what) {
  runtime::HostTensor t;
  t.dtype = tensor.dtype();
  int64_t elements = 1;
  for (int64_t d : tensor.shape()) {
    if (d < 0) fail("{}: negative dimension {}", what, d);
    if (d > 0 && elements > std::numeric_limits<int64_t>::max() / d)
      fail("{}: the shape's element count overflows", what);
    elements *= d;
    t.shape.push_back(d);
  }
  const int64_t size = isa::package_dtype_size(t.dtype);  // throws for an unknown dtype
  if (elements > std::numeric_limits<int64_t>::max() / size ||
      static_cast<uint64_t>(elements * size) != tensor.data().size())
    fail("{}: {} bytes of data for a {} tensor of {} elements", what, tensor.data().size(), t.dtype,
         elements);
  t.data.assign(tensor.data().begin(), tensor.data().end());
  return t;
}

std::string read_token_file(const std::string &path) {
  const std::string text = read_file(path, "token file");
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos)
    fail(
        "{}: the token file is empty: put a shared secret in it (e.g. `head -c 32 /dev/urandom "
        "| base64 > {}`)",
        path, path);
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::string version_mismatch(uint32_t theirs, const std::string &who) {
  if (theirs == kProtocolVersion) return "";
  return fmt::format(
      "{} speaks vacc remote protocol version {}, this vacc speaks version {}: run the same "
      "vacc version on the host and on the board",
      who, theirs, kProtocolVersion);
}

v1::RunRequest encode_run_request(const isa::Package &package,
                                  const std::vector<runtime::HostTensor> &inputs) {
  v1::RunRequest r;
  r.set_protocol_version(kProtocolVersion);
  const std::vector<uint8_t> bytes = isa::encode_package(package);
  r.set_package(bytes.data(), bytes.size());
  for (const auto &t : inputs) *r.add_inputs() = encode_tensor(t);
  return r;
}

RunJob decode_run_request(const v1::RunRequest &request, const isa::HwConfig &config,
                          const std::string &peer) {
  if (std::string m = version_mismatch(request.protocol_version(), "the client"); !m.empty())
    fail("{}", m);
  const std::string name = fmt::format("the package from {}", peer);
  RunJob job;
  job.package = isa::parse_package(request.package(), name);
  job.package.check_config(config, name);
  const isa::Package &p = job.package;
  if (static_cast<size_t>(request.inputs_size()) != p.inputs.size())
    fail("{}: {} inputs sent, the model has {}", name, request.inputs_size(), p.inputs.size());
  for (int i = 0; i < request.inputs_size(); ++i) {
    const isa::PackageTensor &want = p.tensors[p.inputs[i]];
    const std::string what = fmt::format("input {} ('{}')", i, want.name);
    runtime::HostTensor t = decode_tensor(request.inputs(i), what);
    if (t.dtype != want.dtype || static_cast<int64_t>(t.data.size()) != want.bytes())
      fail("{}: got {} of {} bytes, the model takes {} of {} bytes", what, t.dtype, t.data.size(),
           want.dtype, want.bytes());
    job.inputs.push_back(std::move(t));
  }
  return job;
}

v1::RunReply encode_run_reply(const RunResult &result) {
  v1::RunReply r;
  r.set_protocol_version(kProtocolVersion);
  for (const auto &t : result.outputs) *r.add_outputs() = encode_tensor(t);
  for (const auto &s : result.profile.steps) {
    v1::StepProfile *p = r.add_steps();
    p->set_index(s.index);
    p->set_op(s.op);
    p->set_name(s.name);
    p->set_where(isa::step_target_name(s.where));
    p->set_macs(s.macs);
    p->set_has_cycles(s.cycles.has_value());
    p->set_cycles(s.cycles.value_or(0));
    p->set_seconds(s.seconds);
    for (const auto &[k, v] : s.counters) (*p->mutable_counters())[k] = v;
    p->set_note(s.note);
    p->set_program(s.program);
    p->set_has_overlap(s.overlap_cycles.has_value());
    p->set_overlap_cycles(s.overlap_cycles.value_or(0));
    p->set_executed_macs(s.executed_macs);
  }
  r.set_seconds(result.profile.seconds);
  r.set_queue_seconds(result.queue_seconds);
  r.set_engine(result.engine);
  r.set_config_name(result.config_name);
  r.set_cpu(result.cpu);
  return r;
}

RunResult decode_run_reply(const v1::RunReply &reply, const std::string &server) {
  if (std::string m = version_mismatch(reply.protocol_version(), server); !m.empty()) fail("{}", m);
  RunResult r;
  for (int i = 0; i < reply.outputs_size(); ++i)
    r.outputs.push_back(
        decode_tensor(reply.outputs(i), fmt::format("output {} from {}", i, server)));
  for (const v1::StepProfile &p : reply.steps()) {
    runtime::StepProfile s;
    s.index = p.index();
    s.op = p.op();
    s.name = p.name();
    if (p.where() == isa::step_target_name(isa::StepTarget::kAccel))
      s.where = isa::StepTarget::kAccel;
    else if (p.where() == isa::step_target_name(isa::StepTarget::kCpu))
      s.where = isa::StepTarget::kCpu;
    else
      fail("{}: step {} runs on '{}', neither cpu nor accel", server, p.index(), p.where());
    s.macs = p.macs();
    if (p.has_cycles()) s.cycles = p.cycles();
    s.seconds = p.seconds();
    for (const auto &[k, v] : p.counters()) s.counters[k] = v;
    s.note = p.note();
    s.program = p.program();
    if (s.program > s.index)
      fail("{}: step {} runs in the program of a later step ({})", server, p.index(), p.program());
    if (p.has_overlap()) s.overlap_cycles = p.overlap_cycles();
    s.executed_macs = p.executed_macs();
    r.profile.steps.push_back(std::move(s));
  }
  r.profile.seconds = reply.seconds();
  r.queue_seconds = reply.queue_seconds();
  r.engine = reply.engine();
  r.config_name = reply.config_name();
  r.cpu = reply.cpu();
  return r;
}

}  // namespace vacc::remote
