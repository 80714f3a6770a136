# profwrap: one Makefile for the whole tree. `make V=1` shows the commands; `make SAN=1` builds the
# collector, CLI and tests with ASan+UBSan (the preload stays plain: it runs inside other programs).
CC ?= cc
PREFIX ?= /usr/local
SAN ?= 0
V ?= 0

ifeq ($(V),0)
Q = @
say = @printf '  %-8s %s\n' $(1) $(2);
else
Q =
say =
endif

BUILD := build
# Truncated error messages are acceptable; the warning would force every snprintf into error handling.
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-format-truncation -Wno-unknown-warning-option
BASE_CFLAGS := -std=c11 -O2 -g -fPIC $(WARN) -MMD -MP
CFLAGS ?=
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
SAN_FLAGS :=
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BUILD := build-san
endif
# The preload is never sanitized: it is loaded into arbitrary programs and must not bring a runtime along.
PRELOAD_CFLAGS := $(ALL_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=0

# The CUDA toolkit's headers give the wrappers and the fake CUDA libraries the real types; no CUDA library is
# linked. Without them, libprofwrap.so is built without the GPU library wrappers.
CUDA_HOME ?= /usr/local/cuda
CUDA_INC := $(CUDA_HOME)/include
HAVE_CUDA := $(if $(wildcard $(CUDA_INC)/cuda_runtime_api.h),1,0)
GPU_WRAPPER_SRC := preload/cudart.c preload/cublas.c preload/cudnn.c preload/nccl.c preload/cupti.c \
	preload/cupti_client.c preload/nvtx.c \
	preload/cupti_records.c

COMMON_SRC := $(wildcard common/*.c)
PRELOAD_SRC := $(wildcard preload/*.c)
ifeq ($(HAVE_CUDA),0)
PRELOAD_SRC := $(filter-out $(GPU_WRAPPER_SRC),$(PRELOAD_SRC))
endif
COLLECTOR_LIB_SRC := $(filter-out collector/main.c,$(wildcard collector/*.c collector/*/*.c))
CLI_SRC := $(wildcard cli/*.c)

COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/preload-obj/%.o) $(COMMON_SRC:%.c=$(BUILD)/preload-obj/%.o)
COLLECTOR_LIB_OBJ := $(COLLECTOR_LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
# test_cupti_records converts records of the real CUPTI structs: it needs the CUDA headers.
ifeq ($(HAVE_CUDA),0)
UNIT_SRC := $(filter-out tests/unit/test_cupti_records.c,$(UNIT_SRC))
endif
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# The fuzz targets (tests/fuzz/<target>.c; replay.c is the driver): each also builds with the normal compiler as
# a unit binary that replays its corpus (tests/fuzz/corpus/<target>) once, so the corpus is a regression test.
FUZZ_TARGETS := $(filter-out replay,$(basename $(notdir $(wildcard tests/fuzz/*.c))))
FUZZ_REPLAY := $(BUILD)/fuzz-replay
UNIT_BIN += $(FUZZ_TARGETS:%=$(FUZZ_REPLAY)/fuzz_%)
# cuda_*.c workloads link against the fake CUDA libraries (tests/fakes/fakes.mk builds them).
WORKLOAD_SRC := $(filter-out tests/workloads/cuda_%.c,$(wildcard tests/workloads/*.c))
# mpi_*.c workloads are built with mpicc (OpenMPI's or MPICH's, driving $(CC)), and only where it is found: the
# MPI test then fails saying so (make deps installs it).
MPICC ?= mpicc
HAVE_MPICC := $(if $(shell command -v $(MPICC) 2>/dev/null),1,0)
WORKLOAD_SRC := $(filter-out tests/workloads/mpi_%.c,$(WORKLOAD_SRC))
WORKLOAD_BIN := $(WORKLOAD_SRC:tests/workloads/%.c=$(BUILD)/workloads/%)
ifeq ($(HAVE_MPICC),1)
WORKLOAD_BIN += $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/mpi_*.c))
endif
# bench/launchloop.c links against the fake CUDA runtime (built only with the CUDA headers).
BENCH_SRC := $(filter-out bench/launchloop.c,$(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

# The default build puts the three binaries at the top; SAN=1 or another BUILD=DIR (several trees built side
# by side) keeps them in the build directory.
ifeq ($(BUILD),build)
OUT_PREFIX :=
else
OUT_PREFIX := $(BUILD)/
endif
LIB := $(OUT_PREFIX)libprofwrap.so
COLLECTOR := $(OUT_PREFIX)profwrap-collector
CLI := $(OUT_PREFIX)profwrap

.PHONY: all deps test unit integration tsan bench demo docs install clean e2e
.DEFAULT_GOAL := all

ifeq ($(HAVE_CUDA),1)
include tests/fakes/fakes.mk
endif
all: $(LIB) $(COLLECTOR) $(CLI) $(WORKLOAD_BIN) $(FAKES)

$(BUILD)/preload-obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PRELOAD_CFLAGS) -c $< -o $@

$(GPU_WRAPPER_SRC:%.c=$(BUILD)/preload-obj/%.o): PRELOAD_CFLAGS += -isystem $(CUDA_INC)

$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Wno-unused-parameter -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(LIB): $(PRELOAD_OBJ)
	$(call say,LD,$@)$(CC) -shared -o $@ $^ -Wl,-z,defs -Wl,-soname,libprofwrap.so -ldl -lpthread -lrt

# The collector symbolises call stacks with elfutils (libdw); the CLI links the collector's code for `report`.
COLLECTOR_LIBS := -ldw -lelf -lsqlite3 -lm
$(COLLECTOR): $(BUILD)/collector/main.o $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	$(call say,LD,$@)$(CC) $(SAN_FLAGS) -o $@ $^ $(COLLECTOR_LIBS)

$(CLI): $(CLI_OBJ) $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	$(call say,LD,$@)$(CC) $(SAN_FLAGS) -o $@ $^ $(COLLECTOR_LIBS)

$(BUILD)/tests/test_cupti_records.o: ALL_CFLAGS += -isystem $(CUDA_INC)
$(BUILD)/tests/cupti_records.o: preload/cupti_records.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -isystem $(CUDA_INC) -c $< -o $@
$(BUILD)/tests/test_cupti_records: $(BUILD)/tests/cupti_records.o

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	$(call say,LD,$@)$(CC) $(SAN_FLAGS) -o $@ $^ -lcmocka $(COLLECTOR_LIBS) -lpthread

$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -o $@ $< -lpthread

# Without -fPIC, as MPI programs are built: the program then has its own copy of OpenMPI's predefined objects
# (MPI_COMM_WORLD is &ompi_mpi_comm_world), made by a copy relocation, which the preload must use.
$(BUILD)/workloads/mpi_%: tests/workloads/mpi_%.c
	@mkdir -p $(dir $@)
	$(call say,MPICC,$@)OMPI_CC=$(CC) MPICH_CC=$(CC) $(MPICC) $(filter-out -fPIC,$(ALL_CFLAGS)) -o $@ $<

$(BUILD)/bench/%: bench/%.c $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c %.o,$^) -lpthread $(COLLECTOR_LIBS)

# Installs what building and testing need on a fresh Debian machine (as root), once.
deps:
	$(Q)scripts/install-deps.sh

unit: $(UNIT_BIN)
	$(Q)fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; python3 scripts/check_layout.py || fail=1; exit $$fail

integration: all
	$(Q)PROFWRAP_BIN_DIR=$(abspath $(or $(OUT_PREFIX),.)) PROFWRAP_WORKLOADS=$(abspath $(BUILD)/workloads) \
		PROFWRAP_FAKES=$(if $(FAKES),$(abspath $(BUILD)/fakes)) CUDA_HOME=$(CUDA_HOME) tests/integration/run.sh

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BIN)
	$(Q)$(MAKE) --no-print-directory unit integration

# ThreadSanitizer over the unit tests of what threads share without locks: the ring's lanes (producers,
# the consumer, the shared lane's try-lock) and the capture window's policy. Built apart, in build-tsan.
TSAN_BUILD := build-tsan
TSAN_FLAGS := -fsanitize=thread -O1
TSAN_BIN := $(TSAN_BUILD)/tests/test_ring $(TSAN_BUILD)/tests/test_capture_policy
TSAN_COMMON_OBJ := $(COMMON_SRC:%.c=$(TSAN_BUILD)/%.o)

$(TSAN_BUILD)/common/%.o: common/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -c $< -o $@

$(TSAN_BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -Wno-unused-parameter -c $< -o $@

$(TSAN_BUILD)/tests/%: $(TSAN_BUILD)/tests/%.o $(TSAN_COMMON_OBJ)
	$(call say,LD,$@)$(CC) $(TSAN_FLAGS) -o $@ $^ -lcmocka -lpthread

.SECONDARY: $(TSAN_COMMON_OBJ) $(TSAN_BIN:%=%.o)

tsan: deps $(TSAN_BIN)
	$(Q)fail=0; for t in $(TSAN_BIN); do TSAN_OPTIONS=halt_on_error=1 $$t || fail=1; done; exit $$fail

# PyTorch and Lightning from PyPI in a virtual environment reused by every clone, then the e2e test.
e2e: all
	$(Q)PROFWRAP_BIN_DIR=$(abspath $(or $(OUT_PREFIX),.)) PROFWRAP_WORKLOADS=$(abspath $(BUILD)/workloads) scripts/e2e.sh

ifeq ($(HAVE_CUDA),1)
BENCH_GPU_BIN := $(BUILD)/bench/launchloop
$(BUILD)/bench/launchloop: bench/launchloop.c $(FAKES)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -isystem $(CUDA_INC) -rdynamic -o $@ $< -L$(BUILD)/fakes -lcudart \
		-Wl,-rpath,'$$ORIGIN/../fakes'
endif

bench: deps all $(BENCH_BIN) $(BENCH_GPU_BIN)
	$(Q)PROFWRAP_BIN_DIR=$(abspath $(or $(OUT_PREFIX),.)) PROFWRAP_BENCH_BIN=$(abspath $(BUILD)/bench) \
		PROFWRAP_WORKLOADS=$(abspath $(BUILD)/workloads) bench/run.sh

demo: deps all
	$(Q)scripts/demo.sh

# The report excerpts of docs/*.md, made again from bundled workloads (test_docs_excerpts checks them).
docs: deps all
	$(Q)python3 scripts/docs_excerpts.py

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	install -m 755 profwrap profwrap-collector $(DESTDIR)$(PREFIX)/bin/
	install -m 755 libprofwrap.so $(DESTDIR)$(PREFIX)/lib/

clean:
	rm -rf build build-san build-tsan libprofwrap.so profwrap profwrap-collector

$(FUZZ_REPLAY)/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -DPW_FUZZ_CORPUS='"$(abspath tests/fuzz/corpus)"' -c $< -o $@

$(FUZZ_REPLAY)/fuzz_%: $(FUZZ_REPLAY)/%.o $(FUZZ_REPLAY)/replay.o $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	$(call say,LD,$@)$(CC) $(SAN_FLAGS) -o $@ $^ $(COLLECTOR_LIBS) -lpthread

# `make fuzz`: each target built with clang's libFuzzer, ASan and UBSan, run FUZZ_SECONDS over a copy of its
# corpus (tests/fuzz/<target>.dict as its dictionary where there is one). A crash, leak, sanitizer report,
# broken check or input slower than 20 s fails the run; the input is kept in $(BUILD)/fuzz/crashes/ and
# $(FUZZ_REPLAY)/fuzz_<target> FILE replays it. New inputs found are left in $(BUILD)/fuzz/corpus/<target>.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_OBJ := $(patsubst $(BUILD)/%,$(BUILD)/fuzz/obj/%,$(COLLECTOR_LIB_OBJ) $(COMMON_OBJ))
.PHONY: fuzz fuzz-corpus
.PRECIOUS: $(FUZZ_REPLAY)/%.o $(BUILD)/fuzz/obj/%.o

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(ALL_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/bin/%: $(BUILD)/fuzz/obj/tests/fuzz/%.o $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(call say,FUZZLD,$@)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(COLLECTOR_LIBS) -lpthread

fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/bin/%)
	$(Q)fail=0; for t in $(FUZZ_TARGETS); do \
		work=$(BUILD)/fuzz/corpus/$$t; rm -rf $$work; mkdir -p $$work $(BUILD)/fuzz/crashes; \
		cp tests/fuzz/corpus/$$t/* $$work/; \
		dict=; if [ -f tests/fuzz/$$t.dict ]; then dict=-dict=tests/fuzz/$$t.dict; fi; \
		printf '  %-8s %s (%s s)\n' FUZZ $$t $(FUZZ_SECONDS); \
		if $(BUILD)/fuzz/bin/$$t $$dict -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 \
			-max_len=65536 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crashes/$$t- \
			$$work >$(BUILD)/fuzz/$$t.log 2>&1; then \
			sed -n 's/^stat::number_of_executed_units: */    executions: /p' $(BUILD)/fuzz/$$t.log; \
		else \
			fail=1; echo "  $$t FAILED, the end of $(BUILD)/fuzz/$$t.log:"; tail -n 40 $(BUILD)/fuzz/$$t.log; \
		fi; \
	done; exit $$fail

# `make fuzz-corpus`: the seeds (tests/fuzz/corpus/<target>/seed-*) made again from real runs of the workloads.
$(BUILD)/fuzz/segments: tests/fuzz/mkcorpus/segments.c $(COLLECTOR_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $(filter %.c %.o,$^) $(COLLECTOR_LIBS) -lpthread

fuzz-corpus: all $(BUILD)/fuzz/segments
	$(Q)tests/fuzz/mkcorpus/mkcorpus.py $(abspath $(or $(OUT_PREFIX),.)) $(abspath $(BUILD)/workloads) \
		$(BUILD)/fuzz/segments tests/fuzz/corpus

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
