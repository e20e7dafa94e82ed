build-asan/user/outputs/folded.o: user/outputs/folded.c \
 user/lib/atomic_file.h user/outputs/folded.h user/lib/vec.h
user/lib/atomic_file.h:
user/outputs/folded.h:
user/lib/vec.h:
