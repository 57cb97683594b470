/* The words a `defrag` trigger file accepts. Pure. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

typedef enum {
	E4_TRIGGER_START,
	E4_TRIGGER_PACK,
	E4_TRIGGER_COMPACT,
	E4_TRIGGER_CANCEL,
	E4_TRIGGER_NOTHING,
	E4_TRIGGER_INVALID
} E4Trigger;

/* Parses the bytes of one write at byte offset off: "1" or "start" (one
 * trailing newline allowed) at offset 0 start a job, "pack" a packing
 * job, "compact" a compaction of free space, "0" or "cancel"
 * cancel one; a lone newline at offset > 0 (the end of a word split across
 * writes) is nothing; everything else, including any write of more than
 * 64 bytes, is invalid. */
E4Trigger e4_trigger_parse(const char *buf, size_t size, off_t off);
