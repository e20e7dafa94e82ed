build-asan/tests/test_side_readers: tests/unit/test_side_readers.c \
 tests/unit/../fixtures/sysfs_fixture.h user/side/gpu_jetson.h \
 user/side/sysfs_readers.h user/side/gpu_nvml.h user/side/sysfs_readers.h \
 user/side/throttle.h
tests/unit/../fixtures/sysfs_fixture.h:
user/side/gpu_jetson.h:
user/side/sysfs_readers.h:
user/side/gpu_nvml.h:
user/side/sysfs_readers.h:
user/side/throttle.h:
