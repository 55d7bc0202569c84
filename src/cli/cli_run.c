/* cli_run.c -- `gauntlet run`: not built yet. */
#include "cli.h"

int cli_run(int argc, char **argv) {
        cli_error("'run' is not available yet");
        return EXIT_USAGE;
}
