/* demo: a small demo repo with a failing test and two scripted agents
 * (one fixes the bug, one makes a plausible edit that breaks a test), made
 * under <data>/demo and added to the configuration in memory. */
#ifndef PADDOCK_DEMO_H
#define PADDOCK_DEMO_H

#include "config.h"
#include "err.h"

int demo_prepare(const char *data_dir, struct config *cfg, struct err *e);

#endif
