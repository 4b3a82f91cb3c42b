"""Seed corpus for mla-fuzz-spec: each input file, split at `// -----` (the
--split-input-file marker), one seed file per piece.

    split-seeds.py OUT_DIR FILE...
"""
import hashlib
import os
import re
import sys

out = sys.argv[1]
n = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for piece in re.split(r"^// -----\s*$", text, flags=re.M):
        data = piece.strip().encode()
        if not data:
            continue
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(out, name), "wb") as f:
            f.write(data + b"\n")
        n += 1
print(f"split-seeds: {n} seeds from {len(sys.argv) - 2} files")
