build-asan/user/core/outdir.o: user/core/outdir.c user/lib/atomic_file.h \
 user/core/outdir.h
user/lib/atomic_file.h:
user/core/outdir.h:
