#!/usr/bin/env python3
"""Fails unless every verifier message of the dialect's sources (every .cpp
file of lib/Dialect) is expected somewhere in test/Dialect/invalid.mlir.

A message is the first string literal of an emitOpError(...) call, or of the
`<< "..."` that follows emitOpError(); only its text up to the first
streamed value is required to appear inside an expected-error."""
import re
import sys

import pathlib

dialect_dir, tests = pathlib.Path(sys.argv[1]), sys.argv[2]
sources = sorted(dialect_dir.glob("*.cpp"))
code = "\n".join(p.read_text() for p in sources)
expected = "\n".join(
    m.group(1) for m in re.finditer(r"expected-error[^{]*\{\{(.*)\}\}", open(tests).read()))

messages = []
for m in re.finditer(r'emitOpError\(\s*("(?:[^"\\]|\\.)*")?\s*\)?\s*(?:<<\s*("(?:[^"\\]|\\.)*"))?', code):
    literal = m.group(1) or m.group(2)
    if literal:
        messages.append(bytes(literal[1:-1], "utf-8").decode("unicode_escape"))

missing = [msg for msg in messages if msg.strip() and msg not in expected]
for msg in missing:
    print(f"not covered by invalid.mlir: {msg!r}")
print(f"{len(messages) - len(missing)} of {len(messages)} verifier messages "
      f"covered in {len(sources)} source files")
sys.exit(1 if missing or not messages or not sources else 0)
