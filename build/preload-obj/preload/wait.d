build/preload-obj/preload/wait.o: preload/wait.c preload/pw_preload.h \
 preload/../common/pw_clock.h preload/../common/pw_record.h \
 preload/../common/pw_ring.h preload/../common/pw_clock.h \
 preload/../common/pw_record.h
preload/pw_preload.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
preload/../common/pw_ring.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
