/* libFuzzer: any bytes as an on-disk superblock parse or are refused. */
#include <stdint.h>
#include <stdlib.h>

#include "figures.h"
#include "superblock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	E4Geometry g;
	if (e4_superblock_parse(data, size, &g) != 0)
		return 0;
	if (g.block_size < 1024 || g.block_size > 65536 || g.blocks_per_group == 0)
		abort();
	/* The best count of any size stays >= 1 with any parsed geometry. */
	if (e4_best_count(1, &g) != 1 || e4_best_count(UINT64_MAX / 2, &g) < 1)
		abort();
	return 0;
}
