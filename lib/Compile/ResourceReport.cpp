//===- ResourceReport.cpp - what the backends say about a kernel ----------===//
#include "mla/ResourceReport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <vector>

using namespace llvm;

std::map<std::string, mlir::mla::PtxasResources>
mlir::mla::parsePtxasReport(StringRef report) {
  // ptxas prints one block per entry function, opened by "Compiling entry
  // function '<name>'".
  std::map<std::string, PtxasResources> out;
  std::string current;
  SmallVector<StringRef> lines;
  report.split(lines, '\n');
  for (StringRef line : lines) {
    size_t at = line.find("Compiling entry function '");
    if (at != StringRef::npos) {
      current = line.substr(at + 26)
                    .take_until([](char c) { return c == '\''; })
                    .str();
      out[current];
      continue;
    }
    // "<n> <key>": the number before the key, after a space, comma or colon.
    auto grab = [&](StringRef key, int64_t PtxasResources::*field) {
      size_t k = line.find(key);
      if (k == StringRef::npos || current.empty())
        return;
      StringRef rest = line.substr(0, k).rtrim();
      StringRef num = rest.substr(rest.find_last_of(" ,:") + 1);
      int64_t v;
      if (!num.getAsInteger(10, v))
        out[current].*field = v;
    };
    grab(" registers", &PtxasResources::registers);
    grab(" bytes spill stores", &PtxasResources::spillStoreBytes);
    grab(" bytes stack frame", &PtxasResources::stackBytes);
  }
  return out;
}

std::map<std::string, mlir::mla::AmdhsaResources>
mlir::mla::parseAmdhsaMetadata(StringRef isa) {
  // amdhsa.kernels is a YAML list: a record starts at "  - " and its keys
  // come in alphabetical order, .name among them (argument records nest
  // deeper).
  std::map<std::string, AmdhsaResources> out;
  std::string name;
  AmdhsaResources record;
  auto flush = [&] {
    if (!name.empty())
      out[name] = record;
    name.clear();
    record = AmdhsaResources();
  };
  bool inKernels = false;
  SmallVector<StringRef> lines;
  isa.split(lines, '\n');
  for (StringRef line : lines) {
    StringRef t = line.trim();
    if (t.starts_with("amdhsa.kernels:")) {
      inKernels = true;
      continue;
    }
    if (!inKernels)
      continue;
    if (t.starts_with("amdhsa.") || t == "..." ||
        t.starts_with(".end_amdgpu_metadata"))
      break;
    if (line.starts_with("  - "))
      flush();
    t.consume_front("- ");
    t = t.trim();
    if (t.consume_front(".name:")) {
      name = t.trim().str();
      continue;
    }
    static const std::pair<StringRef, int64_t AmdhsaResources::*> keys[] = {
        {".vgpr_count:", &AmdhsaResources::vgprs},
        {".agpr_count:", &AmdhsaResources::agprs},
        {".sgpr_count:", &AmdhsaResources::sgprs},
        {".vgpr_spill_count:", &AmdhsaResources::vgprSpills},
        {".sgpr_spill_count:", &AmdhsaResources::sgprSpills},
        {".private_segment_fixed_size:", &AmdhsaResources::scratchBytes},
        {".group_segment_fixed_size:", &AmdhsaResources::ldsStaticBytes}};
    for (auto [key, field] : keys) {
      StringRef rest = t;
      int64_t v;
      if (rest.consume_front(key) && !rest.trim().getAsInteger(10, v))
        record.*field = v;
    }
  }
  flush();
  return out;
}

int64_t mlir::mla::sm90ProgramsPerSm(int64_t registers, int64_t threads,
                                     int64_t sharedBytes) {
  int64_t regs = registers < 1 ? 255 : registers;
  threads = std::max<int64_t>(1, threads);
  int64_t perSm =
      std::min<int64_t>({65536 / (regs * threads), 2048 / threads, 32});
  if (sharedBytes)
    perSm = std::min<int64_t>(perSm, 228 * 1024 / (sharedBytes + 1024));
  return perSm;
}

mlir::mla::CdnaOccupancy mlir::mla::cdnaOccupancy(int64_t vgprs, int64_t agprs,
                                                  int64_t threads,
                                                  int64_t waveSize,
                                                  int64_t sharedBytes,
                                                  int64_t ldsBytesPerCu) {
  int64_t regs = vgprs + agprs;
  int64_t byRegs =
      std::min<int64_t>(8, 512 / std::max<int64_t>(8, (regs + 7) / 8 * 8));
  int64_t wavesPerGroup =
      std::max<int64_t>(1, threads / std::max<int64_t>(1, waveSize));
  int64_t groupsByLds = sharedBytes ? ldsBytesPerCu / sharedBytes : 64;
  int64_t groups = std::min<int64_t>(byRegs * 4 / wavesPerGroup, groupsByLds);
  return {std::min<int64_t>(byRegs, (groups * wavesPerGroup + 3) / 4),
          std::max<int64_t>(1, groups)};
}

std::pair<int64_t, int64_t> mlir::mla::kvLoopInstructions(StringRef isa,
                                                          StringRef kernel) {
  size_t at = isa.find((Twine("\n") + kernel + ":\n").str());
  if (at == StringRef::npos)
    return {0, 0};
  StringRef body = isa.substr(at + kernel.size() + 3);
  body = body.substr(0, body.find(".Lfunc_end"));
  std::map<std::string, int64_t> labels;
  std::vector<StringRef> instrs;
  SmallVector<StringRef> lines;
  body.split(lines, '\n');
  for (StringRef l : lines) {
    StringRef t = l.trim();
    if (t.empty() || t.starts_with(";") || t.starts_with("//"))
      continue;
    if (t.starts_with(".LBB") && t.ends_with(":")) {
      labels[t.drop_back().str()] = instrs.size();
      continue;
    }
    if (t.starts_with("."))
      continue; // directives
    instrs.push_back(t);
  }
  int64_t first = -1, last = -1;
  for (auto [i, t] : llvm::enumerate(instrs))
    if (t.starts_with("v_mfma")) {
      if (first < 0)
        first = i;
      last = i;
    }
  if (first < 0)
    return {0, 0};
  // Loops are backward branches: a loop runs from its header label to the
  // last branch back to it (a loop body with branches of its own, such as
  // the mxfp4 decode's, can jump back to the header from several places;
  // the first of them is not the loop's end). Keep the smallest loop that
  // spans all MFMAs.
  std::map<int64_t, int64_t> loopEnd; // header -> last backward branch to it
  for (auto [i, t] : llvm::enumerate(instrs)) {
    if (!t.starts_with("s_branch") && !t.starts_with("s_cbranch"))
      continue;
    auto it = labels.find(t.substr(t.find_last_of(" \t") + 1).str());
    if (it == labels.end() || it->second > static_cast<int64_t>(i))
      continue;
    loopEnd[it->second] = std::max<int64_t>(loopEnd[it->second], i);
  }
  std::pair<int64_t, int64_t> best{-1, -1};
  for (auto [lo, hi] : loopEnd)
    if (lo <= first && hi >= last &&
        (best.first < 0 || hi - lo < best.second - best.first))
      best = {lo, hi};
  if (best.first < 0)
    return {0, 0};
  int64_t mfma = 0;
  for (int64_t i = best.first; i <= best.second; ++i)
    mfma += instrs[i].starts_with("v_mfma");
  return {best.second - best.first + 1, mfma};
}
