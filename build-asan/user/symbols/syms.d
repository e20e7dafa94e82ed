build-asan/user/symbols/syms.o: user/symbols/syms.c user/symbols/syms.h \
 user/lib/safe_open.h
user/symbols/syms.h:
user/lib/safe_open.h:
