/* libFuzzer: figures of any extent map (what a corrupt or hostile FIEMAP
 * answer could be) are computed without fault, and stay consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "render.h"
#include "score.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size / 28;
	if (n == 0 || n > 4096)
		return 0;
	E4ExtentMap map = { .ext = calloc(n, sizeof(E4Extent)), .n = n, .cap = n };
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = data + i * 28;
		memcpy(&map.ext[i].logical, p, 8);
		memcpy(&map.ext[i].physical, p + 8, 8);
		memcpy(&map.ext[i].length, p + 16, 8);
		memcpy(&map.ext[i].flags, p + 24, 4);
	}
	E4Geometry g;
	e4_geometry_default(4096, &g);
	E4FileFigures fig;
	e4_figures_compute(&map, map.ext[0].length, &g, &fig);
	if (fig.records != n || fig.runs > n || fig.e4_phys_runs > n || fig.best < 1 || fig.ideal < 1)
		abort();
	E4Summary sum = {0};
	e4_summary_add(&sum, &fig);
	int score = e4_summary_score(&sum);
	if (score < 0 || score > 100)
		abort();
	free(e4_render_file_extents(&map, &fig, 4096));
	free(map.ext);
	return 0;
}
