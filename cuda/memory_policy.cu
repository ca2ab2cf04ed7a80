// The memory policy (memory_policy.cuh).
#include <cuda_runtime.h>

#include "failure.cuh"
#include "memory_policy.cuh"

namespace trinom {

size_t memory_budget(int64_t limit, size_t held) {
    if (limit > 0) return static_cast<size_t>(limit);
    size_t free_bytes = 0, total = 0;
    TRINOM_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return static_cast<size_t>(kFreeMemoryFraction * static_cast<double>(free_bytes + held));
}

}  // namespace trinom
