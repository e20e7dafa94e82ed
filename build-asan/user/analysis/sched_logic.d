build-asan/user/analysis/sched_logic.o: user/analysis/sched_logic.c \
 user/analysis/sched_logic.h
user/analysis/sched_logic.h:
