build-asan/user/core/processes.o: user/core/processes.c \
 user/core/processes.h include/infertrace.h user/core/target.h \
 user/lib/vec.h
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/lib/vec.h:
