build/preload-obj/common/pw_session.o: common/pw_session.c \
 common/pw_session.h
common/pw_session.h:
