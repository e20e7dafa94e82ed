# SPDX-License-Identifier: BSD-2-Clause
"""Every key profile.json writes is in docs/profile.schema.json: recordings
are validated against the schema made strict (no member beyond those listed,
wherever an object lists its members). Sections the schema leaves open (sched,
memory, offcpu, gpu, ...: only their type) are not covered."""
import json
import os
import unittest

import common

SCHEMA = os.path.join(common.ROOT, "docs", "profile.schema.json")


def strict(schema):
    """The schema with additionalProperties false wherever an object lists
    its properties and says nothing of others."""
    if isinstance(schema, dict):
        if "properties" in schema and schema.get("additionalProperties", True) is True:
            schema["additionalProperties"] = False
        for v in schema.values():
            strict(v)
    elif isinstance(schema, list):
        for v in schema:
            strict(v)
    return schema


def unknown_keys(profile):
    import jsonschema
    with open(SCHEMA) as f:
        schema = strict(json.load(f))
    v = jsonschema.Draft202012Validator(schema)
    return ["/".join(map(str, e.absolute_path)) + ": " + e.message for e in v.iter_errors(profile)]


@common.need_root
class SchemaTest(unittest.TestCase):
    def test_cycles_phases_counts_recording(self):
        exe = common.build("experiment", ["experiment.c"], "-O1 -g -lpthread")
        r = common.record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                           "--phase", "database=database", "--count", "tokens=token"],
                          [exe, "4", "5", "3", "2", "1", "2"])
        self.assertEqual(unknown_keys(r.profile), [])

    def test_crash_recording(self):
        exe = common.build("odd_comm", ["odd_comm.c"], "-O1 -g -fno-omit-frame-pointer -pthread")
        r = common.record([], [exe, "0.3", "segv"], check=False)
        self.assertTrue(r.profile["crashes"])
        self.assertEqual(unknown_keys(r.profile), [])

    def test_strict_schema_rejects_an_unknown_key(self):
        # the check itself: a key nobody documented is named
        exe = common.build("experiment", ["experiment.c"], "-O1 -g -lpthread")
        r = common.record(["--cycle", "run_cycle"], [exe, "2", "1", "1", "1", "1"])
        r.profile["cycles"][0]["no_such_key"] = 1
        self.assertTrue(any("no_such_key" in e for e in unknown_keys(r.profile)))


if __name__ == "__main__":
    unittest.main()
