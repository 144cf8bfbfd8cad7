/* kube_yaml: objects as YAML documents (kube_yaml.h). */
#include "autoconfig.h"
#include "kube_yaml.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "i18n.h"

static int out_handler(void *data, unsigned char *buffer, size_t size)
{
	buf_add((struct buf *)data, buffer, size);
	return 1;
}

/* 1 when s, written plain, reads back as this string under YAML 1.1 and
 * 1.2 alike: it starts with a letter or '/' (no number, timestamp or
 * special float does) and is none of the words read as a bool or null.
 * libyaml quotes it anyway when its characters need it. */
static int plain_ok(const char *s)
{
	static const char *const words[] = { "y", "n", "yes", "no", "on", "off", "true", "false",
	                                     "null" };
	if (!isalpha((unsigned char)s[0]) && s[0] != '/')
		return 0;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcasecmp(s, words[i]))
			return 0;
	return 1;
}

static int scalar(yaml_emitter_t *em, const char *s, int plain)
{
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), plain,
	                                  !plain, YAML_ANY_SCALAR_STYLE))
		return -1;
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int node(yaml_emitter_t *em, const json_t *j, int depth)
{
	yaml_event_t ev;
	char num[64];
	if (depth > 64)
		return -1;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)j, k, v)
			if (scalar(em, k, plain_ok(k)) < 0 || node(em, v, depth + 1) < 0)
				return -1;
		if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_ARRAY: {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v)
			if (node(em, v, depth + 1) < 0)
				return -1;
		if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_STRING:
		return scalar(em, json_string_value(j), plain_ok(json_string_value(j)));
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		return scalar(em, num, 1);
	case JSON_REAL:
		/* no object paddock builds has one; %.17g reads back exactly */
		snprintf(num, sizeof num, "%.17g", json_real_value(j));
		return scalar(em, num, 1);
	case JSON_TRUE:
		return scalar(em, "true", 1);
	case JSON_FALSE:
		return scalar(em, "false", 1);
	case JSON_NULL:
		return scalar(em, "null", 1);
	}
	return -1;
}

int kube_yaml_documents(const json_t *list, struct buf *out, struct err *e)
{
	const json_t *items = json_object_get(list, "items");
	if (!json_is_array(items))
		return err_set(e, _("kubernetes: internal error: not a List of objects"));
	yaml_emitter_t em;
	yaml_event_t ev;
	if (!yaml_emitter_initialize(&em))
		return err_set(e, _("kubernetes: cannot write YAML: %s"), "libyaml");
	yaml_emitter_set_output(&em, out_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	         yaml_emitter_emit(&em, &ev);
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		if (!ok)
			break;
		ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) &&
		     yaml_emitter_emit(&em, &ev) && node(&em, it, 0) == 0 &&
		     yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev);
	}
	ok = ok && yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) &&
	     yaml_emitter_flush(&em);
	int rc = ok ? 0
	            : err_set(e, _("kubernetes: cannot write YAML: %s"),
	                      em.problem ? em.problem : "libyaml");
	yaml_emitter_delete(&em);
	return rc;
}
