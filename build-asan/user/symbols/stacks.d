build-asan/user/symbols/stacks.o: user/symbols/stacks.c \
 build-asan/infertrace.skel.h user/core/comm.h user/symbols/stacks.h \
 user/outputs/folded.h include/infertrace.h user/symbols/syms.h \
 user/core/tracer.h user/core/options.h user/analysis/rules.h
build-asan/infertrace.skel.h:
user/core/comm.h:
user/symbols/stacks.h:
user/outputs/folded.h:
include/infertrace.h:
user/symbols/syms.h:
user/core/tracer.h:
user/core/options.h:
user/analysis/rules.h:
