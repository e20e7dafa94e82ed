build-asan/tests/test_rules: tests/unit/test_rules.c \
 user/analysis/rules.h
user/analysis/rules.h:
