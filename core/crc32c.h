/* CRC-32C (Castagnoli), the checksum of ext4's metadata_csum. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC-32C over len bytes of data from crc, the way the kernel's
 * crc32c() does: no inversion on the way in or out, so ext4's seeds and
 * stored values compare directly (a standard CRC-32C of data is
 * ~e4_crc32c(~0u, data, len)). */
uint32_t e4_crc32c(uint32_t crc, const void *data, size_t len);
