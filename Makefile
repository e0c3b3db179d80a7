# ftstack: non-recursive build into build/, -MMD dependencies.
#   make            build ./ftstack
#   make check      install test deps (as root), build, run every test (unit, live, asan, fuzz smoke)
#   make unit       unit tests only (no kernel, no root)
#   make asan       build with ASan+UBSan into build/asan and run the unit tests there
#   make check-vm   kprobe/function-tracer tests in a Debian 6.1 kernel under QEMU
#   make check-vm-lockdown   the same kernel under lockdown=confidentiality
#   make demo       count kernel+user stacks of t:kmem:kmalloc for 5 s, top 3
#   make bench      benchmarks of issue targets; tables go to doc/PERFORMANCE.md
#   make soak       10 minutes of profile -F 999 and a count with -i 1: RSS and fds (not in CI)
#   make valgrind   memcheck over the unit tests and a short live run

CC      ?= cc
# libunwind: the DWARF unwinder of user stacks (doc/ARCHITECTURE.md says why not libdw)
# libcurl and libdebuginfod: headers only, loaded when first used (host/lib.c)
PKGS    := libtracefs libtraceevent libelf libunwind-generic
DL_PKGS := libcurl libdebuginfod
BUILD   ?= build
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-format-truncation -Wno-unknown-warning-option -MMD -MP -D_GNU_SOURCE \
           -I. $(shell pkg-config --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
override LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -llzma -lz -lm -lpthread -ldl

MODULES := mem host tracefs perfev aggregate symbolize python output report fleet cli plan task source collector cmd
LIB_SRC := $(filter-out cmd/main.c,$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/cmd/main.o

UNIT_SRC  := $(wildcard tests/unit/*_test.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HELP_SRC  := $(wildcard tests/lib/*.c)
HELP_BIN  := $(HELP_SRC:tests/lib/%.c=$(BUILD)/tests/%)
# the workloads the live tests run (tests/live/lib.sh's BIN): the default
# build's, built by gcc as the live tests' thresholds were measured, whatever
# build the tests check (make asan tests build/asan/ftstack with them)
LIVE_BIN  := $(HELP_SRC:tests/lib/%.c=build/tests/%)

.PHONY: print-ldlibs all unit check asan check-vm check-vm-lockdown demo bench deps clean fuzz cppcheck soak valgrind
all: ftstack

ftstack: $(BUILD)/ftstack
	ln -sf $(BUILD)/ftstack ftstack

$(BUILD)/ftstack: $(MAIN_OBJ) $(BUILD)/libftstack.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/libftstack.a: $(LIB_OBJ)
	rm -f $@; ar rcs $@ $^

$(BUILD)/%.o: %.c | $(BUILD)/gen/syscall_names.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<

# syscall names -> numbers of this architecture, from the C library's headers
$(BUILD)/gen/syscall_names.h:
	@mkdir -p $(dir $@)
	printf '#include <sys/syscall.h>\n' | $(CC) -dM -E - | \
	    awk '/^#define __NR_[a-z0-9_]+ [0-9]+$$/ { printf "{ \"%s\", %s },\n", substr($$2, 6), $$3 }' | \
	    sort > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%_test: tests/unit/%_test.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# Workloads and helpers the live tests run; built without optimisation
# surprises: frame pointers kept so the fp unwinder sees every caller.
$(BUILD)/tests/%: tests/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	    -Wall -Wextra -Werror -o $@ $< -lpthread

# ... and leaf_ab, whose leaf gcc must leave frameless (the default's CFI repair)
$(BUILD)/tests/leaf_ab: tests/lib/leaf_ab.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fno-omit-frame-pointer -momit-leaf-frame-pointer -fno-inline \
	    -Wall -Wextra -Werror -o $@ $<

# ... but one: --call-graph dwarf's test needs callers without frame pointers
$(BUILD)/tests/nofp_paths: tests/lib/nofp_paths.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	    -Wall -Wextra -Werror -o $@ $<

tests-bin: $(UNIT_BIN) $(HELP_BIN)

unit: ftstack $(UNIT_BIN) $(HELP_BIN)
	tests/run --unit-only

deps:
	tests/deps.sh

check: deps
	$(MAKE) ftstack tests-bin
	tests/run

asan:
	$(MAKE) BUILD=build/asan CC=clang \
	    CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" build/asan/ftstack tests-bin
	$(MAKE) BUILD=build $(LIVE_BIN)
	FTSTACK_BUILD=build/asan tests/run --unit-only --asan

check-vm: ftstack tests-bin
	tests/vm/run

# the same kernel booted with lockdown=confidentiality: cases/lockdown.sh alone
check-vm-lockdown: ftstack tests-bin
	FTSTACK_VM_APPEND=lockdown=confidentiality FTSTACK_VM_CASES=lockdown tests/vm/run

demo: deps ftstack
	./ftstack -e t:kmem:kmalloc -t 3 5

# the minimal reader of ftstack's perf events, the floor bench/run compares with
$(BUILD)/bench/floor: bench/floor.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# sched_switch's records with or without their switch-ins, only skipped over (bench/offcpu_switchin)
$(BUILD)/bench/switchin: bench/switchin.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# the sink's insert of N distinct stacks, timed (bench/run's fleet section)
$(BUILD)/bench/fleet_insert: bench/fleet_insert.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# bench/fleet's simulated hosts
$(BUILD)/bench/fleet_gen: bench/fleet_gen.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# the kernel's names at a run's start: kallsyms read, the saved copy, the machinery
$(BUILD)/bench/ksyms: bench/ksyms.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

# the kernel's allocation of each CPU's ring, in one process or several (start-up)
$(BUILD)/bench/ring_alloc: bench/ring_alloc.c $(BUILD)/libftstack.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libftstack.a $(LDFLAGS) $(LDLIBS)

bench: ftstack tests-bin $(BUILD)/bench/floor $(BUILD)/bench/switchin $(BUILD)/bench/fleet_insert $(BUILD)/bench/fleet_gen $(BUILD)/bench/ksyms $(BUILD)/bench/ring_alloc
	bench/run

soak: ftstack tests-bin
	tests/soak/run

valgrind: ftstack tests-bin
	tests/valgrind/run

cppcheck:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr --suppress=missingIncludeSystem -I. $(MODULES)

# the libraries ftstack links, for programs built outside this Makefile (tests/fuzz/run)
print-ldlibs:
	@echo $(LDLIBS)

clean:
	rm -rf build ftstack

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
