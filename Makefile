# npusim — top-level build.
#
#   make            build the library, npusim, npuview, tests and tools into build/
#   make check      install missing Debian packages, build, run every test, then
#                   the same again under ASan+UBSan (build-asan/)
#   make demo       install, build and run the demo on the embedded default machine
#   make bench      run the benchmarks, write bench/results.json
#   make docs       regenerate the generated docs (docs/isa.md, docs/counters.md)
#   make test-PART  build and run only PART's Check suite (isa, frontend, ...)
#
# Variables: BUILD=dir (default build), SAN=1 (ASan+UBSan), OPT=-O2.
#
# Layout rules (so that parts can be worked on side by side):
#   PART/*.c          -> BUILD/lib/libnpu_PART.a   (library code of that part;
#                        for kernels/: kernels/ref/*.c, the golden generators)
#   PART/tools/*.c    -> BUILD/bin/NAME            (one program per file)
#   sim/cli/*.c       -> BUILD/bin/npusim          (the command)
#   viewer/*.c        -> BUILD/bin/npuview         (the SDL2 viewer)
#   tests/PART/*.c    -> BUILD/bin/test-PART       (one Check runner per part)
#   tests/units/*.c   -> BUILD/bin/test-units      (cross-part suites: link everything)
#   tests/e2e/t_*.sh  -> run by scripts/run_tests.sh
#   bench/*.c         -> BUILD/bin/bench-NAME
# libnpusim.a is every library part in one archive.

BUILD ?= build
SAN   ?= 0
OPT   ?= -O2
CC    ?= cc
NPROC := $(shell nproc 2>/dev/null || echo 2)

PKGCFLAGS := $(shell pkg-config --cflags libcjson zlib 2>/dev/null)
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) -g -Wall -Wextra -Werror \
           -Wno-missing-field-initializers -I. $(PKGCFLAGS) -MMD -MP $(EXTRA_CFLAGS)
LDFLAGS := $(EXTRA_LDFLAGS)
LIBS    := $(shell pkg-config --libs libcjson zlib 2>/dev/null || echo -lcjson -lz) -lm -lpthread
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
SDL_CFLAGS := $(shell pkg-config --cflags sdl2 SDL2_ttf SDL2_image 2>/dev/null)
SDL_LIBS   := $(shell pkg-config --libs sdl2 SDL2_ttf SDL2_image 2>/dev/null)
BLAS_LIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

# Library parts and what each links against (itself first, then its dependencies).
PARTS := isa frontend memmodel counters traces sim kernels
DEPS_isa      := isa
DEPS_frontend := frontend memmodel isa
DEPS_memmodel := memmodel isa
DEPS_counters := counters frontend memmodel isa
DEPS_traces   := traces isa
DEPS_sim      := sim counters traces frontend memmodel isa
DEPS_viewer   := traces counters frontend memmodel isa
DEPS_kernels  := kernels sim counters traces frontend memmodel isa
DEPS_all      := kernels $(DEPS_sim)

# kernels/ holds assembly; its C golden generators live in kernels/ref/.
SRCDIR_kernels := kernels/ref/*.c

archives = $(foreach p,$(DEPS_$(1)),$(BUILD)/lib/libnpu_$(p).a)

OBJDIR := $(BUILD)/obj
BINDIR := $(BUILD)/bin
LIBDIR := $(BUILD)/lib

.PHONY: all lib check demo bench docs deps clean fuzz check-determinism
.DEFAULT_GOAL := all

# ---- library parts -------------------------------------------------------
define part_rules
SRC_$(1) := $$(wildcard $(1)/*.c $(SRCDIR_$(1)))
OBJ_$(1) := $$(patsubst %.c,$(OBJDIR)/%.o,$$(SRC_$(1)))
$(LIBDIR)/libnpu_$(1).a: $$(OBJ_$(1)) | $(LIBDIR)
	@rm -f $$@
	$$(if $$(OBJ_$(1)),ar rcs $$@ $$(OBJ_$(1)),ar rcs $$@)
TOOLS_$(1) := $$(patsubst $(1)/tools/%.c,$(BINDIR)/%,$$(wildcard $(1)/tools/*.c))
$(BINDIR)/%: $(1)/tools/%.c $$(call archives,$(1)) | $(BINDIR)
	@mkdir -p $(OBJDIR)/tools
	$$(CC) $$(CFLAGS) -MF $(OBJDIR)/tools/$$(notdir $$@).d $$< -o $$@ $$(LDFLAGS) $$(call archives,$(1)) $$(LIBS)
TESTSRC_$(1) := $$(wildcard tests/$(1)/*.c)
ifneq ($$(TESTSRC_$(1)),)
TESTS += $(BINDIR)/test-$(1)
$(BINDIR)/test-$(1): $$(patsubst %.c,$(OBJDIR)/%.o,$$(TESTSRC_$(1))) $$(call archives,$(1)) | $(BINDIR)
	$$(CC) $$(LDFLAGS) $$(filter %.o,$$^) -o $$@ $$(call archives,$(1)) $$(LIBS) $$(CHECK_LIBS)
endif
.PHONY: test-$(1)
test-$(1): $(BINDIR)/test-$(1) $$(TOOLS_$(1)) $(BINDIR)/npusim
	$(BINDIR)/test-$(1)
ALLTOOLS += $$(TOOLS_$(1))
endef
$(foreach p,$(PARTS),$(eval $(call part_rules,$(p))))

ALL_OBJ := $(foreach p,$(PARTS),$(OBJ_$(p)))
$(LIBDIR)/libnpusim.a: $(ALL_OBJ) | $(LIBDIR)
	@rm -f $@
	ar rcs $@ $(ALL_OBJ)

# ---- programs --------------------------------------------------------------
CLI_SRC := $(wildcard sim/cli/*.c)
$(BINDIR)/npusim: $(patsubst %.c,$(OBJDIR)/%.o,$(CLI_SRC)) $(call archives,all) | $(BINDIR)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(call archives,all) $(LIBS)

VIEWER_SRC := $(wildcard viewer/*.c)
ifneq ($(VIEWER_SRC),)
NPUVIEW := $(BINDIR)/npuview
$(OBJDIR)/viewer/%.o: CFLAGS += $(SDL_CFLAGS)
# The HBM model's short queue shifts stay loops: GCC would make them memmove
# calls, which cost more than the loop at these lengths (a few entries).
NOLDP := $(shell $(CC) -Werror -fno-tree-loop-distribute-patterns -E -x c /dev/null >/dev/null 2>&1 && echo -fno-tree-loop-distribute-patterns)
$(OBJDIR)/memmodel/mem_hbm.o: CFLAGS += $(NOLDP)
$(BINDIR)/npuview: $(patsubst %.c,$(OBJDIR)/%.o,$(VIEWER_SRC)) $(call archives,viewer) | $(BINDIR)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(call archives,viewer) $(SDL_LIBS) $(LIBS)
endif
TESTSRC_viewer := $(wildcard tests/viewer/*.c)
ifneq ($(TESTSRC_viewer),)
TESTS += $(BINDIR)/test-viewer
VIEWER_LIBOBJ := $(patsubst %.c,$(OBJDIR)/%.o,$(filter-out viewer/main.c,$(VIEWER_SRC)))
$(OBJDIR)/tests/viewer/%.o: CFLAGS += $(SDL_CFLAGS)
$(BINDIR)/test-viewer: $(patsubst %.c,$(OBJDIR)/%.o,$(TESTSRC_viewer)) $(VIEWER_LIBOBJ) $(call archives,viewer) | $(BINDIR)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(call archives,viewer) $(SDL_LIBS) $(LIBS) $(CHECK_LIBS)
.PHONY: test-viewer
test-viewer: $(BINDIR)/test-viewer
	$(BINDIR)/test-viewer
endif

# Cross-part suites (tests/all/*.c, tests/units/*.c, ...) link the whole library.
XTESTDIRS := all units check reliab
define xtest_rules
TESTSRC_x$(1) := $$(wildcard tests/$(1)/*.c)
ifneq ($$(TESTSRC_x$(1)),)
TESTS += $(BINDIR)/test-$(1)
$(BINDIR)/test-$(1): $$(patsubst %.c,$(OBJDIR)/%.o,$$(TESTSRC_x$(1))) $$(call archives,all) | $(BINDIR)
	$$(CC) $$(LDFLAGS) $$(filter %.o,$$^) -o $$@ $$(call archives,all) $$(LIBS) $$(CHECK_LIBS)
endif
.PHONY: test-$(1)
test-$(1): $(BINDIR)/test-$(1) $(BINDIR)/npusim
	$(BINDIR)/test-$(1)
endef
$(foreach d,$(XTESTDIRS),$(eval $(call xtest_rules,$(d))))

BENCH_SRC := $(wildcard bench/*.c)
BENCHES := $(patsubst bench/%.c,$(BINDIR)/bench-%,$(BENCH_SRC))
$(BINDIR)/bench-%: bench/%.c $(call archives,all) | $(BINDIR)
	@mkdir -p $(OBJDIR)/bench
	$(CC) $(CFLAGS) -MF $(OBJDIR)/bench/$*.d $< -o $@ $(LDFLAGS) $(call archives,all) $(BLAS_LIBS) $(LIBS)

# ---- generic rules --------------------------------------------------------
$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BINDIR) $(LIBDIR):
	@mkdir -p $@

lib: $(LIBDIR)/libnpusim.a
all: lib $(BINDIR)/npusim $(NPUVIEW) $(TESTS) $(ALLTOOLS)

-include $(shell find $(OBJDIR) -name '*.d' 2>/dev/null)

# ---- top-level jobs --------------------------------------------------------
deps:
	@sh scripts/deps.sh

check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all BUILD=build
	@sh scripts/run_tests.sh build
	@$(MAKE) --no-print-directory -j$(NPROC) all BUILD=build-asan SAN=1 OPT=-O1
	@sh scripts/run_tests.sh build-asan
	@# the same results from an -O0 build and from the -O1 sanitizer build
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=build-O0 OPT=-O0 build-O0/bin/npusim
	@NPUSIM=$(CURDIR)/build/bin/npusim NPU_ROOT=$(CURDIR) NPU_DET_OTHER=$(CURDIR)/build-O0/bin/npusim \
		DET_RUNS=1 sh tests/e2e/t_determinism.sh
	@NPUSIM=$(CURDIR)/build/bin/npusim NPU_ROOT=$(CURDIR) NPU_DET_OTHER=$(CURDIR)/build-asan/bin/npusim \
		DET_RUNS=1 sh tests/e2e/t_determinism.sh
	@echo "check: all suites passed (normal and ASan+UBSan builds; -O2, -O1 and -O0 results identical)"

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all BUILD=build
	@sh scripts/demo.sh build

bench: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(BENCHES) BUILD=build
	@sh scripts/bench.sh build

docs: all
	@sh scripts/gendocs.sh $(BUILD)

# Determinism across optimisation levels: an -O0 build (build-O0/) must give
# the same bytes as this BUILD's (tests/e2e/t_determinism.sh).
check-determinism:
	@$(MAKE) --no-print-directory -j$(NPROC) $(BINDIR)/npusim
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=build-O0 OPT=-O0 build-O0/bin/npusim
	@NPUSIM=$(CURDIR)/$(BINDIR)/npusim NPU_ROOT=$(CURDIR) NPU_DET_OTHER=$(CURDIR)/build-O0/bin/npusim \
		sh tests/e2e/t_determinism.sh

# libFuzzer targets (tests/fuzz/, clang ASan+UBSan, into build-fuzz/), each
# run FUZZ_SECONDS; seeds are made with this BUILD's npusim. docs/reliability.md.
FUZZ_SECONDS ?= 60
fuzz: $(BINDIR)/npusim $(ALLTOOLS)
	@sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz
