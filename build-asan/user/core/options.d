build-asan/user/core/options.o: user/core/options.c \
 user/core/config_file.h user/core/options.h user/analysis/rules.h
user/core/config_file.h:
user/core/options.h:
user/analysis/rules.h:
