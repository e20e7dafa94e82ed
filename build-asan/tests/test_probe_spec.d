build-asan/tests/test_probe_spec: tests/unit/test_probe_spec.c \
 user/probes/probe_spec.h
user/probes/probe_spec.h:
