#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The include structure of user/: layers a reader can see.

Each folder of user/ has a layer (tools/layers.txt, lowest first). A file
may include its own folder's files and lower layers' files. The check
fails on
  - an include that goes up a layer (a lower folder including a higher one);
  - a circle: files (a .c and its .h are one module) that depend on each
    other through any path, or folders that do. A file depends on the files
    it includes and, with --objects BUILD_DIR, on the files whose functions
    and data it uses (from the objects' symbol tables, nm), which catches
    a call through a header of another name.
Violations that exist already are listed in tools/layers-baseline.txt, one
per line, so the check fails on new ones only; a listed one that is gone
is reported so the list can shrink.

    tools/check_layers.py [--root DIR] [--objects BUILD_DIR] [--layers FILE]
                          [--baseline FILE] [--write-baseline]

Exit status 0 clean, 1 a new violation, 2 bad input.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(path):
    layers = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                layers.append(line)
    return {name: i for i, name in enumerate(layers)}


def sources(root):
    """{path relative to root: text} for every .c and .h under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".c", ".h")):
                p = os.path.join(d, f)
                with open(p, errors="replace") as fh:
                    out[os.path.relpath(p, root)] = fh.read()
    return out


def resolve(name, src, files, by_base):
    """The file an include names: a path from root ("analysis/rules.h"), one
    beside the including file, or a unique basename found on a folder's
    include path. None: not ours (include/, generated, system)."""
    if name in files:
        return name
    beside = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if beside in files:
        return beside
    hits = by_base.get(os.path.basename(name), [])
    return hits[0] if len(hits) == 1 else None


def module(path):
    return os.path.splitext(path)[0]


def folder(path):
    d = os.path.dirname(path)
    return d.split(os.sep)[0] if d else "."


def sccs(graph):
    """Strongly connected components of graph {node: set(nodes)} with more
    than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def symbol_uses(root, objdir):
    """[(source, source)]: the first file uses a symbol the second defines,
    from the objects under objdir/user (one per source: user/X/Y.c is
    objdir/user/X/Y.o)."""
    defined, used = {}, {}
    base = os.path.join(objdir, "user")
    for d, _, files in os.walk(base):
        for f in files:
            if not f.endswith(".o"):
                continue
            obj = os.path.join(d, f)
            src = os.path.relpath(obj, base)[:-2] + ".c"
            if not os.path.exists(os.path.join(root, src)):
                continue
            out = subprocess.run(["nm", "-P", obj], stdout=subprocess.PIPE, text=True, check=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                name, kind = parts[0], parts[1]
                if kind == "U":
                    used.setdefault(src, set()).add(name)
                elif kind in "TDBRC":
                    defined[name] = src
    return sorted({(s, defined[n]) for s, names in used.items() for n in names
                   if n in defined and defined[n] != s})


def violations(root, layers, objdir=None):
    files = sources(root)
    by_base = {}
    for p in files:
        by_base.setdefault(os.path.basename(p), []).append(p)
    found, unknown = [], set()
    modules, folders = {}, {}

    def depends(src, dst, how):
        """src depends on dst (how: "includes", "uses")."""
        fs, fd = folder(src), folder(dst)
        unknown.update(f for f in (fs, fd) if f not in layers)
        if module(src) != module(dst):
            modules.setdefault(module(src), set()).add(module(dst))
        if fs != fd:
            folders.setdefault(fs, set()).add(fd)
            if fs in layers and fd in layers and layers[fd] > layers[fs]:
                found.append(f"up a layer: {src} {how} {dst} ({fs} is below {fd})")

    for src, text in sorted(files.items()):
        for name in INCLUDE.findall(text):
            dst = resolve(name, src, files, by_base)
            if dst is not None:
                depends(src, dst, "includes")
    for src, dst in symbol_uses(root, objdir) if objdir else []:
        depends(src, dst, "uses")
    found = sorted(set(found), key=found.index)
    for comp in sccs(folders):
        found.append("folder circle: " + " <-> ".join(comp))
    for comp in sccs(modules):
        found.append("file circle: " + " <-> ".join(comp))
    return found, sorted(unknown)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(here, "..", "user"))
    ap.add_argument("--objects", help="a build directory: add the objects' symbol dependencies")
    ap.add_argument("--layers", default=os.path.join(here, "layers.txt"))
    ap.add_argument("--baseline", default=os.path.join(here, "layers-baseline.txt"))
    ap.add_argument("--write-baseline", action="store_true",
                    help="write the current violations as the baseline")
    a = ap.parse_args()
    try:
        layers = read_layers(a.layers)
    except OSError as e:
        print(f"check_layers: {a.layers}: {e.strerror}", file=sys.stderr)
        return 2
    if not os.path.isdir(a.root):
        print(f"check_layers: {a.root}: not a directory", file=sys.stderr)
        return 2
    found, unknown = violations(a.root, layers, a.objects)
    if unknown:
        print(f"check_layers: folders with no layer: {', '.join(unknown)}; add them to {a.layers}",
              file=sys.stderr)
        return 1
    if a.write_baseline:
        with open(a.baseline, "w") as f:
            f.write("# Include violations that exist already (tools/check_layers.py): each\n"
                    "# line is one to remove; a new one fails make lint.\n")
            f.writelines(v + "\n" for v in found)
        print(f"check_layers: {len(found)} violations written to {a.baseline}")
        return 0
    known = set()
    if os.path.exists(a.baseline):
        with open(a.baseline) as f:
            known = {l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")}
    new = [v for v in found if v not in known]
    gone = sorted(known - set(found))
    for v in new:
        print(f"check_layers: {v}", file=sys.stderr)
    for v in gone:
        print(f"check_layers: fixed, remove from the baseline: {v}")
    print(f"  LAYERS   user/: {len(found)} known violations, {len(new)} new")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
