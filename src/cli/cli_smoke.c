/* cli_smoke.c -- `gauntlet smoke`: not built yet. */
#include "cli.h"

int cli_smoke(int argc, char **argv) {
        cli_error("'smoke' is not available yet");
        return EXIT_USAGE;
}
