//===- ManifestSpec.cpp - a manifest as the launcher's descriptor ---------===//
#include "mla/ManifestSpec.h"

using namespace llvm;
using namespace mlir::mla;

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

const char *ManifestSpec::keep(StringRef s) {
  strings_.push_back(s.str());
  return strings_.back().c_str();
}

static int gridDim(StringRef g) {
  if (g == "batch")
    return MLA_GRID_BATCH;
  if (g == "splits")
    return MLA_GRID_SPLITS;
  if (g == "heads")
    return MLA_GRID_HEADS;
  if (g == "rows")
    return MLA_GRID_ROWS;
  if (g == "batch_row_groups")
    return MLA_GRID_BATCH_ROW_GROUPS;
  return MLA_GRID_ONE;
}

Expected<std::unique_ptr<ManifestSpec>>
ManifestSpec::read(const json::Object &m, std::string code) {
  std::unique_ptr<ManifestSpec> s(new ManifestSpec);
  auto num = [](const json::Object &o, StringRef key) {
    return o.getInteger(key).value_or(0);
  };
  auto str = [](const json::Object &o, StringRef key) {
    return o.getString(key).value_or("");
  };
  std::optional<int64_t> version = m.getInteger("manifest_version");
  if (version != kManifestVersion)
    return err("the manifest's manifest_version is " +
               (version ? std::to_string(*version) : std::string("missing")) +
               "; this reader takes " + std::to_string(kManifestVersion) +
               " (recompile with this mla-compile)");
  if (!m.getString("spec") || !m.getString("chip") || !m.getArray("kernels"))
    return err("the manifest lacks spec, chip or kernels");
  s->code_ = std::move(code);
  if (const json::Array *c = m.getArray("split_candidates"))
    for (const json::Value &v : *c)
      s->candidates_.push_back(v.getAsInteger().value_or(1));
  for (const json::Value &kv : *m.getArray("kernels")) {
    const json::Object *k = kv.getAsObject();
    if (!k || !k->getArray("args"))
      return err("a kernel of the manifest has no args");
    std::vector<mla_arg_desc> args;
    for (const json::Value &av : *k->getArray("args")) {
      const json::Object &a = *av.getAsObject();
      mla_arg_desc d{};
      d.name = s->keep(str(a, "name"));
      StringRef kind = str(a, "kind");
      d.kind = kind == "memref"       ? MLA_ARG_MEMREF
               : kind == "i64"        ? MLA_ARG_I64
               : kind == "tensor_map" ? MLA_ARG_TENSOR_MAP
                                      : MLA_ARG_F32;
      d.rank = num(a, "rank");
      if (const json::Array *shape = a.getArray("shape"))
        for (size_t i = 0; i < shape->size() && i < MLA_MAX_RANK; ++i)
          d.shape[i] = (*shape)[i].getAsInteger().value_or(-1);
      args.push_back(d);
    }
    s->args_.push_back(std::move(args));
    mla_kernel_desc d{};
    d.name = s->keep(str(*k, "name"));
    d.stage = num(*k, "stage");
    d.mask_free = str(*k, "variant") == "mask_free";
    d.dispatch_kv_multiple = num(*k, "dispatch_kv_multiple");
    if (const json::Array *g = k->getArray("grid"))
      for (size_t i = 0; i < g->size() && i < 2; ++i)
        d.grid[i] = gridDim((*g)[i].getAsString().value_or(""));
    d.block_threads = num(*k, "block_threads");
    d.shared_bytes = num(*k, "shared_bytes");
    const json::Object *r = k->getObject("resources");
    d.programs_per_cu = r ? num(*r, "programs_per_cu") : 1;
    d.dependent_launch = k->getBoolean("dependent_launch").value_or(false);
    d.cluster_programs = k->getInteger("cluster_programs").value_or(0);
    d.num_args = s->args_.back().size();
    d.args = s->args_.back().data();
    s->kernels_.push_back(d);
  }
  mla_target_desc &t = s->target_;
  t.chip = s->keep(str(m, "chip"));
  t.code = reinterpret_cast<const unsigned char *>(s->code_.data());
  t.code_size = s->code_.size();
  t.compute_units = num(m, "compute_units");
  t.num_kernels = s->kernels_.size();
  t.kernels = s->kernels_.data();
  mla_spec_desc &d = s->spec_;
  d.abi_version = MLA_LAUNCHER_ABI_VERSION;
  d.name = s->keep(str(m, "spec"));
  d.num_heads = num(m, "num_heads");
  d.qk_dim = num(m, "qk_dim");
  d.v_dim = num(m, "v_dim");
  d.block_n = num(m, "block_n");
  d.q_seq_len = num(m, "q_seq_len");
  d.block_m = num(m, "block_m");
  StringRef layout = str(m, "kv_layout");
  d.kv_layout = layout == "token_indices" ? MLA_KV_TOKEN_INDICES
                : layout == "block_table" ? MLA_KV_BLOCK_TABLE
                : layout == "contiguous"  ? MLA_KV_CONTIGUOUS
                                          : -1;
  d.page_size = num(m, "page_size");
  d.softmax_scale = m.getNumber("softmax_scale").value_or(0);
  d.q_type = s->keep(str(m, "q_type"));
  d.kv_type = s->keep(str(m, "kv_type"));
  d.out_type = s->keep(str(m, "out_type"));
  d.has_kv_scale = str(m, "kv_scale") == "per_tensor";
  d.num_split_candidates = s->candidates_.size();
  d.split_candidates = s->candidates_.data();
  if (const json::Object *model = m.getObject("split_cost_model")) {
    d.program_overhead = model->getNumber("program_overhead").value_or(0);
    d.combine_launch = model->getNumber("combine_launch").value_or(0);
    d.combine_per_partial = model->getNumber("combine_per_partial").value_or(0);
    d.combine_per_split = model->getNumber("combine_per_split").value_or(0);
  }
  d.num_targets = 1;
  d.targets = &s->target_;
  d.one_launch = m.getBoolean("one_launch").value_or(false);
  return s;
}
