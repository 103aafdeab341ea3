// ONNX's own backend tests (Debian's libonnx-testdata, /usr/share/libonnx-testdata/data) as a
// harness any executor runs through: each test directory's model is imported, its inputs fed
// to the executor under test, and its outputs compared as ONNX's backend tests do. A test is
// attempted when vacc imports all its operators and it uses no feature vacc refuses by design
// (refused_feature's rules); every attempted test must pass. Each refused one must still fail
// with a vacc::Error (never a crash or a wrong answer). Counts are printed per suite.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "vacc/graph/onnx_import.h"
#include "vacc/graph/op_registry.h"
#include "vacc/support/error.h"

namespace vacc::graph::conformance {

namespace fs = std::filesystem;

// The executor under test: runs `graph` on its inputs, returns its outputs.
using Runner = std::function<std::vector<Tensor>(const Graph &, const std::vector<Tensor> &)>;

constexpr const char *kDataDir = "/usr/share/libonnx-testdata/data";

// The features vacc refuses by design, as rules on the model: the reason a test of supported
// operators is not attempted, or "" when it is.
//  - a graph input or output whose type is not a tensor (sequences, maps, optionals);
//  - a graph input or output of an element type vacc does not carry (float16, bfloat16,
//    strings, unsigned integers wider than 8 bits: vacc carries float, double, int8, uint8,
//    int16, int32, int64 and bool);
//  - Dropout in training mode with a nonzero ratio (random; vacc infers), read from the
//    test's first data set;
//  - a recurrent operator's batch-first layout (recurrent_import.h).
inline std::string refused_feature(const fs::path &dir, const onnx::ModelProto &model) {
  static const std::set<int> kCarried = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
                                         onnx::TensorProto::INT8,  onnx::TensorProto::UINT8,
                                         onnx::TensorProto::INT16, onnx::TensorProto::INT32,
                                         onnx::TensorProto::INT64, onnx::TensorProto::BOOL};
  std::vector<const onnx::ValueInfoProto *> boundary;
  for (const auto &v : model.graph().input()) boundary.push_back(&v);
  for (const auto &v : model.graph().output()) boundary.push_back(&v);
  for (const onnx::ValueInfoProto *v : boundary) {
    if (!v->type().has_tensor_type()) return "a graph input or output that is not a tensor";
    const int elem = v->type().tensor_type().elem_type();
    if (!kCarried.count(elem)) {
      return "element type " +
             onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem)) +
             ", which vacc does not carry";
    }
  }
  // A graph input's value in the first data set (the Dropout tests feed ratio and mode).
  const auto fed = [&](const std::string &name) -> std::optional<Tensor> {
    for (int i = 0; i < model.graph().input_size(); ++i) {
      if (model.graph().input(i).name() != name) continue;
      return read_onnx_tensor(
          (dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
    }
    return std::nullopt;
  };
  for (const auto &node : model.graph().node()) {
    if (node.op_type() == "LSTM" || node.op_type() == "GRU" || node.op_type() == "RNN") {
      for (const auto &a : node.attribute())
        if (a.name() == "layout" && a.i() != 0) return "batch-first layout";
    }
    if (node.op_type() != "Dropout" || node.input_size() < 3 || node.input(2).empty()) continue;
    const std::optional<Tensor> mode = fed(node.input(2));
    const std::optional<Tensor> ratio = node.input(1).empty() ? std::nullopt : fed(node.input(1));
    const bool training = mode && mode->as_int(0) != 0;
    const double drop = ratio ? ratio->as_double(0) : 0.5;
    if (training && drop != 0.0) return "Dropout in training mode (random; vacc infers)";
  }
  return "";
}

inline std::string slurp(const fs::path &path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Compares as ONNX's backend tests do: rtol 1e-3, atol 1e-7 for floats, exact otherwise.
inline std::string compare(const Tensor &got, const Tensor &want) {
  if (got.dtype() != want.dtype()) {
    return std::string("dtype ") + dtype_name(got.dtype()) + " vs " + dtype_name(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return "shape " + shape_str(got.shape()) + " vs " + shape_str(want.shape());
  }
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.as_double(i), w = want.as_double(i);
    bool ok = dtype_is_float(want.dtype())
                  ? (std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= 1e-7 + 1e-3 * std::abs(w))
                  : g == w;
    if (!ok) {
      std::ostringstream ss;
      ss << "element " << i << ": got " << g << ", want " << w;
      return ss.str();
    }
  }
  return "";
}

struct Counts {
  int passed = 0, failed = 0, unsupported_op = 0, refused_feature = 0;
  int attempted() const { return passed + failed; }
  std::vector<std::string> failures;
};

// Runs one test directory; returns "" on success or the reason for failure.
inline std::string run_case(const fs::path &dir, const Runner &run) {
  onnx::ModelProto model;
  if (!model.ParseFromString(slurp(dir / "model.onnx"))) return "cannot parse model.onnx";
  std::set<std::string> initializers;
  for (const auto &init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> input_names;
  for (const auto &in : model.graph().input()) {
    // The importer's own diagnostic for inputs that are not tensors.
    if (!in.type().has_tensor_type()) import_onnx((dir / "model.onnx").string());
    if (!initializers.count(in.name())) input_names.push_back(in.name());
  }
  // Inputs that decide output shapes, or that vacc's kernels take as constants, are frozen to the
  // test's values (vacc's shapes are static). (Reshape's shape, Pad's pads, Expand's shape,
  // ConstantOfShape's input, Range's bounds, Slice's starts/ends/axes/steps, the axes of
  // Squeeze, Unsqueeze and ReduceSum, Split's sizes, Tile's repeats, Resize's roi, scales and
  // sizes, CumSum's axis and Trilu's k.)
  static const std::map<std::string, std::vector<int>> kShapeInputs = {
      {"Reshape", {1}},         {"Pad", {1}},         {"Expand", {1}},
      {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}}, {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},         {"Unsqueeze", {1}},   {"ReduceSum", {1}},
      {"Split", {1}},           {"Tile", {1}},        {"Resize", {1, 2, 3}},
      {"CumSum", {1}},          {"Trilu", {1}}};
  std::set<std::string> shape_inputs;
  for (const auto &node : model.graph().node()) {
    auto it = kShapeInputs.find(node.op_type());
    if (it == kShapeInputs.end()) continue;
    for (int i : it->second) {
      if (i < node.input_size() && !node.input(i).empty()) shape_inputs.insert(node.input(i));
    }
  }
  std::vector<fs::path> sets;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.is_directory()) sets.push_back(entry.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test data set";
  for (const fs::path &set : sets) {
    ImportOptions options;
    std::vector<Tensor> feeds;
    for (size_t i = 0; i < input_names.size(); ++i) {
      Tensor t = read_onnx_tensor((set / ("input_" + std::to_string(i) + ".pb")).string());
      if (shape_inputs.count(input_names[i])) {
        options.frozen_inputs[input_names[i]] = t;
      } else {
        feeds.push_back(std::move(t));
      }
    }
    Graph graph = import_onnx((dir / "model.onnx").string(), options);
    std::vector<Tensor> outputs = run(graph, feeds);
    // Every output the model declares, and every expected output the test holds, is compared:
    // an executor that returns too few outputs fails instead of comparing nothing.
    size_t expected = 0;
    while (fs::exists(set / ("output_" + std::to_string(expected) + ".pb"))) ++expected;
    if (outputs.size() != size_t(model.graph().output_size()) || outputs.size() != expected) {
      return set.filename().string() + ": " + std::to_string(outputs.size()) +
             " outputs, the model declares " + std::to_string(model.graph().output_size()) +
             " and the test expects " + std::to_string(expected);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      fs::path want_path = set / ("output_" + std::to_string(i) + ".pb");
      std::string diff = compare(outputs[i], read_onnx_tensor(want_path.string()));
      if (!diff.empty()) {
        return set.filename().string() + " output " + std::to_string(i) + ": " + diff;
      }
    }
  }
  return "";
}

inline bool uses_only_supported_ops(const fs::path &dir) {
  onnx::ModelProto model;
  if (!model.ParseFromString(slurp(dir / "model.onnx"))) return false;
  for (const auto &node : model.graph().node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
    if (!imports_onnx_operator(node.op_type())) return false;
  }
  return model.graph().node_size() > 0;
}

inline Counts run_suite(const std::string &suite, const Runner &run) {
  Counts counts;
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(fs::path(kDataDir) / suite)) {
    if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path &dir : dirs) {
    std::string name = dir.filename().string();
    if (!uses_only_supported_ops(dir)) {
      ++counts.unsupported_op;
      continue;
    }
    onnx::ModelProto model;
    model.ParseFromString(slurp(dir / "model.onnx"));
    const std::string refused = refused_feature(dir, model);
    std::string reason;
    try {
      reason = run_case(dir, run);
    } catch (const vacc::Error &e) {
      reason = std::string("vacc::Error: ") + e.what();
    } catch (const std::exception &e) {
      reason = std::string("crash (std::exception): ") + e.what();
    }
    if (!refused.empty()) {
      ++counts.refused_feature;
      std::cout << "  not attempted " << name << " (" << refused << "): " << reason << "\n";
      if (reason.rfind("vacc::Error", 0) != 0) counts.failures.push_back(name + ": no error");
      continue;
    }
    if (reason.empty()) {
      ++counts.passed;
    } else {
      ++counts.failed;
      counts.failures.push_back(name + ": " + reason);
    }
  }
  std::cout << suite << ": " << counts.passed << " passed, " << counts.failed << " failed of "
            << counts.attempted() << " attempted; " << counts.refused_feature
            << " not attempted (a feature vacc refuses by design, each failing with its error), "
            << counts.unsupported_op << " not run (operators outside vacc's set)\n";
  for (const std::string &f : counts.failures) std::cout << "  FAILED " << f << "\n";
  return counts;
}

inline Counts check_suite(const std::string &suite, int min_passed, const Runner &run) {
  if (!fs::exists(fs::path(kDataDir) / suite)) {
    ADD_FAILURE() << kDataDir << "/" << suite << " is missing: install libonnx-testdata";
    return {};
  }
  Counts counts = run_suite(suite, run);
  EXPECT_EQ(counts.failed, 0);
  EXPECT_TRUE(counts.failures.empty());
  // The floor is the count passing today: a test that stops passing (or a harness that
  // silently runs less) fails here; raise the floor when more pass.
  EXPECT_GE(counts.passed, min_passed) << suite;
  return counts;
}

}  // namespace vacc::graph::conformance
