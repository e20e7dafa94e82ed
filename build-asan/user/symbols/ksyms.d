build-asan/user/symbols/ksyms.o: user/symbols/ksyms.c user/symbols/syms.h
user/symbols/syms.h:
