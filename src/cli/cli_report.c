/* cli_report.c -- `gauntlet report`: not built yet. */
#include "cli.h"

int cli_report(int argc, char **argv) {
        cli_error("'report' is not available yet");
        return EXIT_USAGE;
}

int cli_emit(int argc, char **argv) {
        cli_error("'emit' is not available yet");
        return EXIT_USAGE;
}
