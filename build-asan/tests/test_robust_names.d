build-asan/tests/test_robust_names: tests/unit/test_robust_names.c \
 user/lib/atomic_file.h user/core/outdir.h
user/lib/atomic_file.h:
user/core/outdir.h:
