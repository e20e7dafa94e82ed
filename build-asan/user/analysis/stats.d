build-asan/user/analysis/stats.o: user/analysis/stats.c \
 user/analysis/stats.h
user/analysis/stats.h:
