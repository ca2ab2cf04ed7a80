// Staging: the memory a call stages its inputs in and the host threads that fill it, shared by the
// option and the bond paths.
//
// * Buffer: device or pinned host memory that grows on demand and is kept for the next call.
// * Layout: byte offsets of arrays packed one after another (256-byte aligned) into one buffer, so
//   that a chunk's inputs go up in one copy.
// * HostPool: a few persistent host threads that convert and pack the caller's arrays into the
//   pinned staging buffer (parallel_for over contiguous ranges).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "failure.cuh"

namespace trinom {

// A growable allocation: ensure() reallocates (freeing the old memory first) only when more bytes
// are needed. Memory says where it lives (device or pinned host memory).
template <typename Memory> struct Buffer {
    void *ptr = nullptr;
    size_t size = 0;
    void ensure(size_t bytes) {
        if (bytes <= size) return;
        release();
        TRINOM_CHECK(Memory::allocate(&ptr, bytes));
        size = bytes;
    }
    void release() {
        if (ptr) Memory::free(ptr);
        ptr = nullptr;
        size = 0;
    }
};

struct DeviceMemory {
    static cudaError_t allocate(void **ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
    static void free(void *ptr) { cudaFree(ptr); }
};
struct PinnedMemory {
    static cudaError_t allocate(void **ptr, size_t bytes) { return cudaHostAlloc(ptr, bytes, cudaHostAllocDefault); }
    static void free(void *ptr) { cudaFreeHost(ptr); }
};
using DeviceBuffer = Buffer<DeviceMemory>;
using PinnedBuffer = Buffer<PinnedMemory>;

// Bump allocator of byte offsets (256-byte aligned) inside one buffer.
struct Layout {
    size_t bytes = 0;
    size_t take(size_t n) {
        const size_t at = bytes;
        bytes += (n + 255) / 256 * 256;
        return at;
    }
};

// Persistent host threads for staging. parallel_for(count, grain, fn) splits [0, count) into
// parts(count, grain) contiguous ranges and calls fn(part, lo, hi) for each, on the workers and
// the calling thread, and returns when all are done. The parts see the caller's Stage. An
// exception thrown by a part is rethrown in the caller once all parts are done (the lowest
// part's first). One job at a time: the pool belongs to one device context, whose lock the
// caller holds.
class HostPool {
  public:
    explicit HostPool(int workers);
    ~HostPool();
    HostPool(const HostPool &) = delete;
    HostPool &operator=(const HostPool &) = delete;

    // Threads that work on a job: the workers and the caller.
    int size() const { return static_cast<int>(threads_.size()) + 1; }
    // One part per `grain` items (at least one), at most size().
    int parts(long long count, long long grain) const;
    void parallel_for(long long count, long long grain, const std::function<void(int, long long, long long)> &fn);

    // Workers of a context's pool: the host's cores less the caller's, at most 7.
    static int default_workers();

  private:
    void run(int parts, const std::function<void(int)> &fn);
    void work(std::unique_lock<std::mutex> &lock);
    void loop();

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)> *job_ = nullptr;
    int parts_ = 0, next_ = 0, finished_ = 0;
    std::atomic<long> generation_{0};
    std::atomic<bool> stop_flag_{false};
    bool stop_ = false;
};

}  // namespace trinom
