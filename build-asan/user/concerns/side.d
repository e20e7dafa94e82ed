build-asan/user/concerns/side.o: user/concerns/side.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h build-asan/infertrace.skel.h \
 user/concerns/sched.h user/concerns/side.h user/core/recording.h \
 user/side/side_sampler.h
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
user/concerns/side.h:
user/core/recording.h:
user/side/side_sampler.h:
