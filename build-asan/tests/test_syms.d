build-asan/tests/test_syms: tests/unit/test_syms.c user/symbols/syms.h
user/symbols/syms.h:
