build-asan/user/analysis/report.o: user/analysis/report.c \
 user/outputs/folded.h user/outputs/profile.h user/analysis/report.h
user/outputs/folded.h:
user/outputs/profile.h:
user/analysis/report.h:
