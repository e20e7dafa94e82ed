build-asan/user/probes/presets.o: user/probes/presets.c \
 user/probes/presets.h
user/probes/presets.h:
