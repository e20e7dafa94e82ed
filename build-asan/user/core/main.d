build-asan/user/core/main.o: user/core/main.c user/core/record.h \
 user/analysis/report.h
user/core/record.h:
user/analysis/report.h:
