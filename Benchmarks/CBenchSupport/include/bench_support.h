/* A no-op C function in its own translation unit, so the optimiser cannot
 * inline it into the benchmark: the baseline for the cost of a call. */
#include <stdint.h>
uint64_t gw_bench_noop(void *context, uint64_t value);
