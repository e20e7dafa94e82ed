build-asan/user/core/comm.o: user/core/comm.c user/core/comm.h
user/core/comm.h:
