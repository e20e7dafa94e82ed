build-asan/user/side/gpu_jetson.o: user/side/gpu_jetson.c \
 user/side/gpu_jetson.h user/side/sysfs_readers.h
user/side/gpu_jetson.h:
user/side/sysfs_readers.h:
