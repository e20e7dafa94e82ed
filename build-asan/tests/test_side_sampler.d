build-asan/tests/test_side_sampler: tests/unit/test_side_sampler.c \
 tests/unit/../fixtures/sysfs_fixture.h user/side/side_sampler.h
tests/unit/../fixtures/sysfs_fixture.h:
user/side/side_sampler.h:
