// The one memory policy of the library: how much device memory the buffers of a call may hold.
//
// Unless the caller sets trinom_run_options.memory_limit, the buffers a step (re)uses may hold
// kFreeMemoryFraction of the device's free memory plus what they hold already (a buffer that
// grows frees its old allocation first); the rest stays free for the CUDA runtime, other
// libraries and processes on the device, and fragmentation. Both sections price in chunks sized
// by it: a bond chunk's arena within the budget; an option chunk's arena within half of it, and
// then cuda-option's and cuda-multi's expanded arrays, in pieces, within what is left (with a
// memory_limit: the limit less the chunk's arena). An instrument that does not fit alone fails
// with TRINOM_ERR_MEMORY.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trinom {

constexpr double kFreeMemoryFraction = 0.8;

// Bytes the buffers of a call may hold together: `limit` if > 0 (the caller's memory_limit),
// else kFreeMemoryFraction * (free device memory + `held`, the bytes those buffers hold now).
// The device's primary context must be current.
size_t memory_budget(int64_t limit, size_t held);

}  // namespace trinom
