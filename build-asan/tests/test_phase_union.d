build-asan/tests/test_phase_union: tests/unit/test_phase_union.c \
 user/concerns/probes.h
user/concerns/probes.h:
