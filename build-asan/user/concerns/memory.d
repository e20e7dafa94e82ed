build-asan/user/concerns/memory.o: user/concerns/memory.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h build-asan/infertrace.skel.h \
 user/concerns/sched.h user/analysis/sched_logic.h
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
build-asan/infertrace.skel.h:
user/concerns/sched.h:
user/analysis/sched_logic.h:
