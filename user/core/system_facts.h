// SPDX-License-Identifier: BSD-2-Clause
/* The machine a recording runs on, read as the recording starts (and by
 * the profile writer for a model that has none). */
#ifndef INFERTRACE_SYSTEM_FACTS_H
#define INFERTRACE_SYSTEM_FACTS_H

#include "model.h"

/* Fills s (its power mode untouched). */
void system_facts__read(struct model_system *s);

#endif
