# The fake CUDA libraries (tests/fakes/README.md) and the workloads linked against them. Included by the top
# Makefile when the CUDA headers are there; everything it adds is in FAKES, which `all` builds. Defines no
# rule before `all` can matter: the top Makefile sets .DEFAULT_GOAL.
#
# The fakes stand in for NVIDIA's libraries, so they are plain shared libraries (ALL_CFLAGS, never
# SAN_FLAGS), with the real SONAMEs and symbol versions, in $(BUILD)/fakes next to their dev symlinks.

FAKES_DIR := $(BUILD)/fakes
FAKES_OBJ_DIR := $(BUILD)/fakes-obj
FAKE_CFLAGS := $(ALL_CFLAGS) -isystem $(CUDA_INC) -Itests/fakes
# -Bsymbolic-functions: a call inside a fake never goes through the PLT, so nothing can interpose it.
FAKE_LDFLAGS := -shared -Wl,-z,defs -Wl,-Bsymbolic-functions

# library stem:SONAME version:source stem (tests/fakes/<source>.c and its version script <source>.map).
# libcudart first; the others link against it (DT_NEEDED libcudart.so.13). libcupti is built next to
# libcudart, where the profiler looks for it; no program links against it (profilers load it).
# libcudnn.so.9 is a shim that finds every function in libcudnn_graph.so.9 (built from cudnn.c) by dlsym, as
# NVIDIA's finds them in its sub-libraries.
FAKE_LIB_SPECS := cudart:13:cudart cublas:13:cublas cublasLt:13:cublaslt cudnn:9:cudnn_shim cudnn_graph:9:cudnn \
	nccl:2:nccl cupti:13:cupti cuda:1:cuda
fake_stem = $(word 1,$(subst :, ,$(1)))
fake_src = $(word 3,$(subst :, ,$(1)))
fake_soname = lib$(call fake_stem,$(1)).so.$(word 2,$(subst :, ,$(1)))
FAKE_LIBS := $(foreach s,$(FAKE_LIB_SPECS),$(FAKES_DIR)/$(call fake_soname,$(s)))
FAKE_LINKS := $(foreach s,$(FAKE_LIB_SPECS),$(FAKES_DIR)/lib$(call fake_stem,$(s)).so)
FAKE_CUDART := $(FAKES_DIR)/libcudart.so.13

CUDA_WORKLOAD_SRC := $(wildcard tests/workloads/cuda_*.c)
CUDA_WORKLOAD_BIN := $(CUDA_WORKLOAD_SRC:tests/workloads/%.c=$(BUILD)/workloads/%)
CUDA_WORKLOAD_LIBS := -L$(FAKES_DIR) -lcudart -lcublas -lcublasLt -lcudnn -lnccl

FAKES := $(FAKE_LIBS) $(FAKE_LINKS) $(CUDA_WORKLOAD_BIN)

$(FAKES_OBJ_DIR)/%.o: tests/fakes/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(FAKE_CFLAGS) -c $< -o $@

# The fake CUPTI names callback ids as cuptiGetCallbackName does: every runtime and driver function of the
# headers' cbid lists, {"name", cbid} without the _v<version> suffix, generated from the headers themselves.
$(FAKES_OBJ_DIR)/cupti_cbid_names.h: $(CUDA_INC)/cupti_runtime_cbid.h $(CUDA_INC)/cupti_driver_cbid.h
	@mkdir -p $(dir $@)
	$(call say,GEN,$@){ \
	  echo '#define FC_RUNTIME_NAMES \\'; \
	  sed -n 's/^ *CUPTI_RUNTIME_TRACE_CBID_\([A-Za-z0-9_]*\)_v[0-9]* *= *\([0-9]*\),.*/	{ "\1", \2 }, \\/p' $(CUDA_INC)/cupti_runtime_cbid.h; \
	  echo; echo '#define FC_DRIVER_NAMES \\'; \
	  sed -n 's/^ *CUPTI_DRIVER_TRACE_CBID_\(cu[A-Za-z0-9_]*\) *= *\([0-9]*\),.*/	{ "\1", \2 }, \\/p' $(CUDA_INC)/cupti_driver_cbid.h; \
	  echo; } > $@
$(FAKES_OBJ_DIR)/cupti.o: $(FAKES_OBJ_DIR)/cupti_cbid_names.h
$(FAKES_OBJ_DIR)/cupti.o: FAKE_CFLAGS += -I$(FAKES_OBJ_DIR)

# The shim's exports, one forwarding trampoline each: the sub-library's functions.
$(FAKES_OBJ_DIR)/cudnn_shim_names.h: $(FAKES_DIR)/libcudnn_graph.so.9
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)nm -D --defined-only $< | \
	  awk '$$2 == "T" && $$3 ~ /^cudnn/ { sub(/@.*/, "", $$3); print "FAKE_CUDNN_FORWARD(" $$3 ")" }' > $@
$(FAKES_OBJ_DIR)/cudnn_shim.o: $(FAKES_OBJ_DIR)/cudnn_shim_names.h
$(FAKES_OBJ_DIR)/cudnn_shim.o: FAKE_CFLAGS += -I$(FAKES_OBJ_DIR)

# $(1) = one of FAKE_LIB_SPECS: the library and its unversioned dev symlink.
define FAKE_LIB_RULES
$(FAKES_DIR)/$(call fake_soname,$(1)): $(FAKES_OBJ_DIR)/$(call fake_src,$(1)).o tests/fakes/$(call fake_src,$(1)).map \
		$(if $(filter cudart,$(call fake_stem,$(1))),,$(FAKE_CUDART))
	@mkdir -p $$(dir $$@)
	$$(call say,LD,$$@)$$(CC) $$(FAKE_LDFLAGS) -Wl,-soname,$(call fake_soname,$(1)) \
		-Wl,--version-script=tests/fakes/$(call fake_src,$(1)).map -o $$@ $$< \
		$(if $(filter cudart,$(call fake_stem,$(1))),,$(FAKE_CUDART) -Wl,-rpath,'$$$$ORIGIN') -ldl -lpthread

$(FAKES_DIR)/lib$(call fake_stem,$(1)).so: $(FAKES_DIR)/$(call fake_soname,$(1))
	$$(call say,LN,$$@)ln -sfn $(call fake_soname,$(1)) $$@
endef
$(foreach s,$(FAKE_LIB_SPECS),$(eval $(call FAKE_LIB_RULES,$(s))))

# Linked as a program links against CUDA: -l against the dev symlinks, so DT_NEEDED holds the SONAMEs and
# the references carry the symbol versions; -rdynamic puts the kernels' host stubs in .dynsym, where
# cudaFuncGetName (dladdr) finds them; the RUNPATH finds the fakes without LD_LIBRARY_PATH.
$(BUILD)/workloads/cuda_%: tests/workloads/cuda_%.c $(FAKE_LIBS) $(FAKE_LINKS)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -isystem $(CUDA_INC) -o $@ $< $(CUDA_WORKLOAD_LIBS) -rdynamic \
		-Wl,-rpath,'$$ORIGIN/../fakes' -lpthread

# cuda_cupti_check loads libcupti with dlopen, as a profiler does: never -lcupti.
$(BUILD)/workloads/cuda_cupti_check: tests/workloads/cuda_cupti_check.c $(FAKE_LIBS) $(FAKE_LINKS)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -isystem $(CUDA_INC) -o $@ $< $(CUDA_WORKLOAD_LIBS) -rdynamic \
		-Wl,-rpath,'$$ORIGIN/../fakes' -ldl -lpthread

# cuda_second_cupti_client links libcupti, as libtorch does (its CUPTI client is torch.profiler's).
$(BUILD)/workloads/cuda_second_cupti_client: tests/workloads/cuda_second_cupti_client.c $(FAKE_LIBS) $(FAKE_LINKS)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -isystem $(CUDA_INC) -o $@ $< $(CUDA_WORKLOAD_LIBS) -lcupti -rdynamic \
		-Wl,-rpath,'$$ORIGIN/../fakes' -lpthread

# driver_api: the driver API alone, opened with dlopen (no libcudart, no RUNPATH: LD_LIBRARY_PATH decides).
$(BUILD)/workloads/driver_api: tests/workloads/driver_api.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -o $@ $< -ldl
FAKES += $(BUILD)/workloads/driver_api

# nvcc_*.cu workloads: programs as nvcc builds them (its host stubs, module registration and launches), linked
# against the shared runtime with no RUNPATH, so that LD_LIBRARY_PATH picks the toolkit's runtime or the fakes.
# Each is built twice: as it is, and with --default-stream per-thread (<name>_ptsz). Only where nvcc is.
NVCC ?= $(CUDA_HOME)/bin/nvcc
HAVE_NVCC := $(if $(wildcard $(NVCC)),1,0)
ifeq ($(HAVE_NVCC),1)
NVCC_WORKLOAD_SRC := $(wildcard tests/workloads/nvcc_*.cu)
NVCC_WORKLOAD_BIN := $(NVCC_WORKLOAD_SRC:tests/workloads/%.cu=$(BUILD)/workloads/%) \
	$(NVCC_WORKLOAD_SRC:tests/workloads/%.cu=$(BUILD)/workloads/%_ptsz)
FAKES += $(NVCC_WORKLOAD_BIN)

$(BUILD)/workloads/nvcc_%: tests/workloads/nvcc_%.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC,$@)$(NVCC) -cudart shared -o $@ $<

$(BUILD)/workloads/nvcc_%_ptsz: tests/workloads/nvcc_%.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC,$@)$(NVCC) -cudart shared --default-stream per-thread -o $@ $<
endif
