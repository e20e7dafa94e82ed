build-asan/user/analysis/rules.o: user/analysis/rules.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h user/outputs/folded.h \
 user/analysis/rules.h
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
user/outputs/folded.h:
user/analysis/rules.h:
