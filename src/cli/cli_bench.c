/* cli_bench.c -- `gauntlet bench`: not built yet. */
#include "cli.h"

int cli_bench(int argc, char **argv) {
        cli_error("'bench' is not available yet");
        return EXIT_USAGE;
}
