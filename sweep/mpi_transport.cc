#include "vacc/sweep/mpi_transport.h"

#include <mpi.h>

#include <cstdlib>
#include <deque>

#include "vacc/support/error.h"

namespace vacc::sweep {

namespace {

enum Tag : int { kRequest = 1, kTask = 2, kNoMore = 3, kOutcome = 4, kGoodbye = 5 };

void send(const std::string &text, int to, Tag tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

// A waiting message, received; nullopt when none is waiting.
struct Message {
  int from = 0, tag = 0;
  std::string text;
};
std::optional<Message> receive_any(int from) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m;
  m.from = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.text.resize(static_cast<size_t>(count));
  MPI_Recv(m.text.data(), count, MPI_CHAR, m.from, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
    while (auto m = receive_any(MPI_ANY_SOURCE)) {
      switch (m->tag) {
        case kRequest:
          if (auto t = local_.next()) send(to_json(*t).dump(), m->from, kTask);
          else send("", m->from, kNoMore);
          break;
        case kOutcome: local_.done(outcome_from_json(nlohmann::json::parse(m->text))); break;
        case kGoodbye: ++goodbyes_; break;
        default: VACC_CHECK(false) << "unexpected MPI tag " << m->tag;
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
      if (m->tag == kTask) inbox_.push_back(task_from_json(nlohmann::json::parse(m->text)));
      else if (m->tag == kNoMore) no_more_ = true;
      else VACC_CHECK(false) << "unexpected MPI tag " << m->tag;
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
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::unique_ptr<TaskSource> serve_ranks(TaskSource &local, const MpiSession &session) {
  return std::make_unique<Rank0Source>(local, session.size());
}

std::unique_ptr<TaskSource> ask_rank0(const MpiSession &) {
  return std::make_unique<AgentSource>();
}

void say_goodbye(const MpiSession &) { send("", 0, kGoodbye); }

}  // namespace vacc::sweep
