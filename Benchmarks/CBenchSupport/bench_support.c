#include "bench_support.h"

uint64_t gw_bench_noop(void *context, uint64_t value) {
    (void)context;
    return value + 1;
}
