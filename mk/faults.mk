# mk/faults.mk -- the fault tests' LD_PRELOAD shim (tests/faults/, docs/faults.md).
#
# $(BUILD)/lib/gauntlet-enospc.so makes writes under a folder fail with ENOSPC once a byte
# budget is spent; tests/integration/faults-disk.sh preloads it into gauntlet. Built
# without the sanitizers: it is preloaded into sanitized binaries too, and a second ASan
# runtime there would not load.

ENOSPC_SO := $(BUILD)/lib/gauntlet-enospc.so

$(ENOSPC_SO): tests/faults/enospc.c mk/faults.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=c17 -D_GNU_SOURCE -g -O2 $(WARN) -fPIC -shared -o $@ $< -ldl -lpthread

.PHONY: faults
faults: $(ENOSPC_SO)

# The integration tests need it: make it a prerequisite of the targets that run them.
test integration: $(ENOSPC_SO)
