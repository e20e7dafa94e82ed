# SPDX-License-Identifier: BSD-2-Clause
"""Every key profile.json writes is in docs/profile.schema.json: recordings
are validated against the schema made strict (no member beyond those listed,
wherever an object lists its members). Sections the schema leaves open (sched,
memory, offcpu, gpu, ...: only their type) are not covered."""
import unittest

from common import fixture, need_root, record, unknown_keys


@need_root
class SchemaTest(unittest.TestCase):
    def test_cycles_phases_counts_recording(self):
        exe = fixture("experiment")
        r = record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                           "--phase", "database=database", "--count", "tokens=token"],
                          [exe, "4", "5", "3", "2", "1", "2"])
        self.assertEqual(unknown_keys(r.profile), [])

    def test_crash_recording(self):
        exe = fixture("odd_comm")
        r = record([], [exe, "0.3", "segv"], check=False)
        self.assertTrue(r.profile["crashes"])
        self.assertEqual(unknown_keys(r.profile), [])

    def test_strict_schema_rejects_an_unknown_key(self):
        # the check itself: a key nobody documented is named
        exe = fixture("experiment")
        r = record(["--cycle", "run_cycle"], [exe, "2", "1", "1", "1", "1"])
        r.profile["cycles"][0]["no_such_key"] = 1
        self.assertTrue(any("no_such_key" in e for e in unknown_keys(r.profile)))


if __name__ == "__main__":
    unittest.main()
