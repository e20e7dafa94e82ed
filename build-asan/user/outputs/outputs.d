build-asan/user/outputs/outputs.o: user/outputs/outputs.c \
 user/lib/atomic_file.h user/core/concerns.h user/core/recording.h \
 user/core/options.h user/analysis/rules.h user/core/processes.h \
 include/infertrace.h user/core/target.h user/core/tracer.h \
 user/outputs/outputs.h user/outputs/folded.h user/concerns/probes.h \
 user/concerns/side.h user/core/recording.h user/symbols/syms.h
user/lib/atomic_file.h:
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
user/outputs/outputs.h:
user/outputs/folded.h:
user/concerns/probes.h:
user/concerns/side.h:
user/core/recording.h:
user/symbols/syms.h:
