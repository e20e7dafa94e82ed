build-asan/user/concerns/crash.o: user/concerns/crash.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h user/symbols/syms.h
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
user/symbols/syms.h:
