build-asan/user/outputs/profile.o: user/outputs/profile.c \
 user/lib/atomic_file.h user/outputs/profile.h
user/lib/atomic_file.h:
user/outputs/profile.h:
