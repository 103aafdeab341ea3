// `vacc tune`'s parts: the trial log (write, read, resume, and one error per malformed field),
// the tuning database, the learned cost model (it ranks held-out trials better than chance),
// tune -> compile (the package takes the logged best, and its cycles equal the log's), and the
// graph's folding and fusion choices (every form bit-exact; taken by tuned cycles, guarded).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <variant>

#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/isa/command.h"
#include "vacc/isa/config.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"
#include "vacc/tune/candidates.h"
#include "vacc/tune/cost_model.h"
#include "vacc/tune/features.h"
#include "vacc/tune/measure.h"
#include "vacc/tune/search_strategy.h"
#include "vacc/tune/tuner.h"
#include "vacc/tuning/tuning_db.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;

isa::HwConfig bundled(const std::string &name) {
  return isa::load_config(std::string(VACC_CONFIG_DIR_FOR_TESTS) + "/" + name + ".yaml");
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("vacc-tune-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

lower::Layer conv_layer(const isa::HwConfig &c, int64_t blocks, int64_t size) {
  lower::Conv2dParams p;
  p.in_channels = blocks * c.block_in;
  p.out_channels = blocks * c.block_out;
  p.height = p.width = size;
  p.requant.shift = 8;
  return {"conv", p};
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(TuningLog, WritesReadsAndResumes) {
  const isa::HwConfig c = bundled("small");
  TempDir dir;
  const std::string log = (dir.path / "tune.log").string();
  const std::vector<tune::TuneTask> tasks = tune::group_tasks(
      {conv_layer(c, 2, 8), conv_layer(c, 2, 8), conv_layer(c, 1, 6)});
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].weight, 2);
  tune::TuneOptions o;
  o.trials = 5;
  o.strategy = "random";
  o.log_path = log;
  tune::LocalMeasurer m;
  const tune::TuneReport first = tune::tune(c, tasks, o, m);
  EXPECT_EQ(first.measured, 10);
  const std::vector<tuning::Trial> logged = tuning::read_log(log);
  ASSERT_EQ(logged.size(), 10u);
  for (size_t i = 0; i < logged.size(); ++i) {
    EXPECT_EQ(tuning::to_json(logged[i]).dump(), tuning::to_json(first.trials[i]).dump());
    EXPECT_EQ(logged[i].hw, tuning::hw_key(c));
  }
  // The heuristic's point is each task's first trial, so no task ends worse than it.
  for (const auto &t : first.tasks) {
    ASSERT_TRUE(t.heuristic && t.best);
    EXPECT_LE(*t.best->cycles, *t.heuristic->cycles);
  }
  // Resumed with a larger budget: only the difference is measured, nothing twice.
  o.trials = 8;
  const tune::TuneReport second = tune::tune(c, tasks, o, m);
  EXPECT_EQ(second.measured, 6);
  EXPECT_EQ(second.tasks[0].resumed, 5);
  const std::vector<tuning::Trial> all = tuning::read_log(log);
  ASSERT_EQ(all.size(), 16u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto &t : all)
    EXPECT_TRUE(seen.insert({t.workload, lower::describe(t.schedule)}).second)
        << "measured twice: " << lower::describe(t.schedule);
  // A measured trial's cycles are the perf engine's for that schedule, measured again.
  const tuning::Trial again = tune::measure(c, tasks[0].layer, all[3].schedule);
  EXPECT_EQ(again.cycles, all[3].cycles);
}

// The model strategy draws and ranks its candidates among those estimated to need at most 4x
// the instructions of the best point so far (the heuristic's before one is measured; the
// dearest to lower and simulate are the tiny tiles), where most of the space lies beyond.
TEST(Tune, ModelStrategyStaysNearTheBestsInstructions) {
  const isa::HwConfig c = bundled("small");
  const lower::Layer layer = conv_layer(c, 2, 56);
  const tune::Candidates cand = tune::enumerate_candidates(c, layer, 2, false);
  ASSERT_TRUE(cand.heuristic);
  std::vector<std::vector<float>> features;
  for (size_t p = 0; p < cand.size(); ++p)
    features.push_back(tune::schedule_features(c, layer, cand.schedule(p)));
  const float bound = features[*cand.heuristic][tune::kInstructionsFeature] + 2;
  size_t far = 0;
  for (const auto &f : features) far += f[tune::kInstructionsFeature] > bound;
  ASSERT_GT(far, cand.size() / 2) << "a space where a uniform draw would mostly land far";
  const tune::CostModel model;  // untrained
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const std::unique_ptr<tune::SearchStrategy> s =
        tune::make_strategy("model", cand, seed, &features, &model);
    const std::vector<size_t> first = s->propose(16);
    ASSERT_EQ(first.size(), 16u);
    EXPECT_EQ(first[0], *cand.heuristic);
    for (size_t p : first)
      EXPECT_LE(features[p][tune::kInstructionsFeature], bound)
          << lower::describe(cand.schedule(p));
  }
  // A model that ranks the most instructions first is held to the bound too, and the bound
  // follows the best point: once a point far beyond it is the best, candidates near that one
  // are proposed.
  tune::CostModel eager;
  {
    std::vector<float> y;
    for (const auto &f : features) y.push_back(-f[tune::kInstructionsFeature]);
    eager.fit(features, y);
  }
  const std::unique_ptr<tune::SearchStrategy> s =
      tune::make_strategy("model", cand, 1, &features, &eager);
  ASSERT_EQ(s->propose(1), std::vector<size_t>{*cand.heuristic});
  s->observe(*cand.heuristic, 1000);
  auto most = [&](const std::vector<size_t> &ps) {
    float m = -HUGE_VALF;
    for (size_t p : ps) m = std::max(m, features[p][tune::kInstructionsFeature]);
    return m;
  };
  const std::vector<size_t> ranked = s->propose(8);
  ASSERT_EQ(ranked.size(), 8u);
  EXPECT_LE(most(ranked), bound);
  EXPECT_GT(most(ranked), features[*cand.heuristic][tune::kInstructionsFeature]);
  std::optional<size_t> next_best;
  for (size_t p = 0; p < cand.size() && !next_best; ++p) {
    const float f = features[p][tune::kInstructionsFeature];
    if (f > bound && f <= bound + 2) next_best = p;
  }
  ASSERT_TRUE(next_best);
  s->observe(*next_best, 10);
  const std::vector<size_t> further = s->propose(8);
  EXPECT_GT(most(further), bound);
  EXPECT_LE(most(further), features[*next_best][tune::kInstructionsFeature] + 2);

  // The estimate orders real programs: the heuristic's against a candidate far beyond the bound.
  size_t farthest = *cand.heuristic;
  for (size_t p = 0; p < cand.size(); ++p)
    if (features[p][tune::kInstructionsFeature] > features[farthest][tune::kInstructionsFeature])
      farthest = p;
  auto instructions = [&](size_t p) {
    lower::LowerOptions lo;
    lo.schedule = cand.schedule(p);
    lo.verify = false;
    const isa::CommandList l = lower::lower(c, layer, lo).commands;
    return l.count_dma() + l.count_gemm() + l.count_alu();
  };
  EXPECT_GT(instructions(farthest), 4 * instructions(*cand.heuristic));
}

// Tails (TuneOptions::tails): the searched space without them keeps only dividing tiles; with
// them it is a superset, so an exhaustive search with tails ends no slower, and on a layer
// whose 7 rows and columns only 1 and 7 divide, it measures tail points.
TEST(Tune, TailsWidenTheSearchedSpace) {
  const isa::HwConfig c = bundled("small");
  const lower::Layer layer = conv_layer(c, 2, 7);
  const tune::Candidates plain = tune::enumerate_candidates(c, layer, 2, false);
  const tune::Candidates tails = tune::enumerate_candidates(c, layer, 2, true);
  auto tail_points = [&](const tune::Candidates &cand) {
    size_t n = 0;
    for (size_t i = 0; i < cand.size(); ++i) {
      const lower::AccelSchedule s = cand.schedule(i);
      n += 7 % s.tile_h != 0 || 7 % s.tile_w != 0;
    }
    return n;
  };
  EXPECT_EQ(tail_points(plain), 0u);
  EXPECT_GT(tail_points(tails), 0u);
  EXPECT_EQ(tails.size() - tail_points(tails), plain.size());
  ASSERT_TRUE(plain.heuristic && tails.heuristic);
  EXPECT_EQ(lower::describe(plain.schedule(*plain.heuristic)),
            lower::describe(tails.schedule(*tails.heuristic)));
  const std::vector<tune::TuneTask> tasks = tune::group_tasks({layer});
  tune::TuneOptions o;
  o.strategy = "grid";
  o.trials = static_cast<int64_t>(tails.size()) + 1;  // one more: every candidate measured
  tune::LocalMeasurer m;
  const tune::TuneReport without = tune::tune(c, tasks, o, m);
  o.tails = true;
  const tune::TuneReport with = tune::tune(c, tasks, o, m);
  ASSERT_TRUE(without.tasks[0].exhausted && with.tasks[0].exhausted);
  EXPECT_EQ(with.tasks[0].candidates, tails.size());
  EXPECT_LE(*with.tasks[0].best->cycles, *without.tasks[0].best->cycles);
  size_t measured_tails = 0;
  for (const tuning::Trial &t : with.trials)
    measured_tails += 7 % t.schedule.tile_h != 0 || 7 % t.schedule.tile_w != 0;
  EXPECT_EQ(measured_tails, tail_points(tails));
}

TEST(TuningLog, ErrorsNameTheLineAndField) {
  TempDir dir;
  const std::string good =
      R"({"hw":"0123456789abcdef","workload":"w","schedule":{"tile_h":1,"tile_w":1,)"
      R"("tile_oc":1,"tile_ic":1,"vthreads":1},"cycles":10})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", ":2: not JSON"},
      {R"({"hw":"xyz","workload":"w","schedule":{},"cycles":1})", ":2: field 'hw' = 'xyz'"},
      {R"({"hw":"0123456789abcdef","schedule":{},"cycles":1})", ":2: field 'workload' must be"},
      {R"({"hw":"0123456789abcdef","workload":"w","schedule":{"tile_h":1},"cycles":1})",
       ":2: field 'schedule': field 'tile_w' is missing"},
      {R"({"hw":"0123456789abcdef","workload":"w","schedule":{"tile_h":1,"tile_w":1,"tile_oc":1,"tile_ic":1,"vthreads":1}})",
       ":2: a trial needs 'cycles' or an 'error'"},
      {R"({"hw":"0123456789abcdef","workload":"w","schedule":{"tile_h":1,"tile_w":1,"tile_oc":1,"tile_ic":1,"vthreads":1},"cycles":-4})",
       ":2: field 'cycles' must be a positive integer"},
  };
  for (const auto &[line, want] : cases) {
    const std::string path = (dir.path / "bad.log").string();
    std::ofstream(path) << good << "\n" << line << "\n";
    const std::string got = error_of([&] { tuning::read_log(path); });
    EXPECT_NE(got.find(path + want), std::string::npos) << "got: " << got;
  }
  EXPECT_NE(error_of([&] { tuning::read_log((dir.path / "none.log").string()); })
                .find("cannot read the tuning log"),
            std::string::npos);
}

TEST(TuningDb, KeepsTheBestPerWorkloadAndMerges) {
  TempDir dir;
  tuning::Trial a;
  a.hw = "00000000000000aa";
  a.workload = "w1";
  a.cycles = 100;
  tuning::Trial b = a;
  b.cycles = 80;
  b.schedule.tile_h = 2;
  tuning::Trial failed = a;
  failed.cycles.reset();
  failed.error = "refused";
  tuning::update_tuning_db({a, failed}, dir.path.string());
  tuning::update_tuning_db({b}, dir.path.string());
  tuning::update_tuning_db({a}, dir.path.string());  // worse: the file keeps b
  const tuning::TuningBook book = tuning::load_tuning_db(a.hw, dir.path.string());
  ASSERT_EQ(book.size(), 1u);
  EXPECT_EQ(book.best(a.hw, "w1")->cycles, 80u);
  EXPECT_EQ(book.best(a.hw, "w1")->schedule.tile_h, 2);
  EXPECT_FALSE(tuning::load_tuning_db("00000000000000bb", dir.path.string()).best("bb", "w1"));
}

// Trained on a random half of a task's measured points (and another task's), the model ranks
// the other half better than chance: a Spearman correlation well above 0.
TEST(CostModel, RanksHeldOutTrialsBetterThanChance) {
  const isa::HwConfig c = bundled("default");
  std::mt19937 rng(1);
  std::vector<std::vector<float>> train_x, test_x;
  std::vector<float> train_y;
  std::vector<double> test_cycles;
  const lower::Layer layers[] = {conv_layer(c, 4, 14), conv_layer(c, 2, 28)};
  for (size_t li = 0; li < 2; ++li) {
    const tune::Candidates cand = tune::enumerate_candidates(c, layers[li]);
    std::vector<size_t> order(cand.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(std::min<size_t>(order.size(), 60));
    std::vector<std::pair<std::vector<float>, uint64_t>> measured;
    uint64_t best = UINT64_MAX;
    for (size_t p : order) {
      const tuning::Trial t = tune::measure(c, layers[li], cand.schedule(p));
      if (!t.cycles) continue;
      measured.push_back({tune::schedule_features(c, layers[li], cand.schedule(p)), *t.cycles});
      best = std::min(best, *t.cycles);
    }
    ASSERT_GT(measured.size(), 30u);
    for (size_t i = 0; i < measured.size(); ++i) {
      if (li == 0 || i % 2 == 0) {
        train_x.push_back(measured[i].first);
        train_y.push_back(static_cast<float>(std::log2(double(measured[i].second) / best)));
      } else {
        test_x.push_back(measured[i].first);
        test_cycles.push_back(double(measured[i].second));
      }
    }
  }
  tune::CostModel model;
  model.fit(train_x, train_y);
  const std::vector<float> predicted = model.predict(test_x);
  const double rho =
      tune::rank_correlation(std::vector<double>(predicted.begin(), predicted.end()), test_cycles);
  RecordProperty("spearman", std::to_string(rho));
  EXPECT_GT(rho, 0.5) << "held-out rank correlation " << rho;
  // The statistic itself, on series with a known answer.
  EXPECT_DOUBLE_EQ(tune::rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(tune::rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
}

const std::string kCnn = std::string(VACC_SOURCE_DIR_FOR_TESTS) + "/models/fashion_mnist_cnn.onnx";

// The package's accelerator cycles on perf (timing only), step by step.
uint64_t perf_cycles(const isa::HwConfig &c, const isa::Package &pkg) {
  driver::DeviceOptions timing;
  timing.timing_only = true;
  uint64_t total = 0;
  for (const isa::PackageStep &step : pkg.steps) {
    if (!step.commands) continue;
    const isa::CommandList list = isa::deserialize(pkg.blobs[*step.commands]);
    const auto device = driver::open_device("perf", c, timing);
    total += runtime::run_command_list(*device, c, list,
                                       std::vector<std::vector<uint8_t>>(list.buffers.size()))
                 .counters.at("cycles");
  }
  return total;
}

// The package run on fsim on the bundled samples' first `n` images: its output bytes.
std::vector<uint8_t> fsim_output(const isa::HwConfig &c, const isa::Package &pkg, int64_t n = 1) {
  const NpyArray samples =
      read_npy(std::string(VACC_SOURCE_DIR_FOR_TESTS) + "/models/fashion_mnist_samples.npy");
  runtime::HostTensor x;
  x.shape = {n, 1, 28, 28};
  x.data.assign(samples.data.data(), samples.data.data() + n * 28 * 28 * 4);
  auto device = driver::open_device("fsim", c);
  host::ReferenceKernels cpu(pkg);
  runtime::GraphExecutor exec(pkg, cpu, device.get(), c);
  return exec.run({x}).at(0).data;
}

bool has_workload(const compile::CompiledModel &m, const std::string &part) {
  for (const compile::AccelLayer &a : m.accel_layers)
    if (lower::workload_key(a.layer).find(part) != std::string::npos) return true;
  return false;
}

// Compiles the bundled CNN on `c` in each forced form of its folding and fusion choices and
// calls check(model, folded, fused) on it.
template <typename Check>
void for_each_form(const isa::HwConfig &c, compile::CompileOptions co, const Check &check) {
  using lower::GraphChoice;
  for (GraphChoice fold : {GraphChoice::kAlways, GraphChoice::kNever})
    for (GraphChoice fuse : {GraphChoice::kAlways, GraphChoice::kNever}) {
      co.graph_choices = {fold, fuse};
      const compile::CompiledModel m = compile::compile_model(kCnn, c, co);
      const bool folded = fold == GraphChoice::kAlways, fused = fuse == GraphChoice::kAlways;
      SCOPED_TRACE(fmt::format("folded {} fused {}", folded, fused));
      check(m, folded, fused);
    }
}

// Every folding and fusion form of the bundled CNN (its stem folded or not, its two pools
// fused or apart) compiles to a program that computes the heuristic's output bytes on fsim,
// and the forms are what they say: a pool apart is a pool2d step, a folded stem a 1x1 one.
TEST(GraphChoices, EveryFoldingAndFusionFormRunsBitExact) {
  const isa::HwConfig c = bundled("small");
  compile::CompileOptions co;
  co.use_tuning_db = false;
  const compile::CompiledModel heuristic = compile::compile_model(kCnn, c, co);
  const std::vector<uint8_t> want = fsim_output(c, heuristic.package);
  ASSERT_EQ(heuristic.graph_decisions.size(), 3u) << "the stem's folding, two pools";
  for_each_form(c, co, [&](const compile::CompiledModel &m, bool folded, bool fused) {
    EXPECT_EQ(has_workload(m, "pool2d max"), !fused);
    EXPECT_EQ(has_workload(m, "pool2x2s2x2"), fused);
    EXPECT_EQ(has_workload(m, "conv2d n1 c16x28x28 o16 k1x1"), folded);
    EXPECT_EQ(has_workload(m, "c8x28x28 o16 k3x3"), !folded);
    EXPECT_EQ(fsim_output(c, m.package), want);
  });
}

// The same forms on other configs (16-lane blocks, the wide array, and a batch-2 core with the
// model at batch 2): each bit-exact against the config's heuristic program on fsim, the stem
// folded or not and the pools apart or fused as forced.
TEST(GraphChoices, EveryFormRunsBitExactOnOtherConfigs) {
  const std::string batch2 =
      std::string(VACC_SOURCE_DIR_FOR_TESTS) + "/tests/perf/configs/batch2.yaml";
  for (const isa::HwConfig &c : {bundled("default"), bundled("wide"), isa::load_config(batch2)}) {
    SCOPED_TRACE(c.name);
    compile::CompileOptions co;
    co.use_tuning_db = false;
    co.batch = c.batch;
    const std::vector<uint8_t> want =
        fsim_output(c, compile::compile_model(kCnn, c, co).package, c.batch);
    for_each_form(c, co, [&](const compile::CompiledModel &m, bool folded, bool fused) {
      int pools = 0, stem_window = 0;
      for (const compile::AccelLayer &a : m.accel_layers) {
        pools += std::holds_alternative<lower::PoolParams>(a.layer.params);
        if (const auto *p = std::get_if<lower::Conv2dParams>(&a.layer.params);
            p && a.layer.name == "/conv1/Conv_output_0.acc")
          stem_window = static_cast<int>(p->kernel_h * p->kernel_w);
      }
      EXPECT_EQ(pools, fused ? 0 : 2);
      EXPECT_EQ(stem_window, folded ? 1 : 9);
      EXPECT_EQ(fsim_output(c, m.package, c.batch), want);
    });
  }
}

// Decided by cycles (fabricated here, so that the test picks the answer): a form whose tuned
// cycles are fewer is taken, and the output stays the heuristic's; where a choice that won
// alone loses the program (an unfolded stem that then cannot profit from its fused pool), the
// guard compiles the heuristic's choices too and keeps the program of fewer tuned cycles.
TEST(GraphChoices, TunedCyclesChooseTheFormsAndTheGuardKeepsTheFasterProgram) {
  const isa::HwConfig c = bundled("small");
  // Cycles by form: `cost` of the layer's params, with the heuristic's schedule.
  auto lookup = [&](std::function<uint64_t(const lower::Layer &)> cost) -> lower::TunedLookup {
    return [=](const lower::Layer &layer) -> std::optional<lower::TunedSchedule> {
      return lower::TunedSchedule{lower::heuristic_schedule(c, layer, 2), "test", cost(layer)};
    };
  };
  auto is_pool = [](const lower::Layer &l) {
    return std::holds_alternative<lower::PoolParams>(l.params);
  };
  auto conv = [](const lower::Layer &l) { return std::get_if<lower::Conv2dParams>(&l.params); };
  compile::CompileOptions co;
  co.use_tuning_db = false;
  const std::vector<uint8_t> want = fsim_output(c, compile::compile_model(kCnn, c, co).package);

  // Pools apart measured cheap: both stay apart; the stem stays folded (folded alone cheaper).
  co.tuned = lookup([&](const lower::Layer &l) -> uint64_t {
    if (is_pool(l)) return 1;
    const auto *p = conv(l);
    if (!p) return 1000;
    return p->pool ? 5000
                   : (p->kernel_h == 1 && l.name.find("conv1") != std::string::npos ? 900 : 1000);
  });
  compile::CompiledModel m = compile::compile_model(kCnn, c, co);
  ASSERT_EQ(m.graph_decisions.size(), 3u);
  EXPECT_EQ(m.graph_decisions[0].choice, "folded");
  EXPECT_EQ(m.graph_decisions[1].choice, "pool apart");
  EXPECT_EQ(m.graph_decisions[2].choice, "pool apart");
  for (const auto &d : m.graph_decisions) {
    EXPECT_TRUE(d.tuned) << d.node << ": both forms measured";
    EXPECT_LT(d.chosen_cycles, d.other_cycles) << d.node;
  }
  EXPECT_TRUE(has_workload(m, "pool2d max"));
  EXPECT_EQ(fsim_output(c, m.package), want);

  // The stem alone is cheaper unfolded, but unfolded with its pool it costs more than the
  // heuristic's folded and fused stem: the choice taken alone would lose, so the heuristic's
  // program is kept.
  co.tuned = lookup([&](const lower::Layer &l) -> uint64_t {
    const auto *p = conv(l);
    if (!p || l.name.find("conv1") == std::string::npos) return 1000;
    if (p->kernel_h == 3) return p->pool ? 9000 : 100;  // unfolded: alone, fused
    return p->pool ? 500 : 200;                         // folded: alone, fused
  });
  m = compile::compile_model(kCnn, c, co);
  EXPECT_TRUE(has_workload(m, "conv2d n1 c16x28x28 o16 k1x1 s1x1 p0x0 g1 rq-pc pool2x2s2x2"));
  ASSERT_FALSE(m.stages.empty());
  EXPECT_EQ(m.stages.back().name, "graph_choices");
  EXPECT_NE(m.stages.back().summary.find("kept the heuristic's"), std::string::npos)
      << m.stages.back().summary;
  EXPECT_EQ(fsim_output(c, m.package), want);
}

// tune -> compile: the package's accelerator steps take the log's best schedules, say so, and
// run in exactly the cycles the log recorded.
TEST(TuneThenCompile, PackageUsesTheLoggedBest) {
  const isa::HwConfig c = bundled("small");
  TempDir dir;
  const std::string model = std::string(VACC_SOURCE_DIR_FOR_TESTS) + "/models/fashion_mnist_cnn.onnx";
  const std::string log = (dir.path / "fm.log").string();
  compile::CompileOptions co;
  co.use_tuning_db = false;
  const std::vector<tune::TuneTask> tasks = tune::model_tasks(model, c, co);
  ASSERT_GE(tasks.size(), 3u);
  // The heuristic folds the stem and fuses both pools; the other forms, each its own task.
  std::vector<std::string> forms;
  for (const tune::TuneTask &t : tasks)
    if (t.alternative) forms.push_back(t.form);
  std::sort(forms.begin(), forms.end());
  EXPECT_EQ(forms, (std::vector<std::string>{"apart", "apart", "pool apart", "pool apart",
                                             "unfolded", "unfolded, pool apart"}));
  tune::TuneOptions o;
  o.trials = 12;
  o.strategy = "anneal";
  o.log_path = log;
  tune::LocalMeasurer m;
  tune::tune(c, tasks, o, m);
  tuning::TuningBook book;
  book.add_all(tuning::read_log(log));

  co.tuning_logs = {log};
  const compile::CompiledModel compiled = compile::compile_model(model, c, co);
  driver::DeviceOptions timing;
  timing.timing_only = true;
  ASSERT_FALSE(compiled.accel_layers.empty());
  for (const compile::AccelLayer &a : compiled.accel_layers) {
    const isa::PackageStep &step = compiled.package.steps[a.step];
    const std::optional<tuning::Trial> best =
        book.best(tuning::hw_key(c), lower::workload_key(a.layer));
    ASSERT_TRUE(best) << step.name;
    EXPECT_EQ(step.schedule, "tuned: " + lower::describe(best->schedule) + " (" + log + ")");
    const isa::CommandList list =
        isa::deserialize(compiled.package.blobs[*step.commands]);
    const auto device = driver::open_device("perf", c, timing);
    const runtime::ListRun run = runtime::run_command_list(
        *device, c, list, std::vector<std::vector<uint8_t>>(list.buffers.size()));
    EXPECT_EQ(run.counters.at("cycles"), *best->cycles) << step.name;
  }
  // Every folding and fusion site had both forms tuned (model_tasks found the alternative
  // forms' workloads, and compile looked them up by the same keys), each took the form of fewer
  // cycles, and the program runs in no more cycles than the heuristic's.
  ASSERT_EQ(compiled.graph_decisions.size(), 3u);
  for (const lower::GraphDecision &d : compiled.graph_decisions) {
    EXPECT_TRUE(d.tuned) << d.node << " " << d.choice;
    EXPECT_LE(d.chosen_cycles, d.other_cycles) << d.node << " " << d.choice;
  }
  EXPECT_TRUE(std::any_of(tasks.begin(), tasks.end(), [](auto &t) { return t.alternative; }));
  compile::CompileOptions untuned = co;
  untuned.tuning_logs.clear();
  EXPECT_LE(perf_cycles(c, compiled.package),
            perf_cycles(c, compile::compile_model(model, c, untuned).package));
  // Without the log every step says it took the heuristic's schedule.
  co.tuning_logs.clear();
  for (const auto &s : compile::compile_model(model, c, co).package.steps) {
    if (s.commands) {
      EXPECT_EQ(s.schedule.rfind("heuristic: ", 0), 0u) << s.schedule;
    }
  }
}

}  // namespace
}  // namespace vacc
