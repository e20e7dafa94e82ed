build-asan/tests/test_comm: tests/unit/test_comm.c user/core/comm.h
user/core/comm.h:
