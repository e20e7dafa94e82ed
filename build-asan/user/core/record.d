build-asan/user/core/record.o: user/core/record.c user/core/comm.h \
 user/core/outdir.h user/core/options.h user/analysis/rules.h \
 user/core/processes.h include/infertrace.h user/outputs/profile.h \
 user/core/concerns.h user/core/recording.h user/core/target.h \
 user/core/tracer.h user/core/record.h user/symbols/stacks.h \
 user/outputs/folded.h user/symbols/syms.h user/core/watchdog.h \
 build-asan/infertrace.skel.h
user/core/comm.h:
user/core/outdir.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/outputs/profile.h:
user/core/concerns.h:
user/core/recording.h:
user/core/target.h:
user/core/tracer.h:
user/core/record.h:
user/symbols/stacks.h:
user/outputs/folded.h:
user/symbols/syms.h:
user/core/watchdog.h:
build-asan/infertrace.skel.h:
