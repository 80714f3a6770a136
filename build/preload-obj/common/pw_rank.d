build/preload-obj/common/pw_rank.o: common/pw_rank.c common/pw_rank.h
common/pw_rank.h:
