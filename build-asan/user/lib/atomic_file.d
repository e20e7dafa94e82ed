build-asan/user/lib/atomic_file.o: user/lib/atomic_file.c \
 user/lib/atomic_file.h
user/lib/atomic_file.h:
