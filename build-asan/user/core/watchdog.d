build-asan/user/core/watchdog.o: user/core/watchdog.c \
 user/core/watchdog.h
user/core/watchdog.h:
