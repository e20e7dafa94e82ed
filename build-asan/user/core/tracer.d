build-asan/user/core/tracer.o: user/core/tracer.c \
 build-asan/infertrace.skel.h user/core/tracer.h include/infertrace.h \
 user/core/options.h user/analysis/rules.h user/lib/vec.h
build-asan/infertrace.skel.h:
user/core/tracer.h:
include/infertrace.h:
user/core/options.h:
user/analysis/rules.h:
user/lib/vec.h:
