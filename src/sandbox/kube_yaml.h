/* kube_yaml: Kubernetes objects (jansson) written as YAML for kubectl
 * apply, emitted by libyaml (its quoting, not paddock's): the items of a
 * List as documents, each begun with "---", in the List's order.  A
 * string that YAML would read as something else (true, no, null, 1000,
 * 1e3, ~, an empty one) is quoted, so that every value reads back as the
 * JSON value it was. */
#ifndef PADDOCK_KUBE_YAML_H
#define PADDOCK_KUBE_YAML_H

#include <jansson.h>

#include "buf.h"
#include "err.h"

/* Appends the YAML documents of list's "items" (list borrowed) to out.
 * 0, or -1 with e set (not a List, or libyaml failed). */
int kube_yaml_documents(const json_t *list, struct buf *out, struct err *e);

#endif
