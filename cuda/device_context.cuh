// Contexts per device: the library's state on one GPU (its primary context, streams, events,
// buffers and staging threads), created on a call's first use of the device and kept until
// trinom_cuda_release(). A DeviceLease is a call's hold on one: it locks the context for the
// call (calls on one device run one after the other, calls on different devices at the same
// time) and makes the device's primary context current on the calling thread, restoring the
// caller's context when the lease ends.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "staging.cuh"

namespace trinom {

constexpr int kSideStreams = 8;

struct DeviceContext {
    explicit DeviceContext(int device_) : device(device_) {}
    DeviceContext(const DeviceContext &) = delete;
    DeviceContext &operator=(const DeviceContext &) = delete;

    const int device;
    std::mutex mutex;       // held by a lease for a whole call
    bool open = false;      // primary context retained, streams and threads created
    bool released = false;  // taken out of the registry: a lease must look the device up again
    CUdevice cu_device = 0;
    CUcontext primary = nullptr;
    std::unique_ptr<HostPool> pool;
    cudaStream_t stream = nullptr;
    cudaStream_t side[kSideStreams] = {};
    cudaEvent_t side_done[kSideStreams] = {};
    std::vector<cudaEvent_t> events;  // timing events, handed out by event() and recycled per chunk
    size_t events_used = 0;
    // Device buffers: a chunk's inputs and per-instrument arrays (both paths), cuda-option's and
    // cuda-multi's expanded arrays, and their small offset tables. Pinned: the staging of a
    // chunk's upload and the option path's small downloads.
    DeviceBuffer arena, workspace, aux;
    PinnedBuffer staging, info;

    // A timing event from the pool; recycle_events() hands them all out again.
    cudaEvent_t event();
    void recycle_events() { events_used = 0; }
    // launch(q, stream) for q in 0..groups-1 side by side: on the side streams (round robin),
    // each waiting for `start` on the main stream, and the main stream waiting for them all
    // after; everything on the main stream when there is one group.
    void fan_out(int groups, cudaEvent_t start, const std::function<void(int, cudaStream_t)> &launch);
};

// Milliseconds between two recorded events.
double elapsed_ms(cudaEvent_t from, cudaEvent_t to);

// Makes a primary context current on the calling thread for the scope and restores the caller's
// context after. Needed where other code in the process, such as a Futhark cuda library, has made
// its own CUDA context current: the runtime API would otherwise run in that context and find the
// library's streams invalid ("invalid resource handle").
class PrimaryContextScope {
  public:
    PrimaryContextScope() = default;
    ~PrimaryContextScope() { unbind(); }
    PrimaryContextScope(const PrimaryContextScope &) = delete;
    PrimaryContextScope &operator=(const PrimaryContextScope &) = delete;
    void bind(CUcontext primary);
    void unbind();

  private:
    CUcontext previous_ = nullptr;
    bool switched_ = false;
};

// A call's hold on device `device` (see above). Throws CudaFailure: TRINOM_ERR_NO_DEVICE,
// TRINOM_ERR_DEVICE for an id out of range, TRINOM_ERR_CUDA if the context cannot be created.
class DeviceLease {
  public:
    explicit DeviceLease(int device);
    DeviceContext &context() { return *ctx_; }

  private:
    std::shared_ptr<DeviceContext> ctx_;
    std::unique_lock<std::mutex> lock_;
    PrimaryContextScope scope_;  // after lock_: unbound before the context is unlocked
};

// Devices this process sees (cached after the first answer); throws TRINOM_ERR_NO_DEVICE if none.
int device_count();
// Throws TRINOM_ERR_DEVICE unless 0 <= device < device_count().
void check_device(int device);
std::string device_name(int device);
// Frees the context of `device` (every context for -1).
void release_devices(int device);

}  // namespace trinom
