#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks the documentation; run with the unit tests (tools/run_tests.py) and
by `make docs-check`. Prints one TAP line per check.

1. docs/commands.md is what tools/man2md.py makes of `BUILD/infertrace --man`
   (the option table): `make docs` writes it again after an option changed.
2. Every relative link in README.md, BENCHMARKS.md and docs/*.md names a
   file that exists and, with #anchor, a heading of that file (GitHub's
   anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 ...
   for repeats).

Usage: tools/check-docs.py [BUILD_DIR]   (default build)"""
import difflib
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", "BENCHMARKS.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))

FENCE = re.compile(r"^\s*(```|~~~)")
# [text](target) and ![alt](target); the target ends at a space or ')'
INLINE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(heading):
    """GitHub's anchor for a heading's text."""
    s = heading.strip().lower()
    s = re.sub(r"<[^>]+>", "", s)           # inline HTML
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # links keep their text
    s = re.sub(r"[^\w\- ]", "", s)          # punctuation, backticks, ...
    return s.replace(" ", "-")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fenced is None:
                    fenced = m.group(1)
                elif m.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield n, line.rstrip("\n")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out = {}, set()
        for _, line in prose_lines(path):
            m = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{base}-{k}")
        _anchors[path] = out
    return _anchors[path]


def check_links():
    bad = []
    for page in PAGES:
        path = os.path.join(ROOT, page)
        if not os.path.exists(path):
            continue
        for n, line in prose_lines(path):
            text = CODE_SPAN.sub("", line)
            targets = INLINE.findall(text)
            m = REFDEF.match(text)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I):  # http:, mailto: ...
                    continue
                file, _, anchor = t.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(dest):
                    bad.append(f"{page}:{n}: {t}: no such file")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    bad.append(f"{page}:{n}: {t}: no heading '#{anchor}' in "
                               f"{os.path.relpath(dest, ROOT)}")
    return bad


def check_commands(build):
    binary = os.path.join(build, "infertrace")
    committed = os.path.join(ROOT, "docs", "commands.md")
    if not os.access(binary, os.X_OK):
        return [f"{binary} not built"]
    man = subprocess.run([binary, "--man"], stdout=subprocess.PIPE, check=True).stdout
    made = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "man2md.py")], input=man,
                          stdout=subprocess.PIPE, check=True).stdout.decode()
    try:
        with open(committed, encoding="utf-8") as f:
            have = f.read()
    except FileNotFoundError:
        have = ""
    if have == made:
        return []
    diff = difflib.unified_diff(have.splitlines(), made.splitlines(), "docs/commands.md (committed)",
                                "docs/commands.md (from the option table)", lineterm="", n=1)
    return ["docs/commands.md differs from the option table: run 'make docs'"] + list(diff)[:60]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    checks = [("docs/commands.md matches the option table", check_commands(build)),
              (f"relative links and anchors in {len(PAGES)} pages", check_links())]
    print(f"1..{len(checks)}")
    for i, (name, problems) in enumerate(checks, 1):
        print(f"{'not ok' if problems else 'ok'} {i} - {name}")
        for p in problems:
            print(f"# {p}")
    sys.exit(1 if any(p for _, p in checks) else 0)


if __name__ == "__main__":
    main()
