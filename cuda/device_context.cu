// Contexts per device (device_context.cuh): the registry of at most one DeviceContext per device,
// their creation on first use and release, and the binding of a device's primary context.
#include <algorithm>
#include <string>

#include "device_context.cuh"

namespace trinom {

namespace {

struct Registry {
    std::mutex mutex;
    int count = -1;  // devices seen, once the driver answered with at least one
    std::vector<std::shared_ptr<DeviceContext>> contexts;
};

// Never destroyed: contexts and their threads may outlive static destructors at process exit.
Registry &registry() {
    static Registry *r = new Registry;
    return *r;
}

std::string driver_error(CUresult result) {
    const char *name = nullptr, *text = nullptr;
    cuGetErrorName(result, &name);
    cuGetErrorString(result, &text);
    return std::string(name ? name : "CUDA_ERROR") + ": " + (text ? text : "unknown error");
}

// Frees what open_context created; the device's primary context must be current.
void close_streams_and_buffers(DeviceContext &ctx) {
    if (ctx.stream) cudaStreamSynchronize(ctx.stream);
    for (cudaStream_t s : ctx.side)
        if (s) cudaStreamSynchronize(s);
    ctx.pool.reset();
    ctx.arena.release();
    ctx.workspace.release();
    ctx.aux.release();
    ctx.staging.release();
    ctx.info.release();
    for (cudaEvent_t e : ctx.events) cudaEventDestroy(e);
    ctx.events.clear();
    ctx.events_used = 0;
    for (int s = 0; s < kSideStreams; ++s) {
        if (ctx.side_done[s]) cudaEventDestroy(ctx.side_done[s]);
        if (ctx.side[s]) cudaStreamDestroy(ctx.side[s]);
        ctx.side_done[s] = nullptr;
        ctx.side[s] = nullptr;
    }
    if (ctx.stream) cudaStreamDestroy(ctx.stream);
    ctx.stream = nullptr;
}

// Retains the device's primary context, binds it with `scope`, creates the streams and threads.
void open_context(DeviceContext &ctx, PrimaryContextScope &scope) {
    Stage stage("context");
    CUresult result = cuDeviceGet(&ctx.cu_device, ctx.device);
    if (result == CUDA_SUCCESS) result = cuDevicePrimaryCtxRetain(&ctx.primary, ctx.cu_device);
    if (result != CUDA_SUCCESS) {
        ctx.primary = nullptr;
        throw CudaFailure(TRINOM_ERR_CUDA, "CUDA error: cannot retain the primary context of device " +
                                               std::to_string(ctx.device) + " (" + driver_error(result) + ")");
    }
    // Bind the primary context explicitly: a context made current by other code (a Futhark cuda
    // library) would otherwise receive our streams and buffers.
    scope.bind(ctx.primary);
    try {
        TRINOM_CHECK(cudaSetDevice(ctx.device));
        TRINOM_CHECK(cudaFree(nullptr));
        TRINOM_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
        for (int s = 0; s < kSideStreams; ++s) {
            TRINOM_CHECK(cudaStreamCreateWithFlags(&ctx.side[s], cudaStreamNonBlocking));
            TRINOM_CHECK(cudaEventCreateWithFlags(&ctx.side_done[s], cudaEventDisableTiming));
        }
        ctx.pool.reset(new HostPool(HostPool::default_workers()));
    } catch (...) {
        close_streams_and_buffers(ctx);
        scope.unbind();
        cuDevicePrimaryCtxRelease(ctx.cu_device);
        ctx.primary = nullptr;
        throw;
    }
    ctx.open = true;
}

}  // namespace

cudaEvent_t DeviceContext::event() {
    if (events_used == events.size()) {
        cudaEvent_t e;
        TRINOM_CHECK(cudaEventCreate(&e));
        events.push_back(e);
    }
    return events[events_used++];
}

double elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    TRINOM_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

void DeviceContext::fan_out(int groups, cudaEvent_t start, const std::function<void(int, cudaStream_t)> &launch) {
    int used = 0;
    for (int q = 0; q < groups; ++q) {
        cudaStream_t s = groups == 1 ? stream : side[q % kSideStreams];
        if (s != stream && q < kSideStreams) TRINOM_CHECK(cudaStreamWaitEvent(s, start, 0));
        launch(q, s);
        used = std::max(used, std::min(q + 1, kSideStreams));
    }
    if (groups > 1) {
        for (int q = 0; q < used; ++q) {
            TRINOM_CHECK(cudaEventRecord(side_done[q], side[q]));
            TRINOM_CHECK(cudaStreamWaitEvent(stream, side_done[q], 0));
        }
    }
}

void PrimaryContextScope::bind(CUcontext primary) {
    unbind();
    CUcontext current = nullptr;
    if (!primary || cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == primary) return;
    previous_ = current;
    switched_ = cuCtxSetCurrent(primary) == CUDA_SUCCESS;
}

void PrimaryContextScope::unbind() {
    if (switched_) cuCtxSetCurrent(previous_);
    switched_ = false;
    previous_ = nullptr;
}

int device_count() {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.count > 0) return r.count;
    Stage stage("device");
    CUresult result = cuInit(0);
    int n = 0;
    if (result == CUDA_SUCCESS) result = cuDeviceGetCount(&n);
    if (result != CUDA_SUCCESS) throw CudaFailure(TRINOM_ERR_NO_DEVICE, "no CUDA device: " + driver_error(result));
    if (n < 1) throw CudaFailure(TRINOM_ERR_NO_DEVICE, "no CUDA device: the driver reports none");
    r.count = n;
    r.contexts.resize(n);
    return n;
}

void check_device(int device) {
    const int n = device_count();
    if (device < 0 || device >= n) {
        Stage stage("device");
        throw CudaFailure(TRINOM_ERR_DEVICE,
                          "device " + std::to_string(device) + " is out of range: this process sees " +
                              std::to_string(n) + (n == 1 ? " CUDA device (id 0)" : " CUDA devices (ids 0.." +
                                                                                        std::to_string(n - 1) + ")"),
                          -1, "device");
    }
}

std::string device_name(int device) {
    check_device(device);
    CUdevice cu_device = 0;
    char name[256] = {};
    CUresult result = cuDeviceGet(&cu_device, device);
    if (result == CUDA_SUCCESS) result = cuDeviceGetName(name, sizeof(name) - 1, cu_device);
    if (result != CUDA_SUCCESS) {
        Stage stage("device");
        throw CudaFailure(TRINOM_ERR_CUDA, "CUDA error: cannot read the name of device " + std::to_string(device) +
                                               " (" + driver_error(result) + ")");
    }
    return name;
}

DeviceLease::DeviceLease(int device) {
    check_device(device);
    Registry &r = registry();
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(r.mutex);
            std::shared_ptr<DeviceContext> &slot = r.contexts[device];
            if (!slot) slot = std::make_shared<DeviceContext>(device);
            ctx_ = slot;
        }
        lock_ = std::unique_lock<std::mutex>(ctx_->mutex);
        if (!ctx_->released) break;
        lock_.unlock();  // released while we waited: look the device up again
    }
    if (ctx_->open)
        scope_.bind(ctx_->primary);
    else
        open_context(*ctx_, scope_);
}

void release_devices(int device) {
    Registry &r = registry();
    std::vector<std::shared_ptr<DeviceContext>> taken;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        for (size_t d = 0; d < r.contexts.size(); ++d)
            if ((device < 0 || static_cast<int>(d) == device) && r.contexts[d]) taken.push_back(std::move(r.contexts[d]));
    }
    for (auto &ctx : taken) {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        ctx->released = true;
        if (!ctx->open) continue;
        {
            PrimaryContextScope scope;
            scope.bind(ctx->primary);
            close_streams_and_buffers(*ctx);
        }
        cuDevicePrimaryCtxRelease(ctx->cu_device);
        ctx->primary = nullptr;
        ctx->open = false;
    }
}

}  // namespace trinom
