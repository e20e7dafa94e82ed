build-asan/user/concerns/probes.o: user/concerns/probes.c \
 user/core/concerns.h user/core/recording.h user/core/options.h \
 user/analysis/rules.h user/core/processes.h include/infertrace.h \
 user/core/target.h user/core/tracer.h build-asan/infertrace.skel.h \
 user/lib/safe_open.h user/core/target.h user/probes/presets.h \
 user/probes/probe_spec.h user/concerns/probes.h user/analysis/stats.h \
 user/lib/vec.h
user/core/concerns.h:
user/core/recording.h:
user/core/options.h:
user/analysis/rules.h:
user/core/processes.h:
include/infertrace.h:
user/core/target.h:
user/core/tracer.h:
build-asan/infertrace.skel.h:
user/lib/safe_open.h:
user/core/target.h:
user/probes/presets.h:
user/probes/probe_spec.h:
user/concerns/probes.h:
user/analysis/stats.h:
user/lib/vec.h:
