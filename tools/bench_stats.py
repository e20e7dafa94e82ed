#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Figures for tools/bench.sh, from infertrace's stacks.folded files and from
`perf script` output: the share of complete stacks (the user stack reaches a
root: main, _start, thread start, clone) and the leaf functions' sample shares.

  bench_stats.py folded FILE...        -> JSON {samples, complete, leaf: {fn: n}}
  bench_stats.py perf FILE...          (perf script text) -> the same
  bench_stats.py median N...           -> the median
  bench_stats.py compare OURS PERF     -> top-10 table (markdown) and max difference
"""
import json
import re
import statistics
import sys

ROOTS = {"main", "_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
         "start_thread", "clone", "clone3", "__clone", "__clone3", "thread_start"}


def norm(name):
    name = re.sub(r"@+GLIBC[_0-9.]*$", "", name)
    return name.replace(";", ":").replace(" ", "_")


def from_folded(paths):
    samples = complete = 0
    leaf = {}
    for path in paths:
        for line in open(path):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            n = int(n)
            frames = stack.split(";")[1:]
            user = [f for f in frames if not f.endswith("_[k]")]
            samples += n
            if any(f in ROOTS for f in user):
                complete += n
            fn = frames[-1] if frames else "[unknown]"
            leaf[fn] = leaf.get(fn, 0) + n
    return {"samples": samples, "complete": complete, "leaf": leaf}


def from_perf(paths):
    """perf script default output: a header line per sample, then one
    '\\tADDR SYM+OFF (DSO)' line per frame, leaf first, then a blank line."""
    samples = complete = 0
    leaf = {}
    for path in paths:
        frames = None
        for line in list(open(path, errors="replace")) + ["\n"]:
            if not line.strip():
                if frames is not None:
                    samples += 1
                    user = [f for f, k in frames if not k]
                    if any(f in ROOTS for f in user):
                        complete += 1
                    if frames:
                        f, k = frames[0]
                        fn = f + "_[k]" if k else f
                    else:
                        fn = "[unknown]"
                    leaf[fn] = leaf.get(fn, 0) + 1
                frames = None
                continue
            if not line.startswith((" ", "\t")):
                frames = []
                continue
            if frames is None:
                continue
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
            if not m:
                continue
            sym, dso = m.group(1), m.group(2)
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            kernel = "kernel.kallsyms" in dso or dso.startswith("[kernel")
            frames.append((norm(sym) if sym != "[unknown]" else "[unknown]", kernel))
    return {"samples": samples, "complete": complete, "leaf": leaf}


def match_key(name):
    """A name as both tools can agree on: no spaces or underscores, no
    leading return type, no trailing parameter list (perf prints neither)."""
    k = re.sub(r"[\s_]", "", name)
    if "::" in k or "<" in k:
        k = re.sub(r"^void(?=[(A-Za-z])", "", k)
        k = re.sub(r"(const)?(\[clone[^]]*\])?$", "", k)
        if k.endswith(")") and not k.endswith("()") or k.endswith("()"):
            depth, i = 0, len(k) - 1
            while i >= 0:
                depth += {")": 1, "(": -1}.get(k[i], 0)
                if depth == 0:
                    break
                i -= 1
            if i > 0:
                k = k[:i]
    return k


def merged(stats):
    """Leaf counts keyed without spaces and underscores: perf and infertrace
    print demangled C++ names with different spacing ("void (anonymous
    namespace)::f" vs "void(anonymous_namespace)::f")."""
    out = {}
    for f, n in stats["leaf"].items():
        k = match_key(f)
        name, m = out.get(k, (f, 0))
        out[k] = (name, m + n)
    stats["leaf"] = {name: n for name, n in out.values()}
    stats["key"] = {match_key(f): f for f in stats["leaf"]}
    return stats


def compare(ours, perf):
    a, b = merged(json.load(open(ours))), merged(json.load(open(perf)))
    b["leaf"] = {b["key"][k]: b["leaf"][b["key"][k]] for k in b["key"]}
    b["leaf"] = {a["key"].get(match_key(f), f): n for f, n in b["leaf"].items()}
    ta, tb = a["samples"] or 1, b["samples"] or 1
    top = sorted(a["leaf"], key=lambda f: -a["leaf"][f])[:10]
    print("| function | infertrace % | perf % | difference (points) |")
    print("|---|---|---|---|")
    worst = 0.0
    for f in top:
        sa, sb = 100.0 * a["leaf"][f] / ta, 100.0 * b["leaf"].get(f, 0) / tb
        worst = max(worst, abs(sa - sb))
        print(f"| `{f[:70]}` | {sa:.1f} | {sb:.1f} | {sa - sb:+.1f} |")
    print(f"\nLargest difference among our top 10: {worst:.1f} points "
          f"({a['samples']} samples vs {b['samples']}).")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "folded":
        print(json.dumps(from_folded(args)))
    elif cmd == "perf":
        print(json.dumps(from_perf(args)))
    elif cmd == "median":
        print(f"{statistics.median(float(x) for x in args):.4f}")
    elif cmd == "compare":
        compare(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
