build-asan/user/side/gpu_nvml.o: user/side/gpu_nvml.c \
 user/side/gpu_nvml.h
user/side/gpu_nvml.h:
