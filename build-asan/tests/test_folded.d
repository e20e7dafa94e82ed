build-asan/tests/test_folded: tests/unit/test_folded.c \
 user/lib/atomic_file.h user/outputs/folded.h user/symbols/stacks.h \
 include/infertrace.h
user/lib/atomic_file.h:
user/outputs/folded.h:
user/symbols/stacks.h:
include/infertrace.h:
