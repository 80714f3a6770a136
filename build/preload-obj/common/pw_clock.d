build/preload-obj/common/pw_clock.o: common/pw_clock.c common/pw_clock.h
common/pw_clock.h:
