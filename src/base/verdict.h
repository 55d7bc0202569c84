/* verdict.h -- the fixed vocabulary of outcomes (a contract: see DESIGN.md). */
#ifndef GAUNTLET_VERDICT_H
#define GAUNTLET_VERDICT_H

enum verdict {
        VERDICT_PASS,
        VERDICT_GARBAGE,
        VERDICT_WRONG,
        VERDICT_CRASH,
        VERDICT_TIMEOUT,
        VERDICT_SKIPPED,
        VERDICT_ERROR,
        VERDICT_OVERLOAD, /* passed alone, but its benchmark requests failed (docs/metrics.md) */
        _VERDICT_MAX,
        VERDICT_INVALID = -1,
};

/* "pass", "garbage", ... ; never NULL for a valid verdict. */
const char *verdict_to_string(enum verdict v);
/* VERDICT_INVALID for an unknown name. */
enum verdict verdict_from_string(const char *s);
/* Orders verdicts by how bad they are for a whole cell: the worst check decides. */
int verdict_severity(enum verdict v);
/* A verdict's colour on a terminal (an ANSI SGR sequence; the caller resets with "\033[0m"),
 * drawn from verdict_severity so that the worse verdict never looks milder: pass green,
 * skipped dim, overload and wrong yellow (the server ran and answered), garbage, timeout,
 * crash and error red (and an unknown value). Every coloured verdict line uses it. */
const char *verdict_color(enum verdict v);

#endif
