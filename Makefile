# gauntlet -- the front door of the build. `make`, `make test`, `make demo`.
#
# Variants: `make SAN=1 BUILD=build-asan test` builds everything with
# AddressSanitizer + UndefinedBehaviorSanitizer into its own folder; `make SAN=thread
# BUILD=build-tsan` with ThreadSanitizer (the bench's threads).

BUILD   ?= build
CC      ?= gcc
SAN     ?= 0
WERROR  ?= 1
OPT     ?= -O2

PKGS     := libcurl jansson sqlite3 yaml-0.1 zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
MHD_CFLAGS = $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
MHD_LIBS   = $(shell pkg-config --libs libmicrohttpd 2>/dev/null)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
        -Wvla -Wpointer-arith -Wundef -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
BASE_CFLAGS := -std=c17 -D_GNU_SOURCE -g $(OPT) $(WARN) -iquote src -MMD -MP
LDLIBS_EXTRA := -lm -ldl -lpthread
ifeq ($(SAN),1)
BASE_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
BASE_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS)

# src/ROLE/*.c: the library, one folder a role (docs/hacking.md); src/cli/: the tool
CLI_SRC  := $(wildcard src/cli/*.c)
LIB_SRC  := $(filter-out $(CLI_SRC),$(wildcard src/*/*.c))
TB_SRC   := $(wildcard testbed/*.c)
FIX_SRC  := $(wildcard tests/fixture/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
SS_SRC   := $(wildcard bench/*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TB_OBJ   := $(TB_SRC:%.c=$(BUILD)/obj/%.o)
# the testbed's pure code (all but main.c) also as a library, for its unit tests
TBLIB_OBJ := $(filter-out $(BUILD)/obj/testbed/main.o,$(TB_OBJ))
FIX_OBJ  := $(FIX_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SS_OBJ   := $(SS_SRC:%.c=$(BUILD)/obj/%.o)

LIBGAUNTLET := $(BUILD)/libgauntlet.a
GAUNTLET    := $(BUILD)/bin/gauntlet
TESTBED     := $(BUILD)/bin/gauntlet-testbed
LIBTESTBED  := $(BUILD)/libtestbed.a
FIXTURE     := $(BUILD)/bin/gauntlet-fixture
TOKCOUNT    := $(BUILD)/bin/gauntlet-tokcount
SCHEDSRV    := $(BUILD)/bin/gauntlet-schedsrv
SEARCHBENCH := $(BUILD)/bin/gauntlet-search-bench

BINS := $(GAUNTLET)
ifneq ($(TB_SRC),)
BINS += $(TESTBED)
endif
ifneq ($(SS_SRC),)
BINS += $(SCHEDSRV)
endif
BINS += $(SEARCHBENCH)
TEST_BINS := $(UNIT_BIN) $(TOKCOUNT)
ifneq ($(FIX_SRC),)
TEST_BINS += $(FIXTURE)
endif

# `make V=1` shows the full compiler lines.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# Keep the test objects (no "rm ..." after the test summary, no rebuild next time).
.SECONDARY: $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all test unit integration demo clean check-deps measure
all: check-deps $(BINS)

# On a fresh machine the first `make` installs the Debian packages it needs (as root), so
# `make demo` and `make test` are the whole set-up.
check-deps:
	@pkg-config --exists $(PKGS) libmicrohttpd cmocka 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then echo "gauntlet: installing build dependencies (.ci/install-deps)" >&2; \
	    .ci/install-deps || exit 1; \
	  else echo "gauntlet: missing build dependencies; run: sudo .ci/install-deps" >&2; exit 1; fi; }

$(BUILD)/obj/%.o: %.c | check-deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(MHD_CFLAGS) -c $< -o $@

$(LIBGAUNTLET): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(GAUNTLET): $(CLI_OBJ) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

$(TESTBED): $(TB_OBJ) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(TB_OBJ) $(LIBGAUNTLET) $(MHD_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

$(LIBTESTBED): $(TBLIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(FIXTURE): $(FIX_OBJ) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(FIX_OBJ) $(LIBGAUNTLET) $(MHD_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

# tests/helpers/tokcount.c: the sweep's tokenizer on texts, for tests against a real engine.
$(TOKCOUNT): $(BUILD)/obj/tests/helpers/tokcount.o $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

# bench/: the client benchmark's scheduled SSE server (docs/bench.md).
$(SCHEDSRV): $(SS_OBJ) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(SS_OBJ) $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

# tools/search-bench.c: search strategies on simulated spaces (tools/search_sim.h).
# The simulator is not part of the library: only this tool and test_search use it.
SEARCHSIM := $(BUILD)/obj/tools/search_sim.o $(BUILD)/obj/tools/search_sim_load.o
$(SEARCHBENCH): $(BUILD)/obj/tools/search-bench.o $(SEARCHSIM) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/tools/search-bench.o $(SEARCHSIM) $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBGAUNTLET) $(CMOCKA_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

# test_testbed_* also link the testbed's library (the shorter stem makes this rule win).
$(BUILD)/tests/test_testbed_%: $(BUILD)/obj/tests/unit/test_testbed_%.o $(LIBTESTBED) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBTESTBED) $(LIBGAUNTLET) $(CMOCKA_LIBS) $(MHD_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

$(BUILD)/tests/test_search: $(BUILD)/obj/tests/unit/test_search.o $(SEARCHSIM) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SEARCHSIM) $(LIBGAUNTLET) $(CMOCKA_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

$(BUILD)/tests/test_search_slow: $(BUILD)/obj/tests/unit/test_search_slow.o $(SEARCHSIM) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SEARCHSIM) $(LIBGAUNTLET) $(CMOCKA_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

# test_tokenizer writes its GGUF files with the testbed's writer.
$(BUILD)/tests/test_tokenizer: $(BUILD)/obj/tests/unit/test_tokenizer.o $(LIBTESTBED) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBTESTBED) $(LIBGAUNTLET) $(CMOCKA_LIBS) $(MHD_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

# test_provenance too (the model hash of a GGUF).
$(BUILD)/tests/test_provenance: $(BUILD)/obj/tests/unit/test_provenance.o $(LIBTESTBED) $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBTESTBED) $(LIBGAUNTLET) $(CMOCKA_LIBS) $(MHD_LIBS) $(PKG_LIBS) $(LDLIBS_EXTRA)

# The whole suite: unit tests, then integration tests against real child
# processes. tests/run prints the closing "N passed, N failed" line.
# TIERS: some tiers only (tests/run's names); empty, all of them.
test: all $(TEST_BINS)
	BUILD=$(BUILD) tests/run $(TIERS)

unit: all $(TEST_BINS)
	BUILD=$(BUILD) tests/run unit

integration: all $(TEST_BINS)
	BUILD=$(BUILD) tests/run integration

demo: all
	@test -x $(TESTBED) || { echo "gauntlet: the testbed is not built yet" >&2; exit 1; }
	rm -f runs/demo.db
	PATH="$(CURDIR)/$(BUILD)/bin:$$PATH" $(GAUNTLET) run examples/demo.yaml --journal runs/demo.db; \
	  status=$$?; [ $$status -le 1 ] || exit $$status
	$(GAUNTLET) report runs/demo.db
	PATH="$(CURDIR)/$(BUILD)/bin:$$PATH" $(GAUNTLET) emit systemd runs/demo.db

# Supervisor latency figures for docs/supervisor.md (a benchmark, not a test).
$(BUILD)/bin/measure-supervisor: $(BUILD)/obj/tools/measure-supervisor.o $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

measure: $(BUILD)/bin/measure-supervisor
	$(BUILD)/bin/measure-supervisor 30

clean:
	rm -rf build build-asan build-clang

# Extra rules of their own (fuzzing, fault injection) live in mk/*.mk.
include $(wildcard mk/*.mk)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
