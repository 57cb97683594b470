#include "trigger.h"

#include <string.h>

#define MAX_WRITE 64

E4Trigger e4_trigger_parse(const char *buf, size_t size, off_t off)
{
	if (size > MAX_WRITE || off < 0)
		return E4_TRIGGER_INVALID;
	if (size > 0 && buf[size - 1] == '\n')
		size--;
	if (off != 0)
		return size == 0 ? E4_TRIGGER_NOTHING : E4_TRIGGER_INVALID;
	static const struct {
		const char *word;
		E4Trigger t;
	} words[] = { { "1", E4_TRIGGER_START }, { "start", E4_TRIGGER_START },
		      { "pack", E4_TRIGGER_PACK }, { "compact", E4_TRIGGER_COMPACT }, { "0", E4_TRIGGER_CANCEL },
		      { "cancel", E4_TRIGGER_CANCEL } };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (size == strlen(words[i].word) && memcmp(buf, words[i].word, size) == 0)
			return words[i].t;
	return E4_TRIGGER_INVALID;
}
