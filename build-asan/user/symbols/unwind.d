build-asan/user/symbols/unwind.o: user/symbols/unwind.c \
 user/symbols/syms.h user/symbols/unwind.h user/lib/safe_open.h \
 user/lib/vec.h
user/symbols/syms.h:
user/symbols/unwind.h:
user/lib/safe_open.h:
user/lib/vec.h:
