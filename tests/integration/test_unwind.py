# SPDX-License-Identifier: BSD-2-Clause
"""User stacks through code without frame pointers: a fixture built with
-fomit-frame-pointer -O2 and a known 10-deep chain (main -> chain_8 .. chain_1
-> spin). With --call-graph dwarf the stacks reach main; with fp they stop at
the leaf; profile.json's stack-quality figures say which."""
import unittest

from common import fixture, need_root, record, sh

CHAIN = ["main"] + [f"chain_{i}" for i in range(8, 0, -1)] + ["spin"]


# the program's calls in nostart.c, root first: a stack's program frames
# are the start of one of them
NOSTART_CALLS = [["_start", "nostart_main", "run", "spin"], ["_start", "nostart_main", "run", "now_s"]]


def functions(exe):
    """[(start address, name)] of exe's functions, by address."""
    out = []
    for line in sh(["nm", "-n", exe]).splitlines():
        words = line.split()
        if len(words) == 3 and words[1] in ("t", "T", "w", "W"):
            out.append((int(words[0], 16), words[2]))
    return out


def function_at(funcs, addr):
    """The function holding addr."""
    name = None
    for start, fn in funcs:
        if start > addr:
            break
        name = fn
    return name


def user_frames(stack):
    """Frames of a folded stack without the process name and kernel frames."""
    return [f for f in stack.split(";")[1:] if not f.endswith("_[k]")]


def has_chain(stack):
    frames = user_frames(stack)
    if "main" not in frames:
        return False
    i = frames.index("main")
    return frames[i:i + len(CHAIN)] == CHAIN


class UnwindTest(unittest.TestCase):
    @need_root
    def test_dwarf_stacks_complete(self):
        r = record(["--call-graph", "dwarf", "-F", "199"], [fixture("deep_chain"), "1.5"])
        s = r.profile["samples"]
        q = s["stack_quality"]
        self.assertEqual(s["call_graph"], "dwarf")
        self.assertGreater(s["total"], 100)
        in_spin = {k: v for k, v in r.folded().items() if user_frames(k)[-1:] == ["spin"]}
        n_spin = sum(in_spin.values())
        self.assertGreater(n_spin, 0.8 * s["total"], "the fixture spins in spin()")
        full = sum(v for k, v in in_spin.items() if has_chain(k))
        self.assertGreaterEqual(full / n_spin, 0.98, f"stacks in spin() with the whole chain: {full}/{n_spin}")
        self.assertGreaterEqual(q["complete_percent"], 95.0)
        obj = q["by_leaf_object"]["deep_chain"]
        self.assertLessEqual(obj["truncated_percent"], 5.0)
        u = s["unwind"]
        for key in ("records", "copy_failed", "copy_short", "lost", "unwind_failed", "avg_unwind_us"):
            self.assertIn(key, u)
        self.assertEqual(u["records"], s["total"])
        self.assertEqual(u["lost"], 0)
        # the main thread's stack is shorter than the copy: short copies still unwind
        self.assertGreater(u["copy_short"], 0)
        # a sample can land while the process exits (its memory is going away):
        # such a copy fails and is counted; anything more is a bug
        self.assertLessEqual(u["copy_failed"], max(1, u["records"] // 100), u)

    @need_root
    def test_unnamed_root_counts_as_complete(self):
        """A stripped program with its own _start, whose call-frame
        information ends the stack (as glibc's clone3 and start_thread do, and
        like them without a name when no debug info is installed): no frame
        has a name, but the unwinder reached the outermost one, so its stacks
        are complete. The frames' names could not say so."""
        exe = fixture("nostart")
        # the same program unstripped (-s changes no address): it names the
        # stripped one's nostart+0x... frames for the checks
        funcs = functions(fixture("nostart_syms"))
        r = record(["--call-graph", "dwarf", "-F", "199"], [exe, "1.0"])
        q = r.profile["samples"]["stack_quality"]
        obj = q["by_leaf_object"]["nostart"]
        self.assertGreater(obj["samples"], 100, q)
        self.assertLessEqual(obj["truncated_percent"], 5.0, q)
        # a sample lands wherever the program is: in _start, in nostart_main
        # (or the libc it calls to parse its argument), in run, in spin or
        # now_s (or libc's clock_gettime). Every stack of the program holds
        # the calls that lead there, from _start, and none has a name
        in_run = 0
        for stack, n in r.folded().items():
            frames = user_frames(stack)
            if not frames or not frames[0].startswith("nostart+0x"):
                continue
            own = [f for f in frames if f.startswith("nostart+0x")]
            self.assertEqual(own, frames[:len(own)], f"the program's frames are its stack's root: {stack}")
            # a caller's frame is its return address (the call is the
            # byte before); the leaf's is where the sample landed
            pcs = [int(f.split("+")[1], 16) for f in own]
            chain = [function_at(funcs, pc if i == len(frames) - 1 else pc - 1) for i, pc in enumerate(pcs)]
            self.assertTrue(any(calls[:len(chain)] == chain for calls in NOSTART_CALLS), (stack, chain))
            in_run += n if chain[2:3] == ["run"] else 0
        # the fixture spins in run() for its whole second (its start-up and
        # argument parsing take microseconds)
        self.assertGreater(in_run, 0.8 * obj["samples"])

    @need_root
    def test_fp_stacks_truncated_and_reported(self):
        r = record(["--call-graph", "fp", "-F", "199"], [fixture("deep_chain"), "1.0"])
        s = r.profile["samples"]
        q = s["stack_quality"]
        self.assertEqual(s["call_graph"], "fp")
        self.assertNotIn("unwind", s)
        in_spin = {k: v for k, v in r.folded().items() if user_frames(k)[-1:] == ["spin"]}
        n_spin = sum(in_spin.values())
        self.assertGreater(n_spin, 50)
        self.assertLessEqual(sum(v for k, v in in_spin.items() if has_chain(k)) / n_spin, 0.1)
        obj = q["by_leaf_object"]["deep_chain"]
        self.assertGreaterEqual(obj["truncated_percent"], 80.0)
        self.assertLessEqual(q["complete_percent"], 20.0)

    @need_root
    def test_small_copy_truncates(self):
        """A copy smaller than the chain's frames stops the unwinding; the
        figure reports the truncation rather than a false complete stack."""
        r = record(["--call-graph", "dwarf,512", "-F", "199"], [fixture("deep_chain"), "0.8"])
        q = r.profile["samples"]["stack_quality"]
        self.assertLess(q["by_leaf_object"]["deep_chain"]["complete"],
                        q["by_leaf_object"]["deep_chain"]["samples"])
        self.assertGreater(r.profile["samples"]["unwind"]["unwind_failed"], 0)


if __name__ == "__main__":
    unittest.main()
