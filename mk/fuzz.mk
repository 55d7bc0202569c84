# mk/fuzz.mk -- libFuzzer targets (fuzz/*.c) and the hostile HTTP server (tests/hostile/).
#
# `make fuzz` builds one libFuzzer binary per fuzz/fuzz_*.c into $(BUILD)/fuzz/, linked
# against the library compiled again with clang and the fuzzer's instrumentation into
# $(BUILD)/fuzz-obj/ (the normal objects are not instrumented, and may be gcc's).
# `make fuzz-run FUZZ_TIME=300` runs each for FUZZ_TIME seconds over fuzz/corpus/<target>/
# (new inputs go to $(BUILD)/fuzz/corpus/<target>/, not into the committed seeds).
# docs/fuzzing.md has the figures and how to reproduce a finding.

FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# Warnings stay on but are not errors here: gcc is the warning gate (-Werror in the main
# build); clang's extra opinions on code under work must not block a fuzz build.
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer $(filter-out -Werror,$(WARN)) -iquote src -MMD -MP \
               $(PKG_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_TIME  ?= 300

FUZZ_SRC  := $(wildcard fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB  := $(BUILD)/fuzz-obj/libgauntlet-fuzz.a
# Every library module: the archive lets the linker take only what each target reaches.
FUZZ_LIBOBJ := $(LIB_SRC:%.c=$(BUILD)/fuzz-obj/%.o)

.PHONY: fuzz fuzz-run hostile
fuzz: $(FUZZ_BIN)

$(BUILD)/fuzz-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIBOBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/%: $(BUILD)/fuzz-obj/fuzz/%.o $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(PKG_LIBS) $(LDLIBS_EXTRA)

fuzz-run: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  t=$$(basename $$f); mkdir -p $(BUILD)/fuzz/corpus/$$t; \
	  echo "== $$t ($(FUZZ_TIME)s)"; \
	  $$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$t- \
	    $(BUILD)/fuzz/corpus/$$t fuzz/corpus/$$t || exit 1; \
	done

# The hostile HTTP server for tests/integration/hostile.sh: plain sockets, no library.
HOSTILE := $(BUILD)/bin/gauntlet-hostile
HOSTILE_SRC := $(wildcard tests/hostile/*.c)
HOSTILE_OBJ := $(HOSTILE_SRC:%.c=$(BUILD)/obj/%.o)
hostile: $(HOSTILE)
# The Makefile's test rules were read before this file: add the server as a prerequisite.
ifneq ($(HOSTILE_SRC),)
test unit integration: $(HOSTILE)
endif

$(HOSTILE): $(HOSTILE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(HOSTILE_OBJ)

-include $(shell find $(BUILD)/fuzz-obj -name '*.d' 2>/dev/null)
.SECONDARY: $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz-obj/fuzz/%.o)
