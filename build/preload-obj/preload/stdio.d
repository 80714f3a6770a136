build/preload-obj/preload/stdio.o: preload/stdio.c preload/pw_preload.h \
 preload/../common/pw_clock.h preload/../common/pw_record.h \
 preload/../common/pw_ring.h preload/../common/pw_clock.h \
 preload/../common/pw_record.h
preload/pw_preload.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
preload/../common/pw_ring.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
