build-asan/user/side/side_sampler.o: user/side/side_sampler.c \
 user/side/side_sampler.h user/side/gpu_jetson.h \
 user/side/sysfs_readers.h user/side/gpu_nvml.h user/side/throttle.h
user/side/side_sampler.h:
user/side/gpu_jetson.h:
user/side/sysfs_readers.h:
user/side/gpu_nvml.h:
user/side/throttle.h:
