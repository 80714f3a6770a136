build/preload-obj/common/pw_ring.o: common/pw_ring.c common/pw_ring.h \
 common/pw_clock.h common/pw_record.h
common/pw_ring.h:
common/pw_clock.h:
common/pw_record.h:
