build-asan/user/core/target.o: user/core/target.c user/core/comm.h \
 user/core/target.h
user/core/comm.h:
user/core/target.h:
