#include "sqlite.h"

#include "vacc/support/error.h"

namespace vacc::sweep::sql {

Database::Database(const std::string &path, int busy_ms) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail("{}: cannot open the results database: {}", path, message);
  }
  sqlite3_busy_timeout(db_, busy_ms);
}

Database::~Database() {
  sqlite3_close(db_);
}

void Database::fail_with(const std::string &what) const {
  fail("{}: {}: {}", path_, what, sqlite3_errmsg(db_));
}

void Database::exec(const std::string &sql) {
  char *message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    fail("{}: {} (in: {})", path_, text, sql.substr(0, 60));
  }
}

Statement Database::prepare(const std::string &sql) {
  sqlite3_stmt *stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    fail_with("cannot prepare '" + sql.substr(0, 60) + "'");
  return Statement(*this, stmt);
}

int64_t Database::changes() const {
  return sqlite3_changes(db_);
}

Statement::Statement(Statement &&other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement &Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_->fail_with("bind");
  return *this;
}

Statement &Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_->fail_with("bind");
  return *this;
}

Statement &Statement::bind(int index, const std::string &value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    db_->fail_with("bind");
  return *this;
}

Statement &Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_->fail_with("bind");
  return *this;
}

Statement &Statement::bind(int index, const std::optional<double> &value) {
  return value ? bind(index, *value) : bind_null(index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail_with("query failed");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}
std::string Statement::text(int column) const {
  const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : "";
}

Transaction::Transaction(Database &db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace vacc::sweep::sql
