build/preload-obj/preload/dl.o: preload/dl.c preload/pw_preload.h \
 preload/../common/pw_clock.h preload/../common/pw_record.h \
 preload/../common/pw_ring.h preload/../common/pw_clock.h \
 preload/../common/pw_record.h
preload/pw_preload.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
preload/../common/pw_ring.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
