#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Prints the shape of a `record` output directory, without measured values:
profile.json's key paths (arrays by their first element), the cycle count,
phase names, the roots of the folded stacks and the kinds of trace events.
Two recordings of the same fixture have the same shape; `make test` uses it
to check that every output keeps its form (tests/integration/test_output_shape.py)."""
import json
import os
import re
import sys


def key_paths(v, prefix="", out=None, dynamic=("phases", "counts", "temp_c", "power_w", "by_phase",
                                                "per_phase", "by_leaf_object", "blocked_by_phase", "paths")):
    out = set() if out is None else out
    if isinstance(v, dict):
        for k, x in v.items():
            name = "*" if prefix.rsplit(".", 1)[-1] in dynamic else k
            p = f"{prefix}.{name}" if prefix else name
            out.add(p)
            key_paths(x, p, out)
    elif isinstance(v, list) and v:
        for x in v:
            key_paths(x, prefix + "[]", out)
    return out


def folded_roots(path):
    roots = set()
    with open(path) as f:
        for line in f:
            stack = line.rsplit(" ", 1)[0]
            roots.add(stack.split(";", 1)[0])
    return sorted(roots)


def shape(d):
    p = json.load(open(os.path.join(d, "profile.json")))
    s = {
        "files": sorted(os.listdir(d)),
        "profile_keys": sorted(key_paths(p)),
        "cycles": len(p.get("cycles", [])),
        "phases": sorted(p.get("phases", {})),
        "stack_roots": {f: folded_roots(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".folded")},
    }
    t = json.load(open(os.path.join(d, "trace.json")))
    s["trace_events"] = sorted({(e.get("ph"), e.get("cat", e.get("name") if e.get("ph") == "M" else ""))
                                for e in t["traceEvents"]})
    svg = open(os.path.join(d, "flamegraph.svg")).read()
    s["svg"] = {"root": svg.lstrip().startswith(("<?xml", "<svg")), "rects": len(re.findall("<rect", svg)) > 0}
    html = open(os.path.join(d, "report.html")).read()
    s["html_sections"] = re.findall(r"<h2>([^<]*)</h2>", html)
    return s


if __name__ == "__main__":
    json.dump(shape(sys.argv[1]), sys.stdout, indent=1, sort_keys=True, default=list)
    print()
