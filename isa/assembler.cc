// Assembly: text to a Program. Parses every line first, then lays out the regions, then
// resolves DRAM operands against them, so any error can name file:line:column.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "vacc/isa/assembly.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"
#include "vacc/support/limits.h"
#include "vacc/support/file.h"

namespace vacc::isa {

namespace {

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

struct Line {
  int number = 0;
  std::vector<Token> tokens;
};

struct Position {
  int line = 0;
  int column = 0;
};

struct RegionDecl {
  std::string name;
  RegionKind kind;
  MemId mem;
  uint64_t elements;
  std::optional<uint32_t> random_seed;
};

struct DataDecl {
  std::string region;
  uint64_t offset;
  std::vector<uint8_t> bytes;
  Position at;
};

// An instruction's DRAM operand, resolved once the regions are laid out.
struct PendingRef {
  std::string dram_operand;  // empty when the instruction has none
  Position dram_at;
  Line line;
};

class Assembler {
 public:
  Assembler(const HwConfig &config, std::string source) : config_(config), source_(source) {}

  Program run(const std::string &text) {
    for (const Line &line : split_lines(text)) parse_line(line);
    return build();
  }

 private:
  [[noreturn]] void error(Position at, const std::string &message) const {
    fail("{}:{}:{}: {}", source_, at.line, at.column, message);
  }
  Position pos(const Line &line, const Token &t) const { return {line.number, t.column}; }

  static std::vector<Line> split_lines(const std::string &text) {
    std::vector<Line> lines;
    std::istringstream in(text);
    std::string raw;
    for (int number = 1; std::getline(in, raw); ++number) {
      Line line{number, {}};
      size_t i = 0;
      while (i < raw.size()) {
        if (raw[i] == '#' || raw[i] == ';') break;
        if (std::isspace(static_cast<unsigned char>(raw[i]))) {
          ++i;
          continue;
        }
        size_t start = i;
        while (i < raw.size() && !std::isspace(static_cast<unsigned char>(raw[i])) &&
               raw[i] != '#' && raw[i] != ';')
          ++i;
        line.tokens.push_back({raw.substr(start, i - start), static_cast<int>(start) + 1});
      }
      if (!line.tokens.empty()) lines.push_back(std::move(line));
    }
    return lines;
  }

  int64_t number(const Line &line, const Token &t, const std::string &text, int column) const {
    int64_t v = 0;
    const char *b = text.data(), *e = text.data() + text.size();
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      b += 2;
      base = 16;
    }
    auto [ptr, ec] = std::from_chars(b, e, v, base);
    if (ec != std::errc() || ptr != e || text.empty())
      error({line.number, column}, fmt::format("expected a number, found '{}'", text));
    return v;
  }

  // Parses "a,b" into two numbers.
  std::pair<int64_t, int64_t> pair(const Line &line, const Token &t, const std::string &value,
                                   int column) const {
    auto comma = value.find(',');
    if (comma == std::string::npos)
      error({line.number, column}, fmt::format("expected two numbers 'a,b', found '{}'", value));
    return {number(line, t, value.substr(0, comma), column),
            number(line, t, value.substr(comma + 1), column + static_cast<int>(comma) + 1)};
  }

  void parse_line(const Line &line) {
    const Token &head = line.tokens[0];
    if (head.text == ".region") return parse_region(line);
    if (head.text == ".data") return parse_data(line);
    if (head.text == ".uop") return parse_uop(line);
    if (head.text[0] == '.') error(pos(line, head), fmt::format("unknown directive '{}' (known: "
                                                               ".region, .data, .uop)",
                                                               head.text));
    parse_insn(line);
  }

  void parse_region(const Line &line) {
    const auto &t = line.tokens;
    if (t.size() != 5 && t.size() != 7)
      error(pos(line, t[0]), ".region takes NAME KIND MEM COUNT [random SEED]");
    RegionDecl r;
    r.name = t[1].text;
    // dram= reads an operand that starts with a digit as an address and '+' as an offset, so
    // a region named "2" or "a+b" could never be referred to, and its disassembly would mean
    // another address.
    const unsigned char first = static_cast<unsigned char>(r.name[0]);
    if (!(std::isalpha(first) || first == '_') || r.name.find('+') != std::string::npos)
      error(pos(line, t[1]), fmt::format("region name '{}' must start with a letter or '_' and "
                                         "hold no '+' (dram= reads those as an address)",
                                         r.name));
    for (const auto &other : regions_)
      if (other.name == r.name)
        error(pos(line, t[1]), fmt::format("region '{}' is declared twice", r.name));
    auto kind = parse_region_kind(t[2].text);
    if (!kind || *kind == RegionKind::kInstructions || *kind == RegionKind::kUops)
      error(pos(line, t[2]), fmt::format("unknown region kind '{}' (known: input, weight, "
                                         "output, scratch)",
                                         t[2].text));
    r.kind = *kind;
    auto mem = parse_mem(line, t[3]);
    r.mem = mem;
    int64_t count = number(line, t[4], t[4].text, t[4].column);
    if (count < 0) error(pos(line, t[4]), "element count must not be negative");
    try {  // bounded before the region's bytes are allocated
      checked_tensor_bytes(std::vector<int64_t>{count}, config_.tile_bytes(mem),
                           fmt::format("region '{}'", r.name));
    } catch (const Error &e) {
      error(pos(line, t[4]), e.what());
    }
    r.elements = static_cast<uint64_t>(count);
    if (t.size() == 7) {
      if (t[5].text != "random")
        error(pos(line, t[5]), fmt::format("expected 'random SEED', found '{}'", t[5].text));
      r.random_seed = static_cast<uint32_t>(number(line, t[6], t[6].text, t[6].column));
    }
    regions_.push_back(r);
  }

  MemId parse_mem(const Line &line, const Token &t) const {
    for (int i = 0; i < kNumMemIds; ++i)
      if (t.text == mem_id_name(static_cast<MemId>(i))) return static_cast<MemId>(i);
    error(pos(line, t),
          fmt::format("unknown memory '{}' (known: uop, wgt, inp, acc, out)", t.text));
  }

  void parse_data(const Line &line) {
    const auto &t = line.tokens;
    if (t.size() != 4) error(pos(line, t[0]), ".data takes REGION BYTE_OFFSET HEX");
    DataDecl d;
    d.region = t[1].text;
    d.at = pos(line, t[1]);
    const int64_t offset = number(line, t[2], t[2].text, t[2].column);
    if (offset < 0) error(pos(line, t[2]), "the byte offset must not be negative");
    d.offset = static_cast<uint64_t>(offset);
    const std::string &hex = t[3].text;
    if (hex.size() % 2) error(pos(line, t[3]), "hex data needs an even number of digits");
    d.bytes.reserve(hex.size() / 2);
    for (size_t i = 0; i < hex.size(); i += 2) {
      unsigned v = 0;
      auto [ptr, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
      if (ec != std::errc() || ptr != hex.data() + i + 2)
        error({line.number, t[3].column + static_cast<int>(i)}, "invalid hex digit");
      d.bytes.push_back(static_cast<uint8_t>(v));
    }
    data_.push_back(std::move(d));
  }

  // Collects key=value operands and bare flags of one line.
  struct Operands {
    std::map<std::string, std::pair<std::string, int>> values;  // key -> (value, column)
    std::map<std::string, int> flags;                            // flag -> column
  };

  Operands operands(const Line &line) const {
    Operands ops;
    for (size_t i = 1; i < line.tokens.size(); ++i) {
      const Token &t = line.tokens[i];
      auto eq = t.text.find('=');
      if (eq == std::string::npos) {
        if (ops.flags.count(t.text)) error(pos(line, t), fmt::format("'{}' given twice", t.text));
        ops.flags[t.text] = t.column;
      } else {
        std::string key = t.text.substr(0, eq);
        if (ops.values.count(key)) error(pos(line, t), fmt::format("'{}' given twice", key));
        ops.values[key] = {t.text.substr(eq + 1), t.column + static_cast<int>(eq) + 1};
      }
    }
    return ops;
  }

  // Checks that only the allowed keys and flags appear.
  void allow(const Line &line, const Operands &ops, std::initializer_list<const char *> keys,
             std::initializer_list<const char *> flags, const std::string &mnemonic) const {
    for (const auto &[key, v] : ops.values) {
      bool ok = false;
      for (const char *k : keys) ok |= key == k;
      if (!ok) {
        std::string known;
        for (const char *k : keys) known += (known.empty() ? "" : ", ") + std::string(k);
        error({line.number, v.second - static_cast<int>(key.size()) - 1},
              fmt::format("'{}' has no operand '{}' (known: {})", mnemonic, key, known));
      }
    }
    for (const auto &[flag, column] : ops.flags) {
      bool ok = false;
      for (const char *f : flags) ok |= flag == f;
      if (!ok) {
        std::string known;
        for (const char *f : flags) known += (known.empty() ? "" : ", ") + std::string(f);
        error({line.number, column},
              fmt::format("'{}' has no flag '{}' (known: {})", mnemonic, flag, known));
      }
    }
  }

  int64_t value(const Line &line, const Operands &ops, const char *key, int64_t fallback) const {
    auto it = ops.values.find(key);
    if (it == ops.values.end()) return fallback;
    return number(line, line.tokens[0], it->second.first, it->second.second);
  }

  std::pair<int64_t, int64_t> value_pair(const Line &line, const Operands &ops, const char *key,
                                         std::pair<int64_t, int64_t> fallback) const {
    auto it = ops.values.find(key);
    if (it == ops.values.end()) return fallback;
    return pair(line, line.tokens[0], it->second.first, it->second.second);
  }

  static uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

  // Field values are range-checked by encode(); negative or huge numbers are caught here.
  uint32_t field(const Line &line, int column, const std::string &name, int64_t v) const {
    if (v < 0 || v > UINT32_MAX)
      error({line.number, column}, fmt::format("'{}' = {} is out of range", name, v));
    return static_cast<uint32_t>(v);
  }

  DepFlags deps(const Operands &ops) const {
    return DepFlags{ops.flags.count("pop_prev") > 0, ops.flags.count("pop_next") > 0,
                    ops.flags.count("push_prev") > 0, ops.flags.count("push_next") > 0};
  }

  int column_of(const Operands &ops, const char *key, const Line &line) const {
    auto it = ops.values.find(key);
    return it == ops.values.end() ? line.tokens[0].column : it->second.second;
  }

  void parse_uop(const Line &line) {
    Operands ops = operands(line);
    allow(line, ops, {"dst", "src", "wgt"}, {}, ".uop");
    Uop u{field(line, column_of(ops, "dst", line), "dst", value(line, ops, "dst", 0)),
          field(line, column_of(ops, "src", line), "src", value(line, ops, "src", 0)),
          field(line, column_of(ops, "wgt", line), "wgt", value(line, ops, "wgt", 0))};
    try {
      encode_uop(config_, u);
    } catch (const Error &e) {
      error(pos(line, line.tokens[0]), e.what());
    }
    uops_.push_back(u);
  }

  void parse_insn(const Line &line) {
    const Token &head = line.tokens[0];
    const std::string &m = head.text;
    Operands ops = operands(line);
    static const std::initializer_list<const char *> kDeps = {"pop_prev", "pop_next",
                                                              "push_prev", "push_next"};
    struct {
      Insn insn;
      std::string dram_operand;
      Position dram_at;
    } p;
    if (m.rfind("load.", 0) == 0 || m.rfind("store.", 0) == 0) {
      const bool is_load = m[0] == 'l';
      const std::string mem_name = m.substr(is_load ? 5 : 6);
      MemInsn insn;
      insn.opcode = is_load ? Opcode::kLoad : Opcode::kStore;
      insn.mem = parse_mem(line, Token{mem_name, head.column + (is_load ? 5 : 6)});
      if (is_load && insn.mem == MemId::kOut)
        error(pos(line, head), "'load.out' is not an instruction: OUT is written by store.out");
      if (!is_load && insn.mem == MemId::kInp && !config_.store_inp)
        error(pos(line, head), store_inp_unavailable(config_) + " (store.inp)");
      if (!is_load && insn.mem != MemId::kOut && insn.mem != MemId::kInp)
        error(pos(line, head),
              fmt::format("'{}' is not an instruction: STORE writes only OUT (store.out){}", m,
                          config_.store_inp ? " and INP (store.inp)" : ""));
      allow(line, ops, {"sram", "dram", "y", "x", "stride", "pad"}, kDeps, m);
      insn.deps = deps(ops);
      insn.sram_base = field(line, column_of(ops, "sram", line), "sram", value(line, ops, "sram", 0));
      insn.y_size = field(line, column_of(ops, "y", line), "y", value(line, ops, "y", 1));
      insn.x_size = field(line, column_of(ops, "x", line), "x", value(line, ops, "x", 1));
      insn.x_stride = field(line, column_of(ops, "stride", line), "stride",
                            value(line, ops, "stride", insn.x_size));
      if (auto it = ops.values.find("pad"); it != ops.values.end()) {
        std::vector<int64_t> pads;
        std::string rest = it->second.first;
        int column = it->second.second;
        while (true) {
          auto comma = rest.find(',');
          pads.push_back(number(line, head, rest.substr(0, comma), column));
          if (comma == std::string::npos) break;
          column += static_cast<int>(comma) + 1;
          rest = rest.substr(comma + 1);
        }
        if (pads.size() != 4)
          error({line.number, it->second.second}, "pad takes four numbers: top,bottom,left,right");
        insn.pad_top = field(line, it->second.second, "pad", pads[0]);
        insn.pad_bottom = field(line, it->second.second, "pad", pads[1]);
        insn.pad_left = field(line, it->second.second, "pad", pads[2]);
        insn.pad_right = field(line, it->second.second, "pad", pads[3]);
      }
      auto dram = ops.values.find("dram");
      if (dram == ops.values.end()) error(pos(line, head), fmt::format("'{}' needs dram=", m));
      // store.inp: dram= is the first INP entry written, a number (no region lies in INP).
      if (!is_load && insn.mem == MemId::kInp &&
          (dram->second.first.empty() ||
           !std::isdigit(static_cast<unsigned char>(dram->second.first[0])) ||
           dram->second.first.find('+') != std::string::npos))
        error({line.number, dram->second.second},
              "store.inp writes the INP scratchpad: dram= takes the first INP index, a number");
      p.dram_operand = dram->second.first;
      p.dram_at = {line.number, dram->second.second};
      p.insn = insn;
    } else if (m == "gemm") {
      allow(line, ops, {"uops", "loop", "acc", "inp", "wgt"},
            {"reset", "assign", "overlap", "pop_prev", "pop_next", "push_prev", "push_next"}, m);
      GemmInsn g;
      g.deps = deps(ops);
      g.reset = ops.flags.count("reset") > 0;
      g.overlap = ops.flags.count("overlap") > 0;
      g.assign = ops.flags.count("assign") > 0;
      set_loops(line, ops, g.uop_begin, g.uop_end, g.loop_out, g.loop_in);
      g.acc = factors(line, ops, "acc");
      g.inp = factors(line, ops, "inp");
      g.wgt = factors(line, ops, "wgt");
      p.insn = g;
    } else if (m.rfind("alu.", 0) == 0) {
      AluInsn a;
      bool found = false;
      for (int i = 0; i < kNumAluOps; ++i)
        if (m.substr(4) == alu_op_name(static_cast<AluOp>(i))) {
          a.op = static_cast<AluOp>(i);
          found = true;
        }
      if (!found)
        error({line.number, head.column + 4},
              fmt::format(
                  "unknown ALU operation '{}' (known: min, max, add, shr, mul, clip, shr_clip)",
                  m.substr(4)));
      // SHR_CLIP's bounds (bounds=LOW,HIGH) live in the immediate beside its vector operand.
      const bool bounded = a.op == AluOp::kShrClip;
      if (bounded)
        allow(line, ops, {"uops", "loop", "dst", "src", "imm", "unused_imm", "bounds"},
              {"overlap", "pop_prev", "pop_next", "push_prev", "push_next"}, m);
      else
        allow(line, ops, {"uops", "loop", "dst", "src", "imm", "unused_imm"},
              {"overlap", "pop_prev", "pop_next", "push_prev", "push_next"}, m);
      a.deps = deps(ops);
      a.overlap = ops.flags.count("overlap") > 0;
      set_loops(line, ops, a.uop_begin, a.uop_end, a.loop_out, a.loop_in);
      a.dst = factors(line, ops, "dst");
      a.src = factors(line, ops, "src");
      a.use_imm = ops.values.count("imm") > 0;
      if (int(a.use_imm) + int(ops.values.count("unused_imm") > 0) +
              int(ops.values.count("bounds") > 0) >
          1)
        error(pos(line, head), bounded ? "give one of imm=, unused_imm= and bounds="
                                       : "give either imm= or unused_imm=, not both");
      if (ops.values.count("bounds")) {
        const auto [lo, hi] = value_pair(line, ops, "bounds", {0, 0});
        for (int64_t b : {lo, hi})
          if (!clip_bound_fits(b))
            error({line.number, column_of(ops, "bounds", line)},
                  fmt::format("bound {} outside [-128, 127] (each bound is 8 signed bits)", b));
        a.imm = clip_imm(static_cast<int32_t>(lo), static_cast<int32_t>(hi));
      } else {
        const char *imm_key = a.use_imm ? "imm" : "unused_imm";
        int64_t imm = value(line, ops, imm_key, 0);
        if (imm < INT32_MIN || imm > INT32_MAX)
          error({line.number, column_of(ops, imm_key, line)}, "immediate out of range");
        a.imm = static_cast<int32_t>(imm);
      }
      p.insn = a;
    } else if (m == "finish") {
      allow(line, ops, {}, kDeps, m);
      p.insn = FinishInsn{deps(ops)};
    } else {
      error(pos(line, head), fmt::format("unknown instruction '{}' (known: load.MEM, store.out, "
                                         "gemm, alu.OP, finish)",
                                         m));
    }
    // Range-check every field now so the error points at this line.
    if (p.dram_operand.empty()) check_encodable(line, p.insn);
    insns_.push_back(std::move(p.insn));
    pending_.push_back({p.dram_operand, p.dram_at, line});
  }

  void check_encodable(const Line &line, const Insn &insn) const {
    try {
      encode(config_, insn);
    } catch (const Error &e) {
      error(pos(line, line.tokens[0]), e.what());
    }
  }

  void set_loops(const Line &line, const Operands &ops, uint32_t &begin, uint32_t &end,
                 uint32_t &out, uint32_t &in) const {
    auto it = ops.values.find("uops");
    if (it == ops.values.end())
      error(pos(line, line.tokens[0]), fmt::format("'{}' needs uops=BEGIN:END",
                                                   line.tokens[0].text));
    const std::string &v = it->second.first;
    auto colon = v.find(':');
    if (colon == std::string::npos)
      error({line.number, it->second.second}, "uops takes BEGIN:END");
    begin = field(line, it->second.second, "uops", number(line, line.tokens[0], v.substr(0, colon),
                                                          it->second.second));
    end = field(line, it->second.second, "uops",
                number(line, line.tokens[0], v.substr(colon + 1),
                       it->second.second + static_cast<int>(colon) + 1));
    auto loop = value_pair(line, ops, "loop", {1, 1});
    out = field(line, column_of(ops, "loop", line), "loop", loop.first);
    in = field(line, column_of(ops, "loop", line), "loop", loop.second);
  }

  LoopFactors factors(const Line &line, const Operands &ops, const char *key) const {
    auto f = value_pair(line, ops, key, {0, 0});
    int column = column_of(ops, key, line);
    return {field(line, column, key, f.first), field(line, column, key, f.second)};
  }

  Program build() {
    ProgramBuilder builder(config_);
    std::map<std::string, const RegionDecl *> by_name;
    for (const auto &r : regions_) {
      region_offsets_[r.name] =
          uint64_t{builder.add_region(r.name, r.kind, r.mem, r.elements)} * config_.tile_bytes(r.mem);
      by_name[r.name] = &r;
      if (r.random_seed) {
        std::mt19937 gen(*r.random_seed);
        auto bytes = builder.region_bytes(r.name);
        for (auto &b : bytes) b = static_cast<uint8_t>(gen() & 0xff);
        builder.set_region_bytes(r.name, bytes);
      }
    }
    // Each region's bytes are taken and put back once, however many .data lines fill it (a
    // disassembled program has one line per 32 bytes: copying the region per line was
    // quadratic in its size).
    std::map<std::string, std::vector<uint8_t>> filled;
    for (const auto &d : data_) {
      if (!by_name.count(d.region)) error(d.at, fmt::format("unknown region '{}'", d.region));
      auto [it, first] = filled.try_emplace(d.region);
      if (first) it->second = builder.region_bytes(d.region);
      std::vector<uint8_t> &bytes = it->second;
      if (d.offset > bytes.size() || d.bytes.size() > bytes.size() - d.offset)
        error(d.at, fmt::format("data [{}, {}) overflows region '{}' of {} bytes", d.offset,
                                d.offset + d.bytes.size(), d.region, bytes.size()));
      std::copy(d.bytes.begin(), d.bytes.end(), bytes.begin() + static_cast<ptrdiff_t>(d.offset));
    }
    for (const auto &[name, bytes] : filled) builder.set_region_bytes(name, bytes);
    const uint32_t uop_base = builder.uop_region_base();
    for (const auto &u : uops_) builder.add_uop(u);
    for (size_t i = 0; i < insns_.size(); ++i) {
      const auto &pend = pending_[i];
      if (!pend.dram_operand.empty()) {
        auto &m = std::get<MemInsn>(insns_[i]);
        m.dram_base = resolve_dram(pend, m.mem, uop_base);
        check_encodable(pend.line, insns_[i]);
      }
      builder.emit(insns_[i]);
    }
    return builder.finish();
  }

  // "N", "name", "name+k", "@uops", "@uops+k" -> an element index of kind `mem`.
  uint32_t resolve_dram(const PendingRef &pend, MemId mem, uint32_t uop_base) const {
    std::string text = pend.dram_operand;
    int64_t k = 0;
    auto plus = text.find('+');
    if (plus != std::string::npos) {
      k = number(pend.line, pend.line.tokens[0], text.substr(plus + 1),
                 pend.dram_at.column + static_cast<int>(plus) + 1);
      text = text.substr(0, plus);
    }
    int64_t base = 0;
    if (text == "@uops") {
      if (mem != MemId::kUop) error(pend.dram_at, "@uops can only be loaded by load.uop");
      base = uop_base;
    } else if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0]))) {
      if (plus != std::string::npos) error(pend.dram_at, "write N or NAME+k, not N+k");
      base = number(pend.line, pend.line.tokens[0], text, pend.dram_at.column);
    } else {
      const RegionDecl *region = nullptr;
      for (const auto &r : regions_)
        if (r.name == text) region = &r;
      if (!region)
        error(pend.dram_at, fmt::format("unknown region '{}' (declare it with .region)", text));
      const uint64_t offset = region_offsets_.at(region->name);
      base = static_cast<int64_t>(offset / config_.tile_bytes(mem));
    }
    const int64_t address = base + k;
    if (address < 0 || address > UINT32_MAX)
      error(pend.dram_at, fmt::format("DRAM address {} is out of range", address));
    return static_cast<uint32_t>(address);
  }

  const HwConfig &config_;
  std::string source_;
  std::vector<RegionDecl> regions_;
  std::vector<DataDecl> data_;
  std::vector<Uop> uops_;
  std::vector<Insn> insns_;
  std::vector<PendingRef> pending_;
  std::map<std::string, uint64_t> region_offsets_;  // byte offset of each laid-out region
};

}  // namespace
}  // namespace vacc::isa

namespace vacc::isa {

Program assemble(const HwConfig &config, const std::string &text, const std::string &source) {
  return Assembler(config, source).run(text);
}

Program assemble_file(const HwConfig &config, const std::string &path) {
  return assemble(config, read_file(path, "assembly file"), path);
}

}  // namespace vacc::isa
