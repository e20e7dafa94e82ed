build-asan/user/side/throttle.o: user/side/throttle.c \
 user/side/throttle.h user/side/gpu_nvml.h
user/side/throttle.h:
user/side/gpu_nvml.h:
