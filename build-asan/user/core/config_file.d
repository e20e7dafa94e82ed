build-asan/user/core/config_file.o: user/core/config_file.c \
 user/core/config_file.h user/core/options.h user/analysis/rules.h
user/core/config_file.h:
user/core/options.h:
user/analysis/rules.h:
