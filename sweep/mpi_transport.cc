#include "vacc/sweep/mpi_transport.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <thread>

#include "vacc/support/error.h"

namespace vacc::sweep {

namespace {

enum Tag : int { kRequest = 1, kTask = 2, kNoMore = 3, kOutcome = 4, kGoodbye = 5 };

// The MPI calls, from libvacc_mpi.so (mpi_shim.c) beside the executable.
struct MpiApi {
  int (*init)(int *rank, int *size);
  void (*finalize)();
  void (*abort)(int code);
  int (*send)(const char *data, int count, int to, int tag);
  int (*probe)(int from, int *source, int *tag, int *count);
  int (*recv)(char *data, int count, int source, int tag);
};

const MpiApi &mpi() {
  static const MpiApi api = [] {
    const std::string path =
        (std::filesystem::path(self_executable()).parent_path() / "libvacc_mpi.so").string();
    void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      fail(
          "an MPI launcher started vacc sweep, but {} cannot be loaded ({}): it is built with "
          "vacc (target vacc_mpi) and needs Debian's Open MPI (openmpi-bin, libopenmpi-dev)",
          path, dlerror());
    MpiApi a;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) fail("{}: no symbol {}", path, name);
    };
    get(a.init, "vacc_mpi_init");
    get(a.finalize, "vacc_mpi_finalize");
    get(a.abort, "vacc_mpi_abort");
    get(a.send, "vacc_mpi_send");
    get(a.probe, "vacc_mpi_probe");
    get(a.recv, "vacc_mpi_recv");
    return a;
  }();
  return api;
}

void send(const std::string &text, int to, Tag tag) {
  VACC_CHECK(mpi().send(text.data(), static_cast<int>(text.size()), to, tag) == 0)
      << "MPI_Send to rank " << to << " failed";
}

// A waiting message, received; nullopt when none is waiting.
struct Message {
  int from = 0, tag = 0;
  std::string text;
};
std::optional<Message> receive_any(int from) {
  Message m;
  int count = 0;
  if (!mpi().probe(from, &m.from, &m.tag, &count)) return std::nullopt;
  m.text.resize(static_cast<size_t>(count));
  VACC_CHECK(mpi().recv(m.text.data(), count, m.from, m.tag) == 0)
      << "MPI_Recv from rank " << m.from << " failed";
  return m;
}

class Rank0Source : public TaskSource {
 public:
  Rank0Source(TaskSource &local, int ranks) : local_(local), others_(ranks - 1) {}

  std::optional<Task> next() override { return local_.next(); }
  void done(const TaskOutcome &o) override { local_.done(o); }
  bool exhausted() override { return local_.exhausted() && goodbyes_ == others_; }

  void poll() override {
    local_.poll();
    while (auto m = receive_any(-1)) {
      switch (m->tag) {
        case kRequest:
          if (auto t = local_.next())
            send(to_json(*t).dump(), m->from, kTask);
          else
            send("", m->from, kNoMore);
          break;
        case kOutcome:
          local_.done(outcome_from_json(nlohmann::json::parse(m->text)));
          break;
        case kGoodbye:
          ++goodbyes_;
          break;
        default:
          VACC_CHECK(false) << "unexpected MPI tag " << m->tag;
      }
    }
  }

 private:
  TaskSource &local_;
  int others_, goodbyes_ = 0;
};

class AgentSource : public TaskSource {
 public:
  std::optional<Task> next() override {
    if (!inbox_.empty()) {
      Task t = std::move(inbox_.front());
      inbox_.pop_front();
      return t;
    }
    if (!asked_ && !no_more_) {
      send("", 0, kRequest);
      asked_ = true;
    }
    return std::nullopt;
  }
  void done(const TaskOutcome &o) override { send(to_json(o).dump(), 0, kOutcome); }
  bool exhausted() override { return no_more_ && inbox_.empty(); }
  void poll() override {
    while (auto m = receive_any(0)) {
      asked_ = false;
      if (m->tag == kTask)
        inbox_.push_back(task_from_json(nlohmann::json::parse(m->text)));
      else if (m->tag == kNoMore)
        no_more_ = true;
      else
        VACC_CHECK(false) << "unexpected MPI tag " << m->tag;
    }
  }

 private:
  std::deque<Task> inbox_;
  bool asked_ = false, no_more_ = false;
};

}  // namespace

bool launched_by_mpi() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

MpiSession::MpiSession() {
  if (mpi().init(&rank_, &size_) != 0) fail("MPI_Init failed");
}

MpiSession::~MpiSession() {
  mpi().finalize();
}

void MpiSession::abort(int code) const {
  mpi().abort(code);
  std::_Exit(code);
}

std::unique_ptr<TaskSource> serve_ranks(TaskSource &local, const MpiSession &session) {
  return std::make_unique<Rank0Source>(local, session.size());
}

std::unique_ptr<TaskSource> ask_rank0(const MpiSession &) {
  return std::make_unique<AgentSource>();
}

void say_goodbye(const MpiSession &) {
  send("", 0, kGoodbye);
}

void work_for_rank0(int workers, const std::string &executable, const std::string &log_dir,
                    const std::string &log_prefix, const MpiSession &session) {
  {
    WorkerPool pool(workers, executable, log_dir, log_prefix);
    pool.run(*ask_rank0(session));
  }
  say_goodbye(session);
}

class RankBatches::BatchSource : public TaskSource {
 public:
  BatchSource(TaskSource &batch, RankBatches &ranks) : batch_(batch), ranks_(ranks) {}
  std::optional<Task> next() override { return batch_.next(); }
  void done(const TaskOutcome &o) override { batch_.done(o); }
  bool exhausted() override { return batch_.exhausted() && away_ == 0; }
  void poll() override {
    batch_.poll();
    while (!ranks_.waiting_.empty()) {
      std::optional<Task> t = batch_.next();
      if (!t) break;
      hand_out(*t, ranks_.waiting_.back());
      ranks_.waiting_.pop_back();
    }
    while (auto m = receive_any(-1)) {
      switch (m->tag) {
        case kRequest:
          if (auto t = batch_.next())
            hand_out(*t, m->from);
          else
            ranks_.waiting_.push_back(m->from);
          break;
        case kOutcome:
          batch_.done(outcome_from_json(nlohmann::json::parse(m->text)));
          --away_;
          break;
        default:
          VACC_CHECK(false) << "unexpected MPI tag " << m->tag << " from rank " << m->from
                            << " during a batch";
      }
    }
  }

 private:
  void hand_out(const Task &t, int rank) {
    send(to_json(t).dump(), rank, kTask);
    ++away_;
    ++ranks_.handed_out_;
  }
  TaskSource &batch_;
  RankBatches &ranks_;
  int away_ = 0;  // tasks another rank is running
};

RankBatches::RankBatches(const MpiSession &session) : others_(session.size() - 1) {}

std::unique_ptr<TaskSource> RankBatches::serve(TaskSource &batch) {
  VACC_CHECK(!closed_) << "a batch after close()";
  return std::make_unique<BatchSource>(batch, *this);
}

void RankBatches::close() {
  closed_ = true;
  for (int rank : waiting_) send("", rank, kNoMore);
  waiting_.clear();
  while (goodbyes_ < others_) {
    std::optional<Message> m = receive_any(-1);
    if (!m) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    if (m->tag == kRequest)
      send("", m->from, kNoMore);
    else if (m->tag == kGoodbye)
      ++goodbyes_;
    else
      VACC_CHECK(false) << "unexpected MPI tag " << m->tag << " from rank " << m->from
                        << " after the last batch";
  }
}

}  // namespace vacc::sweep
