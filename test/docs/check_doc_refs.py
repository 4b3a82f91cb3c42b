#!/usr/bin/env python3
"""Every reference to a named part of a page under docs/ resolves.

Code comments, specs and the docs themselves cite design and measurement
text by page and quoted name: `docs/Design.md, "Paged KV"`. This walks the
source tree (not build trees, artifacts or bench/results), finds each such
reference, and checks that the quoted name (its part on the reference's own
line, whitespace-collapsed, case-folded) occurs in that page. Prints one line
per unresolved reference and a count; exits 1 if any.

  python3 test/docs/check_doc_refs.py <source root>
"""
import os
import re
import sys

SUFFIXES = (".md", ".cpp", ".h", ".py", ".sh", ".mlir", ".td", ".txt", ".in", ".cmake", ".test")
SKIP_DIRS = {".git", "artifacts", "results", "Inputs", "__pycache__"}
# A page name, an optional comma, then an opening quote: the quoted name.
REF = re.compile(r'\b(?:docs/)?([A-Za-z]+\.md),?\s*["\u201c]([^"\u201d]*)')


def norm(text):
    return " ".join(text.split()).lower()


def main(root):
    docs_dir = os.path.join(root, "docs")
    pages = {name: norm(open(os.path.join(docs_dir, name), encoding="utf-8").read())
             for name in os.listdir(docs_dir) if name.endswith(".md")}
    refs = unresolved = 0
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for f in sorted(files):
            if not f.endswith(SUFFIXES):
                continue
            path = os.path.join(top, f)
            try:
                lines = open(path, encoding="utf-8").read().split("\n")
            except (UnicodeDecodeError, OSError):
                continue
            for n, line in enumerate(lines, 1):
                for m in REF.finditer(line):
                    page, name = m.group(1), norm(m.group(2)).rstrip(",.;:)")
                    if page not in pages or len(name) < 4:
                        continue
                    refs += 1
                    if name not in pages[page]:
                        unresolved += 1
                        print(f"{os.path.relpath(path, root)}:{n}: docs/{page} has no "
                              f"\"{m.group(2).strip()}\"")
    print(f"{refs} references to docs/ pages, {unresolved} unresolved")
    return 1 if unresolved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
