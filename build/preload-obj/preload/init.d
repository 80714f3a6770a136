build/preload-obj/preload/init.o: preload/init.c \
 preload/../common/pw_rank.h preload/../common/pw_session.h \
 preload/pw_preload.h preload/../common/pw_clock.h \
 preload/../common/pw_record.h preload/../common/pw_ring.h \
 preload/../common/pw_clock.h preload/../common/pw_record.h
preload/../common/pw_rank.h:
preload/../common/pw_session.h:
preload/pw_preload.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
preload/../common/pw_ring.h:
preload/../common/pw_clock.h:
preload/../common/pw_record.h:
