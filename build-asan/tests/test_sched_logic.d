build-asan/tests/test_sched_logic: tests/unit/test_sched_logic.c \
 user/analysis/sched_logic.h
user/analysis/sched_logic.h:
