#!/usr/bin/env bash
# Runs one libFuzzer target for a time budget (ctest's fuzz-spec /
# fuzz-launcher, `make fuzz`):
#
#   run-fuzzer.sh FUZZER NAME SECONDS SOURCE_DIR WORK_DIR
#
# MLA_FUZZ_SECONDS overrides SECONDS. The corpus grows in
# WORK_DIR/NAME-corpus across runs; the seeds are every input that once
# crashed (test/fuzz/regressions/NAME-*, run first on every run), and for
# the spec fuzzer kernels/*.mlir and every lit input (split at `// -----`);
# the spec fuzzer gets the dialect's dictionary. A crash, leak, sanitizer report or timeout fails the
# run and leaves WORK_DIR/NAME-crash-* (reproduce: FUZZER that-file). The
# executions and the corpus size are appended to WORK_DIR/fuzz-totals.txt.
set -euo pipefail
fuzzer=$1 name=$2 seconds=${MLA_FUZZ_SECONDS:-$3} src=$4 work=$5
corpus=$work/$name-corpus seeds=$work/$name-seeds
mkdir -p "$corpus"
rm -rf "$seeds" && mkdir -p "$seeds"
cp "$src"/test/fuzz/regressions/"$name"-* "$seeds"/ 2>/dev/null || true
extra=()
if [ "$name" = spec ]; then
  python3 "$src/test/fuzz/split-seeds.py" "$seeds" "$src"/kernels/*.mlir \
    $(find "$src/test" -name '*.mlir' | sort)
  extra=(-dict="$src/test/fuzz/mla.dict" -max_len=8192)
else
  extra=(-max_len=4096)
fi
log=$work/$name-last.log
echo "fuzz-$name: ${seconds}s, corpus $corpus ($(ls "$corpus" | wc -l) inputs)"
status=0
"$fuzzer" "${extra[@]}" -max_total_time="$seconds" -timeout=120 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$work/$name-" "$corpus" "$seeds" >"$log" 2>&1 ||
  status=$?
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
tail -n 25 "$log"
echo "$(date -u +%Y-%m-%dT%H:%MZ) fuzz-$name ${seconds}s execs ${execs:-0} corpus $(ls "$corpus" | wc -l) status $status" |
  tee -a "$work/fuzz-totals.txt"
exit $status
