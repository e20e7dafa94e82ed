build-asan/tests/test_side_nvml: tests/unit/test_side_nvml.c \
 tests/unit/../fixtures/sysfs_fixture.h user/side/gpu_nvml.h \
 user/side/side_sampler.h
tests/unit/../fixtures/sysfs_fixture.h:
user/side/gpu_nvml.h:
user/side/side_sampler.h:
