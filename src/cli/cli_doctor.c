/* cli_doctor.c -- `gauntlet doctor`: not built yet. */
#include "cli.h"

int cli_doctor(int argc, char **argv) {
        cli_error("'doctor' is not available yet");
        return EXIT_USAGE;
}
