build-asan/user/outputs/outputs_svg.o: user/outputs/outputs_svg.c \
 user/outputs/outputs.h user/outputs/folded.h
user/outputs/outputs.h:
user/outputs/folded.h:
