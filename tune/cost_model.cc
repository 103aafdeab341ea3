#include "vacc/tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "vacc/support/error.h"
#include "vacc/tune/features.h"

namespace vacc::tune {
namespace {

void check(int status, const char *what) {
  if (status != 0) fail("cost model: {} failed: {}", what, XGBGetLastError());
}

// A dense matrix of the rows, freed on scope exit.
class Matrix {
 public:
  explicit Matrix(const std::vector<std::vector<float>> &x) {
    std::vector<float> flat;
    flat.reserve(x.size() * kNumFeatures);
    for (const auto &row : x) {
      VACC_CHECK(static_cast<int>(row.size()) == kNumFeatures) << row.size() << " features";
      flat.insert(flat.end(), row.begin(), row.end());
    }
    check(XGDMatrixCreateFromMat(flat.data(), x.size(), kNumFeatures, NAN, &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(handle_); }
  Matrix(const Matrix &) = delete;
  Matrix &operator=(const Matrix &) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (double(i) + double(j)) / 2;
    i = j + 1;
  }
  return r;
}

}  // namespace

CostModel::CostModel() = default;

CostModel::~CostModel() {
  if (booster_) XGBoosterFree(booster_);
}

void CostModel::fit(const std::vector<std::vector<float>> &x, const std::vector<float> &y) {
  VACC_CHECK(x.size() == y.size() && !x.empty()) << "cost model: rows and targets";
  Matrix m(x);
  check(XGDMatrixSetFloatInfo(m.get(), "label", y.data(), y.size()), "XGDMatrixSetFloatInfo");
  BoosterHandle b = nullptr;
  DMatrixHandle train[] = {m.get()};
  check(XGBoosterCreate(train, 1, &b), "XGBoosterCreate");
  // Small trees, few threads: the tuner's worker processes use the other cores.
  for (auto [key, value] : {std::pair{"objective", "reg:squarederror"},
                            std::pair{"max_depth", "6"},
                            std::pair{"eta", "0.2"},
                            std::pair{"min_child_weight", "1"},
                            std::pair{"subsample", "1"},
                            std::pair{"nthread", "1"},
                            std::pair{"seed", "1"},
                            std::pair{"verbosity", "0"}}) {
    if (XGBoosterSetParam(b, key, value) != 0) {
      XGBoosterFree(b);
      check(-1, "XGBoosterSetParam");
    }
  }
  for (int i = 0; i < 60; ++i) {
    if (XGBoosterUpdateOneIter(b, i, m.get()) != 0) {
      XGBoosterFree(b);
      check(-1, "XGBoosterUpdateOneIter");
    }
  }
  if (booster_) XGBoosterFree(booster_);
  booster_ = b;
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>> &x) const {
  VACC_CHECK(booster_) << "cost model: predict before fit";
  if (x.empty()) return {};
  Matrix m(x);
  bst_ulong n = 0;
  const float *out = nullptr;
  check(XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &out), "XGBoosterPredict");
  VACC_CHECK(n == x.size()) << "cost model: " << n << " predictions for " << x.size() << " rows";
  return std::vector<float>(out, out + n);
}

double rank_correlation(const std::vector<double> &a, const std::vector<double> &b) {
  VACC_CHECK(a.size() == b.size()) << "rank correlation of series of different lengths";
  if (a.size() < 2) return 0;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = double(a.size()), mean = (n - 1) / 2;
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) * (ra[i] - mean);
    db += (rb[i] - mean) * (rb[i] - mean);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0;
}

}  // namespace vacc::tune
