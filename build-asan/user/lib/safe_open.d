build-asan/user/lib/safe_open.o: user/lib/safe_open.c \
 user/lib/safe_open.h
user/lib/safe_open.h:
