# mk/install.mk -- `make install` and `make uninstall`, under PREFIX (default /usr/local),
# into DESTDIR when it is set (a staging root, for packages).
#
#   $(bindir)/gauntlet                        the tool
#   $(bindir)/gauntlet-testbed                the testbed: a sh wrapper that points it at
#                                             its installed model, then execs it
#   $(libexecdir)/gauntlet/gauntlet-testbed   the testbed's binary
#   $(datadir)/gauntlet/model.gguf            the testbed's model (testbed/model.gguf)
#   $(datadir)/gauntlet/examples/*.yaml       the example matrices
#   $(man1dir)/gauntlet.1                     docs/gauntlet.1, its /usr/local paths made these
#   $(bashcompdir)/gauntlet                   contrib/gauntlet.bash-completion
#
# The testbed binary looks for its model in the source tree (BUILD/bin/../../testbed/)
# unless $GAUNTLET_TESTBED_MODEL or --model names one: the wrapper sets the variable when it
# is unset or empty, and exec keeps the pid, so the supervisor sees the server itself.
# `make uninstall` removes exactly these files, then gauntlet's own folders
# ($(datadir)/gauntlet, $(libexecdir)/gauntlet) if they are empty; shared folders stay.
# install needs only the two binaries: after `make`, it builds nothing.

PREFIX        ?= /usr/local
DESTDIR       ?=
bindir        ?= $(PREFIX)/bin
libexecdir    ?= $(PREFIX)/libexec
datadir       ?= $(PREFIX)/share
mandir        ?= $(datadir)/man
man1dir       ?= $(mandir)/man1
bashcompdir   ?= $(datadir)/bash-completion/completions
pkgdatadir    := $(datadir)/gauntlet
pkglibexecdir := $(libexecdir)/gauntlet
INSTALL       ?= install

INSTALL_EXAMPLES := $(wildcard examples/*.yaml)
# The page names the folders of a /usr/local install; the installed copy names the real ones.
MAN_PATHS := -e 's|/usr/local/share/gauntlet|$(pkgdatadir)|g' \
             -e 's|/usr/local/libexec/gauntlet|$(pkglibexecdir)|g' \
             -e 's|/usr/local/bin|$(bindir)|g'

.PHONY: install uninstall
install: $(GAUNTLET) $(if $(TB_SRC),$(TESTBED))
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(bashcompdir) \
	  $(DESTDIR)$(pkgdatadir)/examples
	$(INSTALL) -m 0755 $(GAUNTLET) $(DESTDIR)$(bindir)/gauntlet
ifneq ($(TB_SRC),)
	$(INSTALL) -d $(DESTDIR)$(pkglibexecdir)
	$(INSTALL) -m 0755 $(TESTBED) $(DESTDIR)$(pkglibexecdir)/gauntlet-testbed
	rm -f $(DESTDIR)$(bindir)/gauntlet-testbed
	printf '%s\n' '#!/bin/sh' \
	  '# gauntlet-testbed, as make install put it: the server, with its installed model.' \
	  ': "$${GAUNTLET_TESTBED_MODEL:=$(pkgdatadir)/model.gguf}"' \
	  'export GAUNTLET_TESTBED_MODEL' \
	  'exec "$(pkglibexecdir)/gauntlet-testbed" "$$@"' >$(DESTDIR)$(bindir)/gauntlet-testbed
	chmod 0755 $(DESTDIR)$(bindir)/gauntlet-testbed
	$(INSTALL) -m 0644 testbed/model.gguf $(DESTDIR)$(pkgdatadir)/model.gguf
endif
	$(INSTALL) -m 0644 $(INSTALL_EXAMPLES) $(DESTDIR)$(pkgdatadir)/examples/
	sed $(MAN_PATHS) docs/gauntlet.1 >$(DESTDIR)$(man1dir)/gauntlet.1
	chmod 0644 $(DESTDIR)$(man1dir)/gauntlet.1
	$(INSTALL) -m 0644 contrib/gauntlet.bash-completion $(DESTDIR)$(bashcompdir)/gauntlet

uninstall:
	rm -f $(DESTDIR)$(bindir)/gauntlet $(DESTDIR)$(bindir)/gauntlet-testbed \
	  $(DESTDIR)$(pkglibexecdir)/gauntlet-testbed $(DESTDIR)$(pkgdatadir)/model.gguf \
	  $(INSTALL_EXAMPLES:examples/%=$(DESTDIR)$(pkgdatadir)/examples/%) \
	  $(DESTDIR)$(man1dir)/gauntlet.1 $(DESTDIR)$(bashcompdir)/gauntlet
	rmdir $(DESTDIR)$(pkgdatadir)/examples $(DESTDIR)$(pkgdatadir) $(DESTDIR)$(pkglibexecdir) \
	  2>/dev/null || true
