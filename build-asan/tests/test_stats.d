build-asan/tests/test_stats: tests/unit/test_stats.c \
 user/analysis/stats.h
user/analysis/stats.h:
