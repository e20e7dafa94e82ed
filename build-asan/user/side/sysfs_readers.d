build-asan/user/side/sysfs_readers.o: user/side/sysfs_readers.c \
 user/side/sysfs_readers.h
user/side/sysfs_readers.h:
