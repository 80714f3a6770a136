build/preload-obj/common/pw_record.o: common/pw_record.c \
 common/pw_record.h
common/pw_record.h:
