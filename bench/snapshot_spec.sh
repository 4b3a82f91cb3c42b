#!/bin/bash
# A copy of a compiled spec under another name, for A/B timing in one
# process (bench/wgmma_h200.py --specs SPEC,SPEC_SUFFIX): the spec's PTX
# from $SRC (default $MLA_ARTIFACTS: before the compiler changes; or a
# folder that mla-compile wrote with another option) with every symbol
# renamed, assembled again into $MLA_ARTIFACTS, its manifest pointed at
# the copy.
#
# With PTX=FILE, FILE is the variant's PTX, its symbols renamed already
# (bench/probe_fp8_sm90a.sh's hand-edited variants).
#
#   bash bench/snapshot_spec.sh SPEC SUFFIX     # here, before make artifacts
#   SRC=/tmp/kf bash bench/snapshot_spec.sh SPEC SUFFIX
set -eu
s=$1 n=$2
A=${MLA_ARTIFACTS:-artifacts} PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
SRC=${SRC:-$A}
arch=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$SRC/$s.ptx")
if [ -z "${PTX:-}" ]; then
  PTX=$A/${s}_$n.ptx
  sed -e "s/${s}_/${s}_${n}_/g" "$SRC/$s.ptx" > "$PTX"
fi
"$PTXAS" -arch="$arch" -O3 "$PTX" -o "$A/${s}_$n.cubin" > /dev/null
python3 - "$A" "$s" "$n" "$SRC" <<'PY'
import json, sys
a, s, n, src = sys.argv[1:]
d = json.loads(json.dumps(json.load(open(f"{src}/{s}.json")))
               .replace(s + "_stage", f"{s}_{n}_stage").replace(s + ".cubin", f"{s}_{n}.cubin"))
d["spec"] = f"{s}_{n}"
json.dump(d, open(f"{a}/{s}_{n}.json", "w"), indent=1)
PY
echo "$A/${s}_$n: $(grep -c '^\.visible \.entry' "$PTX") kernels ($arch)"
