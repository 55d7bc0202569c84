/* cli_inspect.c -- `gauntlet inspect`: not built yet. */
#include "cli.h"

int cli_inspect(int argc, char **argv) {
        cli_error("'inspect' is not available yet");
        return EXIT_USAGE;
}
