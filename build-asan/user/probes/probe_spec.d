build-asan/user/probes/probe_spec.o: user/probes/probe_spec.c \
 user/probes/probe_spec.h user/lib/safe_open.h user/core/target.h \
 user/symbols/syms.h
user/probes/probe_spec.h:
user/lib/safe_open.h:
user/core/target.h:
user/symbols/syms.h:
