/* demo: a small demo repo with a failing test and two scripted agents
 * (one fixes the bug, one makes a plausible edit that breaks a test), made
 * under <data>/demo and added to the configuration in memory. */
#ifndef PADDOCK_DEMO_H
#define PADDOCK_DEMO_H

#include "config.h"
#include "err.h"

int demo_prepare(const char *data_dir, struct config *cfg, struct err *e);
/* Adds the demo's repo and agents to cfg when a demo was made in data_dir
 * and cfg does not define a repo named "demo" itself, so that the verbs
 * (approve, request-changes, serve, ...) work on demo tasks too. */
void demo_config_add(const char *data_dir, struct config *cfg);

#endif
