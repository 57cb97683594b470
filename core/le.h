/* Little-endian fields of ext4's on-disk structures, read from bytes
 * (unaligned, whatever the host's order). */
#pragma once

#include <stdint.h>

static inline uint16_t e4_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t e4_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
