/* libFuzzer: the trigger parser takes any bytes at any offset. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the write offset: 0, 1, or a large one. */
	off_t off = size ? (off_t)(data[0] % 3 == 2 ? 1 << 20 : data[0] % 3) : 0;
	const char *buf = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;
	E4Trigger t = e4_trigger_parse(buf, len, off);
	if (t == E4_TRIGGER_START || t == E4_TRIGGER_CANCEL) {
		/* Only the four words, at offset 0, ever act. */
		if (off != 0 || len == 0 || len > 7)
			abort();
		char word[8] = {0};
		memcpy(word, buf, len);
		if (word[len - 1] == '\n')
			word[len - 1] = '\0';
		if (strcmp(word, "1") && strcmp(word, "start") && strcmp(word, "0") && strcmp(word, "cancel"))
			abort();
	}
	return 0;
}
