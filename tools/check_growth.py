#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""One way to grow a table: realloc() in user/ only inside lib/vec.h.

user/lib/vec.h grows every table (VEC_RESERVE, vec_grown with VEC_RESIZE
for arrays that share one capacity, VEC_RESIZE for an exact size). The
check fails on a call of realloc() or reallocarray() in any other file of
user/ (comments and strings aside) unless tools/growth-allowlist.txt names
the file with the reason vec.h does not fit, one "path: reason" a line. A
listed file that no longer calls realloc() is reported so the list can
shrink.

    tools/check_growth.py [--root DIR] [--allowlist FILE]

Exit status 0 clean, 1 a call outside vec.h and the list, 2 bad input.
"""
import argparse
import os
import re
import sys

CALL = re.compile(r"\b(realloc|reallocarray)\s*\(")
# comments, then string and character literals, blanked (newlines kept)
CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
VEC = os.path.join("lib", "vec.h")


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def calls(root):
    """[(path relative to root, line)] of each realloc call outside vec.h."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            if rel == VEC:
                continue
            with open(path, errors="replace") as fh:
                text = CODE.sub(blank, fh.read())
            for m in CALL.finditer(text):
                out.append((rel, text.count("\n", 0, m.start()) + 1))
    return out


def read_allowlist(path):
    """{path: reason}; a line without a reason is bad input."""
    allowed = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(":")
            if not reason.strip():
                raise ValueError(f"{path}:{n}: \"{line}\" gives no reason (path: reason)")
            allowed[name.strip()] = reason.strip()
    return allowed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(here, "..", "user"))
    ap.add_argument("--allowlist", default=os.path.join(here, "growth-allowlist.txt"))
    a = ap.parse_args()
    if not os.path.isdir(a.root):
        print(f"check_growth: {a.root}: not a directory", file=sys.stderr)
        return 2
    try:
        allowed = read_allowlist(a.allowlist) if os.path.exists(a.allowlist) else {}
    except ValueError as e:
        print(f"check_growth: {e}", file=sys.stderr)
        return 2
    found = calls(a.root)
    new = [(p, n) for p, n in found if p not in allowed]
    for p, n in new:
        print(f"check_growth: user/{p}:{n}: realloc() outside lib/vec.h: grow the table with "
              f"VEC_RESERVE (or list the file in {os.path.basename(a.allowlist)} with the reason)",
              file=sys.stderr)
    for p in sorted(set(allowed) - {p for p, _ in found}):
        print(f"check_growth: no realloc() left, remove from the allowlist: {p}")
    print(f"  GROWTH   user/: {len(found) - len(new)} allowed realloc() calls, {len(new)} new")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
