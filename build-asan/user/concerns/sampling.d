build-asan/user/concerns/sampling.o: user/concerns/sampling.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h build-asan/infertrace.skel.h \
 user/symbols/stacks.h user/outputs/folded.h user/symbols/syms.h \
 user/symbols/unwind.h
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
build-asan/infertrace.skel.h:
user/symbols/stacks.h:
user/outputs/folded.h:
user/symbols/syms.h:
user/symbols/unwind.h:
