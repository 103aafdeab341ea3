// A thin RAII layer over SQLite's C API (Debian's libsqlite3): a connection, prepared
// statements with typed binds and columns, and transactions. Every SQLite failure becomes a
// vacc::Error naming the database file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

namespace vacc::sweep::sql {

class Statement;

class Database {
 public:
  // Opens (creating) the database; waits up to `busy_ms` for another process's lock.
  Database(const std::string &path, int busy_ms);
  ~Database();
  Database(const Database &) = delete;
  Database &operator=(const Database &) = delete;

  void exec(const std::string &sql);
  Statement prepare(const std::string &sql);
  int64_t changes() const;
  const std::string &path() const { return path_; }
  [[noreturn]] void fail_with(const std::string &what) const;

 private:
  friend class Statement;
  friend class Transaction;
  sqlite3 *db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Statement &&other) noexcept;
  ~Statement();

  Statement &bind(int index, int64_t value);
  Statement &bind(int index, double value);
  Statement &bind(int index, const std::string &value);
  Statement &bind_null(int index);
  Statement &bind(int index, const std::optional<double> &value);
  // Steps once: true when a row is available.
  bool step();
  // Runs to completion (for statements without rows).
  void run();
  void reset();

  bool is_null(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;

 private:
  friend class Database;
  Statement(Database &db, sqlite3_stmt *stmt) : db_(&db), stmt_(stmt) {}
  Database *db_;
  sqlite3_stmt *stmt_;
};

// BEGIN IMMEDIATE (the write lock up front, so two processes never deadlock upgrading a read
// lock) ... COMMIT; rolled back when destroyed uncommitted (an exception unwinding).
class Transaction {
 public:
  explicit Transaction(Database &db);
  ~Transaction();
  void commit();

 private:
  Database &db_;
  bool done_ = false;
};

}  // namespace vacc::sweep::sql
