# mk/corpus.mk -- the detectors' figures on tests/corpus (docs/detectors.md): a measurement,
# not a test. `make corpus-figures` prints them; CORPUS_FIGURES_ARGS=--details lists every
# miss and false alarm of the tuning part. tools/collect-corpus.py grows the corpus.

$(BUILD)/bin/corpus-figures: $(BUILD)/obj/tools/corpus-figures.o $(LIBGAUNTLET)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBGAUNTLET) $(PKG_LIBS) $(LDLIBS_EXTRA)

.PHONY: corpus-figures
corpus-figures: $(BUILD)/bin/corpus-figures
	$(BUILD)/bin/corpus-figures $(CORPUS_FIGURES_ARGS) tests/corpus
