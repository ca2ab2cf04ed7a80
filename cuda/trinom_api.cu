// Host side of trinom_cuda: the context, the C API, the per-chunk pipeline (upload, tree
// geometry on the GPU, sorting / packing, pricing kernels, download) and its error handling.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "trinom_internal.cuh"

namespace trinom {

void check_cuda(cudaError_t err, const char *what) {
    if (err == cudaSuccess) return;
    cudaGetLastError();  // clear a non-sticky error
    throw CudaFailure{TRINOM_ERR_CUDA, std::string("CUDA error ") + cudaGetErrorName(err) + ": " +
                                           cudaGetErrorString(err) + " (in " + what + ")"};
}

namespace {

constexpr int kSideStreams = 8;
constexpr int kBins = (kFastClasses + 1) * kFastBuckets;  // 28 classes x 256 height buckets
constexpr int kInfoInts = 2 * (kFastClasses + 1) + 1;     // class begin, class count, first bad option
constexpr int kScanThreads = 1024;
static_assert(kBins % kScanThreads == 0, "bins must split evenly over the scan block");

// ---- memory (DeviceBuffer and PinnedBuffer are in trinom_internal.cuh) -------------------------
// Bump allocator of byte offsets (256-byte aligned) inside one buffer.
struct Layout {
    size_t bytes = 0;
    size_t take(size_t n) {
        const size_t at = bytes;
        bytes += (n + 255) / 256 * 256;
        return at;
    }
};

// A few persistent host threads for staging the inputs (run(parts, fn) calls fn(0..parts-1) on
// the workers and the calling thread and returns when all are done).
class WorkerPool {
  public:
    explicit WorkerPool(int workers) {
        for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { loop(); });
    }
    ~WorkerPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
            stop_flag_ = true;
        }
        wake_.notify_all();
        for (auto &t : threads_) t.join();
    }
    int size() const { return static_cast<int>(threads_.size()) + 1; }
    void run(int parts, const std::function<void(int)> &fn) {
        std::unique_lock<std::mutex> lock(mutex_);
        job_ = &fn;
        parts_ = parts;
        next_ = 0;
        finished_ = 0;
        ++generation_;
        lock.unlock();
        wake_.notify_all();
        lock.lock();
        work(lock);
        done_.wait(lock, [this] { return finished_ == parts_; });
        job_ = nullptr;
    }

  private:
    void work(std::unique_lock<std::mutex> &lock) {
        while (next_ < parts_) {
            const int part = next_++;
            const std::function<void(int)> *job = job_;
            lock.unlock();
            (*job)(part);
            lock.lock();
            if (++finished_ == parts_) done_.notify_all();
        }
    }
    void loop() {
        long seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            // Back-to-back jobs are common (scan, then stage): poll for a new one for up to 200 us
            // before sleeping, so that the next job does not wait for a wake-up.
            lock.unlock();
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
            while (generation_.load(std::memory_order_acquire) == seen && !stop_flag_.load() &&
                   std::chrono::steady_clock::now() < until) {
                std::this_thread::yield();
            }
            lock.lock();
            wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
            if (stop_) return;
            seen = generation_.load();
            work(lock);
        }
    }
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)> *job_ = nullptr;
    int parts_ = 0, next_ = 0, finished_ = 0;
    std::atomic<long> generation_{0};
    std::atomic<bool> stop_flag_{false};
    bool stop_ = false;
};

// The inputs of one chunk on the device, in the working precision. Columns that vary from row to
// row are uploaded as arrays; a column with one value for every row (term units, steps,
// volatilities, types, ... often are) travels as that value only.
constexpr int kRealColumns = 5;  // strike, maturity, expiry, a, sigma
constexpr int kColumns = 8;      // ... term_unit, term_steps, option_type
template <typename real> struct Inputs {
    const real *column[kRealColumns];
    real value[kRealColumns];
    const int *int_column[2];  // term_unit, term_steps
    int int_value[2];
    const signed char *type_column;
    int type_value;
    __device__ __forceinline__ real get(int c, int o) const { return column[c] ? column[c][o] : value[c]; }
    __device__ __forceinline__ int get_int(int c, int o) const { return int_column[c] ? int_column[c][o] : int_value[c]; }
    __device__ __forceinline__ int get_type(int o) const { return type_column ? type_column[o] : type_value; }
};

struct Context {
    std::unique_ptr<WorkerPool> pool;
    bool ready = false;
    int device = -1;
    CUdevice cu_device = 0;
    CUcontext primary = nullptr;  // the device's primary context (retained by trinom_cuda_init)
    cudaDeviceProp prop{};
    cudaStream_t stream = nullptr;
    cudaStream_t side[kSideStreams] = {};
    cudaEvent_t side_done[kSideStreams] = {};
    std::vector<cudaEvent_t> events;  // pool for timing pairs
    size_t events_used = 0;
    DeviceBuffer arena, workspace, aux;
    PinnedBuffer staging, info;

    cudaEvent_t event() {
        if (events_used == events.size()) {
            cudaEvent_t e;
            TRINOM_CHECK(cudaEventCreate(&e));
            events.push_back(e);
        }
        return events[events_used++];
    }
};

Context g_ctx;
std::string g_error;

}  // namespace

PrimaryContextScope::PrimaryContextScope() {
    if (!g_ctx.primary) return;
    CUcontext current = nullptr;
    if (cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == g_ctx.primary) return;
    previous_ = current;
    switched_ = cuCtxSetCurrent(g_ctx.primary) == CUDA_SUCCESS;
}

PrimaryContextScope::~PrimaryContextScope() {
    if (switched_) cuCtxSetCurrent(previous_);
}

namespace {

int fail(int code, const std::string &message) {
    g_error = message;
    return code;
}

double elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    TRINOM_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

// ---- geometry, class histogram, counting sort (fast variant) ---------------------------------
template <typename real>
__global__ void geometry_kernel(Inputs<real> in, int count, Params<real> p, int fast, int sort, int *hist,
                                int *first_bad) {
    using R = Rn<real>;
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned alive = __ballot_sync(0xffffffffu, o < count);
    if (o >= count) return;
    const real X = in.get(0, o), T = in.get(1, o), L = in.get(2, o), a = in.get(3, o), s = in.get(4, o);
    const int term_unit = in.get_int(0, o), term_steps = in.get_int(1, o), type = in.get_type(o);
    // model.py tree_geometry, operation by operation in the working precision.
    const real terms_per_year = R::ceil_(R::div(real(DAYS_IN_YEAR), real(term_unit)));
    int n = trunc_int(R::mul(R::mul(real(term_steps), terms_per_year), T));
    const real dt = R::div(terms_per_year, real(term_steps));
    const real V = R::div(R::mul(R::mul(s, s), R::sub(real(1), R::exp_(R::mul(R::mul(real(-2), a), dt)))),
                          R::mul(real(2), a));
    const real dr = R::sqrt_(R::mul(real(3), V));
    const real M = R::sub(R::exp_(R::mul(-a, dt)), real(1));
    int jmax = trunc_int(R::div(real(JMAX_FACTOR), M)) + 1;
    const int expiry_step = trunc_int(R::div(L, dt), true);
    const bool bad = n < 1 || jmax < 1 || jmax > 32767 || term_unit < 1 || term_steps < 1 ||
                     (type != CALL && type != PUT) || !(dt > real(0)) || !(dr == dr);
    if (bad) {
        atomicMin(first_bad, o);
        n = 1;
        jmax = 1;
    }
    p.strike[o] = X;
    p.dt[o] = dt;
    p.dr[o] = dr;
    p.M[o] = M;
    p.n[o] = n;
    p.jmax[o] = jmax;
    p.expiry_step[o] = expiry_step;
    p.term_unit[o] = term_unit;
    p.type[o] = type;
    if (fast) {
        int bucket = 0;
        if (sort) {  // heights in descending order: eight buckets per octave
            const int level = min(kFastBuckets - 1, static_cast<int>(8.0f * log2f(static_cast<float>(n))));
            bucket = kFastBuckets - 1 - level;
        }
        // The fast kernel holds the window |j| <= min(jmax, n): nodes beyond n are never reached.
        const int key = fast_class(2 * min(jmax, n) + 1) * kFastBuckets + bucket;
        p.key[o] = key;
        // One atomic per distinct key in the warp.
        const unsigned peers = __match_any_sync(alive, key);
        if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[key], __popc(peers));
    }
}

// Exclusive scan of the bin histogram (one block): bin cursors, then class begin/count.
__global__ void scan_bins_kernel(const int *hist, int *cursor, int *info) {
    __shared__ int partial[kScanThreads];
    constexpr int per = kBins / kScanThreads;
    const int t = threadIdx.x;
    int local[per];
    int sum = 0;
    for (int b = 0; b < per; ++b) {
        local[b] = hist[t * per + b];
        sum += local[b];
    }
    partial[t] = sum;
    __syncthreads();
    for (int d = 1; d < kScanThreads; d *= 2) {
        const int v = t >= d ? partial[t - d] : 0;
        __syncthreads();
        partial[t] += v;
        __syncthreads();
    }
    int run = partial[t] - sum;
    for (int b = 0; b < per; ++b) {
        cursor[t * per + b] = run;
        run += local[b];
    }
    __syncthreads();
    const int total = partial[kScanThreads - 1];
    if (t <= kFastClasses) {
        const int begin = cursor[t * kFastBuckets];
        const int end = t == kFastClasses ? total : cursor[(t + 1) * kFastBuckets];
        info[t] = begin;
        info[kFastClasses + 1 + t] = end - begin;
    }
}

template <typename real> __global__ void scatter_kernel(Params<real> p, int count, int *cursor, int *perm) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned alive = __ballot_sync(0xffffffffu, o < count);
    if (o >= count) return;
    const int key = p.key[o];
    const unsigned peers = __match_any_sync(alive, key);
    const int leader = __ffs(peers) - 1;
    const int lane = threadIdx.x & 31;
    int base = 0;
    if (lane == leader) base = atomicAdd(&cursor[key], __popc(peers));
    base = __shfl_sync(peers, base, leader);
    perm[base + __popc(peers & ((1u << lane) - 1))] = o;
}

// ---- host-side sorting and packing (cuda-option, cuda-multi) ---------------------------------
// Stable counting sort of 0..count-1 by key descending (keys >= 0).
std::vector<int> sort_descending(const std::vector<int> &key) {
    const int count = static_cast<int>(key.size());
    const int top = count ? *std::max_element(key.begin(), key.end()) : 0;
    std::vector<int> perm(count);
    if (top > 16 * count + (1 << 20)) {  // sparse keys: comparison sort
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int x, int y) { return key[x] > key[y]; });
        return perm;
    }
    std::vector<int> start(top + 2, 0);
    for (int k : key) ++start[top - k + 1];
    for (int b = 1; b <= top + 1; ++b) start[b] += start[b - 1];
    for (int i = 0; i < count; ++i) perm[start[top - key[i]]++] = i;
    return perm;
}

struct Chunk {
    int begin = 0, count = 0;
};

// Device pointers of one chunk inside the arena.
template <typename real> struct ChunkBuffers {
    size_t column_offset[kColumns];  // byte offsets of the varying columns (upload region)
    real *curve_rates;
    int *curve_days;
    Params<real> params;
    int *perm, *hist, *cursor, *info;
    real *out;
    size_t upload_bytes;  // bytes from the arena's start that mirror the staging buffer
    size_t bytes;
};

// Column c's element size on the device.
template <typename real> size_t column_bytes(int c) {
    return c < kRealColumns ? sizeof(real) : c < kColumns - 1 ? sizeof(int) : sizeof(signed char);
}

// The arena of one chunk: the upload region first (the curve, then the varying columns of
// `varying`, a bit mask, packed), sized for all columns, then the device-side arrays.
template <typename real> ChunkBuffers<real> chunk_layout(char *base, int count, int curve_count, unsigned varying) {
    Layout l;
    const size_t c = static_cast<size_t>(count);
    ChunkBuffers<real> b;
    const size_t rates = l.take(curve_count * sizeof(real));
    const size_t days = l.take(curve_count * sizeof(int));
    for (int k = 0; k < kColumns; ++k) b.column_offset[k] = (varying >> k & 1u) ? l.take(c * column_bytes<real>(k)) : 0;
    const size_t upload = l.bytes;
    for (int k = 0; k < kColumns; ++k)
        if (!(varying >> k & 1u)) l.take(c * column_bytes<real>(k));  // room for any mask
    size_t r[4], i[6];
    for (auto &x : r) x = l.take(c * sizeof(real));
    for (auto &x : i) x = l.take(c * sizeof(int));
    const size_t perm = l.take(c * sizeof(int));
    const size_t hist = l.take(kBins * sizeof(int));
    const size_t cursor = l.take(kBins * sizeof(int));
    const size_t info = l.take(kInfoInts * sizeof(int));
    const size_t out = l.take(c * sizeof(real));
    b.curve_rates = reinterpret_cast<real *>(base + rates);
    b.curve_days = reinterpret_cast<int *>(base + days);
    b.params.strike = reinterpret_cast<real *>(base + r[0]);
    b.params.dt = reinterpret_cast<real *>(base + r[1]);
    b.params.dr = reinterpret_cast<real *>(base + r[2]);
    b.params.M = reinterpret_cast<real *>(base + r[3]);
    b.params.n = reinterpret_cast<int *>(base + i[0]);
    b.params.jmax = reinterpret_cast<int *>(base + i[1]);
    b.params.expiry_step = reinterpret_cast<int *>(base + i[2]);
    b.params.term_unit = reinterpret_cast<int *>(base + i[3]);
    b.params.type = reinterpret_cast<int *>(base + i[4]);
    b.params.key = reinterpret_cast<int *>(base + i[5]);
    b.perm = reinterpret_cast<int *>(base + perm);
    b.hist = reinterpret_cast<int *>(base + hist);
    b.cursor = reinterpret_cast<int *>(base + cursor);
    b.info = reinterpret_cast<int *>(base + info);
    b.out = reinterpret_cast<real *>(base + out);
    b.upload_bytes = upload;
    b.bytes = l.bytes;
    return b;
}

struct Timing {
    double kernel_ms = 0, device_ms = 0;
    long long pieces = 0, fallback = 0;
};

// Bytes the workspace may use: the caller's limit, or what is free plus what we already hold.
size_t workspace_budget(const trinom_options &opt) {
    if (opt.memory_limit > 0) return static_cast<size_t>(opt.memory_limit);
    size_t free_bytes = 0, total = 0;
    TRINOM_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return static_cast<size_t>(0.85 * static_cast<double>(free_bytes + g_ctx.workspace.size));
}

template <typename real> std::pair<cudaEvent_t, cudaEvent_t> kernel_begin() {
    std::pair<cudaEvent_t, cudaEvent_t> ev{g_ctx.event(), g_ctx.event()};
    TRINOM_CHECK(cudaEventRecord(ev.first, g_ctx.stream));
    return ev;
}

// cuda-option over the options perm_host[0..count) (already on the device at d_perm), split in
// pieces whose padded workspace fits the budget.
template <typename real>
void run_option_pieces(const ChunkBuffers<real> &cb, DeviceCurve<real> curve, const int *d_perm,
                       const std::vector<int> &perm_host, const std::vector<int> &widths,
                       const std::vector<int> &heights, int padding, int block_size, const trinom_options &opt,
                       std::vector<std::pair<cudaEvent_t, cudaEvent_t>> &kernels, Timing &timing) {
    const int count = static_cast<int>(perm_host.size());
    std::vector<int> w(count), h(count);
    for (int s = 0; s < count; ++s) {
        w[s] = widths[perm_host[s]];
        h[s] = heights[perm_host[s]];
    }
    const size_t budget = workspace_budget(opt);
    int done = 0;
    while (done < count) {
        int piece = count - done;
        OptionLayout layout;
        for (;;) {
            const int granularity = padding == TRINOM_PAD_GLOBAL ? piece
                                    : padding == TRINOM_PAD_BLOCK ? block_size
                                                                  : 32;
            layout = option_layout(w.data() + done, h.data() + done, piece, granularity);
            const size_t need = (2 * layout.q_total + layout.a_total) * sizeof(real) +
                                2 * layout.q_offset.size() * sizeof(long long);
            if (need <= budget) break;
            if (piece == 1)
                throw CudaFailure{TRINOM_ERR_MEMORY, "one option's tree (width " + std::to_string(w[done]) +
                                                         ", height " + std::to_string(h[done]) +
                                                         ") does not fit in the GPU memory budget of " +
                                                         std::to_string(budget) + " bytes"};
            piece = (piece + 1) / 2;
        }
        const size_t groups = layout.q_offset.size();
        g_ctx.workspace.ensure((2 * layout.q_total + layout.a_total) * sizeof(real) + 16);
        g_ctx.aux.ensure(2 * groups * sizeof(long long));
        long long *d_q = static_cast<long long *>(g_ctx.aux.ptr);
        long long *d_a = d_q + groups;
        TRINOM_CHECK(cudaMemcpyAsync(d_q, layout.q_offset.data(), groups * sizeof(long long),
                                     cudaMemcpyHostToDevice, g_ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(d_a, layout.a_offset.data(), groups * sizeof(long long),
                                     cudaMemcpyHostToDevice, g_ctx.stream));
        auto ev = kernel_begin<real>();
        launch_option<real>(cb.params, curve, d_perm + done, piece, d_q, d_a, layout.granularity,
                            static_cast<real *>(g_ctx.workspace.ptr), layout.q_total, cb.out, block_size,
                            g_ctx.stream);
        TRINOM_CHECK(cudaEventRecord(ev.second, g_ctx.stream));
        kernels.push_back(ev);
        // The workspace and offsets are reused by the next piece: wait for this one.
        TRINOM_CHECK(cudaStreamSynchronize(g_ctx.stream));
        ++timing.pieces;
        done += piece;
    }
}

template <typename real>
void run_multi(const ChunkBuffers<real> &cb, DeviceCurve<real> curve, int count, const std::vector<int> &widths,
               const std::vector<int> &heights, int block_size, bool sort, const trinom_options &opt,
               std::vector<std::pair<cudaEvent_t, cudaEvent_t>> &kernels, Timing &timing) {
    std::vector<int> order;
    if (sort) {
        order = sort_descending(heights);
    } else {
        order.resize(count);
        std::iota(order.begin(), order.end(), 0);
    }
    std::vector<int> packed, wide;
    packed.reserve(count);
    for (int o : order) (widths[o] > block_size ? wide : packed).push_back(o);
    // Greedy packing in order: a bin takes options while their widths fit in the block.
    std::vector<int> bin_ends;
    std::vector<long long> alpha_size;
    int used = 0, bin_max_h = 0, bin_options = 0;
    for (size_t s = 0; s < packed.size(); ++s) {
        const int w = widths[packed[s]];
        if (used + w > block_size) {
            bin_ends.push_back(static_cast<int>(s));
            alpha_size.push_back(static_cast<long long>(bin_max_h) * bin_options);
            used = 0;
            bin_max_h = 0;
            bin_options = 0;
        }
        used += w;
        bin_max_h = std::max(bin_max_h, heights[packed[s]]);
        ++bin_options;
    }
    if (bin_options) {
        bin_ends.push_back(static_cast<int>(packed.size()));
        alpha_size.push_back(static_cast<long long>(bin_max_h) * bin_options);
    }
    std::vector<int> all(packed);
    all.insert(all.end(), wide.begin(), wide.end());
    TRINOM_CHECK(cudaMemcpyAsync(cb.perm, all.data(), all.size() * sizeof(int), cudaMemcpyHostToDevice,
                                 g_ctx.stream));
    const size_t budget = workspace_budget(opt);
    const int bins = static_cast<int>(bin_ends.size());
    int b0 = 0;
    while (b0 < bins) {
        // Take bins while their alphas fit.
        int b1 = b0;
        long long total = 0;
        while (b1 < bins && (b1 == b0 || (total + alpha_size[b1]) * static_cast<long long>(sizeof(real)) +
                                                 3 * 8 * (b1 - b0 + 1) <= static_cast<long long>(budget)))
            total += alpha_size[b1++];
        if (total * static_cast<long long>(sizeof(real)) > static_cast<long long>(budget))
            throw CudaFailure{TRINOM_ERR_MEMORY, "one block's alphas do not fit in the GPU memory budget"};
        const int first = b0 == 0 ? 0 : bin_ends[b0 - 1];
        std::vector<int> ends(b1 - b0);
        std::vector<long long> offsets(b1 - b0);
        long long at = 0;
        for (int b = b0; b < b1; ++b) {
            ends[b - b0] = bin_ends[b] - first;
            offsets[b - b0] = at;
            at += alpha_size[b];
        }
        g_ctx.workspace.ensure(std::max<long long>(1, at) * sizeof(real));
        const size_t aux_bytes = ends.size() * (sizeof(int) + sizeof(long long)) + 16;
        g_ctx.aux.ensure(aux_bytes);
        long long *d_offsets = static_cast<long long *>(g_ctx.aux.ptr);
        int *d_ends = reinterpret_cast<int *>(d_offsets + offsets.size());
        TRINOM_CHECK(cudaMemcpyAsync(d_offsets, offsets.data(), offsets.size() * sizeof(long long),
                                     cudaMemcpyHostToDevice, g_ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(d_ends, ends.data(), ends.size() * sizeof(int), cudaMemcpyHostToDevice,
                                     g_ctx.stream));
        auto ev = kernel_begin<real>();
        launch_multi<real>(cb.params, curve, cb.perm + first, d_ends, b1 - b0, d_offsets,
                           static_cast<real *>(g_ctx.workspace.ptr), cb.out, block_size, g_ctx.stream);
        TRINOM_CHECK(cudaEventRecord(ev.second, g_ctx.stream));
        kernels.push_back(ev);
        TRINOM_CHECK(cudaStreamSynchronize(g_ctx.stream));
        ++timing.pieces;
        b0 = b1;
    }
    if (!wide.empty()) {
        timing.fallback += static_cast<long long>(wide.size());
        run_option_pieces<real>(cb, curve, cb.perm + packed.size(), wide, widths, heights, TRINOM_PAD_WARP, 128, opt,
                                kernels, timing);
    }
}

template <typename real>
void price_chunk(const trinom_portfolio &pf, const trinom_curve &curve_in, const trinom_options &opt, Chunk chunk,
                 real *prices, Timing &timing) {
    Context &ctx = g_ctx;
    const int count = chunk.count, nc = curve_in.count;
    ChunkBuffers<real> cb = chunk_layout<real>(nullptr, count, nc, 0xffu);
    ctx.arena.ensure(cb.bytes);
    ctx.staging.ensure(cb.upload_bytes);
    ctx.info.ensure(kInfoInts * sizeof(int));

    // Which columns vary inside the chunk (one pass, on several host threads for large chunks).
    const int b0 = chunk.begin;
    const double *reals[kRealColumns] = {pf.strike + b0, pf.maturity + b0, pf.expiry + b0, pf.a + b0, pf.sigma + b0};
    const double *ints[2] = {pf.term_unit + b0, pf.term_steps + b0};
    const int8_t *types = pf.option_type + b0;
    const int parts = std::max(1, std::min(ctx.pool ? ctx.pool->size() : 1, count / 8192));
    auto part_range = [&](int part) {
        return std::make_pair(static_cast<int>(static_cast<long long>(count) * part / parts),
                              static_cast<int>(static_cast<long long>(count) * (part + 1) / parts));
    };
    std::vector<unsigned> part_mask(parts, 0u);
    const std::function<void(int)> scan = [&](int part) {
        const std::pair<int, int> range = part_range(part);
        const int lo = range.first, hi = range.second;
        unsigned mask = 0;
        auto differs = [&](const double *x) {  // bitwise, so that -0.0 and NaNs count as different
            for (int i = lo; i < hi; ++i)
                if (std::memcmp(&x[i], &x[0], sizeof(double)) != 0) return true;
            return false;
        };
        for (int k = 0; k < kRealColumns; ++k) mask |= differs(reals[k]) ? 1u << k : 0u;
        for (int k = 0; k < 2; ++k) mask |= differs(ints[k]) ? 1u << (kRealColumns + k) : 0u;
        for (int i = lo; i < hi; ++i)
            if (types[i] != types[0]) {
                mask |= 1u << (kColumns - 1);
                break;
            }
        part_mask[part] = mask;
    };
    if (parts > 1) ctx.pool->run(parts, scan); else scan(0);
    unsigned varying = 0;
    for (unsigned m : part_mask) varying |= m;
    cb = chunk_layout<real>(static_cast<char *>(ctx.arena.ptr), count, nc, varying);

    // Stage the curve and the varying columns in the working precision (as model.py's astype)
    // and upload them at once; constant columns go to the kernel as values.
    char *st = static_cast<char *>(ctx.staging.ptr);
    const char *arena = static_cast<const char *>(ctx.arena.ptr);
    real *cr = reinterpret_cast<real *>(st + (reinterpret_cast<const char *>(cb.curve_rates) - arena));
    int *cd = reinterpret_cast<int *>(st + (reinterpret_cast<const char *>(cb.curve_days) - arena));
    for (int k = 0; k < nc; ++k) cr[k] = static_cast<real>(curve_in.rates[k]);
    std::memcpy(cd, curve_in.days, nc * sizeof(int));
    Inputs<real> inputs{};
    for (int k = 0; k < kRealColumns; ++k) {
        inputs.value[k] = static_cast<real>(reals[k][0]);
        inputs.column[k] = (varying >> k & 1u) ? reinterpret_cast<const real *>(arena + cb.column_offset[k]) : nullptr;
    }
    for (int k = 0; k < 2; ++k) {
        inputs.int_value[k] = static_cast<int>(ints[k][0]);
        inputs.int_column[k] = (varying >> (kRealColumns + k) & 1u)
                                   ? reinterpret_cast<const int *>(arena + cb.column_offset[kRealColumns + k])
                                   : nullptr;
    }
    inputs.type_value = types[0];
    inputs.type_column = (varying >> (kColumns - 1) & 1u)
                             ? reinterpret_cast<const signed char *>(arena + cb.column_offset[kColumns - 1])
                             : nullptr;
    const std::function<void(int)> stage = [&](int part) {
        const std::pair<int, int> range = part_range(part);
        const int lo = range.first, hi = range.second;
        for (int k = 0; k < kRealColumns; ++k) {
            if (!(varying >> k & 1u)) continue;
            real *dst = reinterpret_cast<real *>(st + cb.column_offset[k]);
            const double *src = reals[k];
            for (int i = lo; i < hi; ++i) dst[i] = static_cast<real>(src[i]);
        }
        for (int k = 0; k < 2; ++k) {
            if (!(varying >> (kRealColumns + k) & 1u)) continue;
            int *dst = reinterpret_cast<int *>(st + cb.column_offset[kRealColumns + k]);
            const double *src = ints[k];
            for (int i = lo; i < hi; ++i) dst[i] = static_cast<int>(src[i]);
        }
        if (varying >> (kColumns - 1) & 1u)
            std::memcpy(st + cb.column_offset[kColumns - 1] + lo, types + lo, hi - lo);
    };
    if (varying) {
        if (parts > 1) ctx.pool->run(parts, stage); else stage(0);
    }

    cudaEvent_t ev_start = ctx.event(), ev_end = ctx.event();
    TRINOM_CHECK(cudaEventRecord(ev_start, ctx.stream));
    TRINOM_CHECK(cudaMemcpyAsync(ctx.arena.ptr, ctx.staging.ptr, cb.upload_bytes, cudaMemcpyHostToDevice, ctx.stream));
    const bool fast = opt.variant == TRINOM_VARIANT_FAST;
    const bool sort = !opt.no_sort;
    if (fast) TRINOM_CHECK(cudaMemsetAsync(cb.hist, 0, kBins * sizeof(int), ctx.stream));
    TRINOM_CHECK(cudaMemsetAsync(cb.info + 2 * (kFastClasses + 1), 0x7f, sizeof(int), ctx.stream));
    geometry_kernel<real><<<(count + 255) / 256, 256, 0, ctx.stream>>>(inputs, count, cb.params, fast, sort, cb.hist,
                                                                     cb.info + 2 * (kFastClasses + 1));
    TRINOM_CHECK(cudaGetLastError());
    DeviceCurve<real> curve{cb.curve_rates, cb.curve_days, nc};
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> kernels;
    int *info = static_cast<int *>(ctx.info.ptr);

    auto check_bad = [&](int first_bad) {
        if (first_bad != 0x7f7f7f7f)
            throw CudaFailure{TRINOM_ERR_ARGUMENT, "row " + std::to_string(chunk.begin + first_bad) +
                                                       ": the option gives no valid tree (check maturity, "
                                                       "term_unit, term_steps, a, sigma and option_type)"};
    };
    std::vector<int> widths, heights;
    auto download_shapes = [&]() {
        std::vector<int> jmax(count);
        heights.resize(count);
        widths.resize(count);
        TRINOM_CHECK(cudaMemcpyAsync(heights.data(), cb.params.n, count * sizeof(int), cudaMemcpyDeviceToHost,
                                     ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(jmax.data(), cb.params.jmax, count * sizeof(int), cudaMemcpyDeviceToHost,
                                     ctx.stream));
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        for (int i = 0; i < count; ++i) {
            widths[i] = 2 * jmax[i] + 1;
            heights[i] += 1;  // levels n + 1
        }
    };

    if (fast) {
        scan_bins_kernel<<<1, kScanThreads, 0, ctx.stream>>>(cb.hist, cb.cursor, cb.info);
        scatter_kernel<real><<<(count + 255) / 256, 256, 0, ctx.stream>>>(cb.params, count, cb.cursor, cb.perm);
        TRINOM_CHECK(cudaGetLastError());
        TRINOM_CHECK(cudaMemcpyAsync(info, cb.info, kInfoInts * sizeof(int), cudaMemcpyDeviceToHost, ctx.stream));
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        check_bad(info[2 * (kFastClasses + 1)]);
        int begin[kFastClasses + 1], size[kFastClasses + 1];
        for (int c = 0; c <= kFastClasses; ++c) {
            begin[c] = info[c];
            size[c] = info[kFastClasses + 1 + c];
        }
        auto ev = kernel_begin<real>();
        // Classes in parallel streams, the most work first.
        std::vector<int> classes;
        for (int c = 0; c < kFastClasses; ++c)
            if (size[c] > 0) classes.push_back(c);
        std::sort(classes.begin(), classes.end(), [&](int x, int y) { return size[x] * (x + 1LL) > size[y] * (y + 1LL); });
        int used = 0;
        for (size_t q = 0; q < classes.size(); ++q) {
            const int c = classes[q];
            cudaStream_t s = classes.size() == 1 ? ctx.stream : ctx.side[q % kSideStreams];
            if (s != ctx.stream && q < kSideStreams) TRINOM_CHECK(cudaStreamWaitEvent(s, ev.first, 0));
            launch_fast<real>(c, cb.params, curve, cb.perm, begin[c], size[c], cb.out, opt.block_size, s);
            used = std::max<int>(used, static_cast<int>(std::min<size_t>(q + 1, kSideStreams)));
        }
        if (classes.size() > 1) {
            for (int q = 0; q < used; ++q) {
                TRINOM_CHECK(cudaEventRecord(ctx.side_done[q], ctx.side[q]));
                TRINOM_CHECK(cudaStreamWaitEvent(ctx.stream, ctx.side_done[q], 0));
            }
        }
        TRINOM_CHECK(cudaEventRecord(ev.second, ctx.stream));
        kernels.push_back(ev);
        ++timing.pieces;
        if (size[kFastClasses] > 0) {  // trees wider than 512: cuda-option with warp padding
            timing.fallback += size[kFastClasses];
            download_shapes();
            std::vector<int> wide(size[kFastClasses]);
            TRINOM_CHECK(cudaMemcpy(wide.data(), cb.perm + begin[kFastClasses], wide.size() * sizeof(int),
                                    cudaMemcpyDeviceToHost));
            run_option_pieces<real>(cb, curve, cb.perm + begin[kFastClasses], wide, widths, heights, TRINOM_PAD_WARP,
                                    128, opt, kernels, timing);
        }
    } else {
        TRINOM_CHECK(cudaMemcpyAsync(info, cb.info + 2 * (kFastClasses + 1), sizeof(int), cudaMemcpyDeviceToHost,
                                     ctx.stream));
        download_shapes();
        check_bad(info[0]);
        if (opt.variant == TRINOM_VARIANT_OPTION) {
            const int block_size = opt.block_size > 0 ? opt.block_size : 128;
            std::vector<int> perm;
            if (sort) {  // widest first, then tallest first (the thesis' width-descending order)
                const std::vector<int> by_height = sort_descending(heights);
                std::vector<int> width_of(count);
                for (int s = 0; s < count; ++s) width_of[s] = widths[by_height[s]];
                const std::vector<int> order = sort_descending(width_of);  // stable: keeps height order
                perm.resize(count);
                for (int s = 0; s < count; ++s) perm[s] = by_height[order[s]];
            } else {
                perm.resize(count);
                std::iota(perm.begin(), perm.end(), 0);
            }
            TRINOM_CHECK(cudaMemcpyAsync(cb.perm, perm.data(), count * sizeof(int), cudaMemcpyHostToDevice,
                                         ctx.stream));
            run_option_pieces<real>(cb, curve, cb.perm, perm, widths, heights, opt.padding, block_size, opt, kernels,
                                    timing);
        } else {
            const int block_size = opt.block_size > 0 ? opt.block_size : 1024;
            run_multi<real>(cb, curve, count, widths, heights, block_size, sort, opt, kernels, timing);
        }
    }
    TRINOM_CHECK(cudaMemcpyAsync(prices + chunk.begin, cb.out, count * sizeof(real), cudaMemcpyDeviceToHost,
                                 ctx.stream));
    TRINOM_CHECK(cudaEventRecord(ev_end, ctx.stream));
    TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
    for (auto &k : kernels) timing.kernel_ms += elapsed_ms(k.first, k.second);
    timing.device_ms += elapsed_ms(ev_start, ev_end);
    ctx.events_used = 0;
}

template <typename real>
void price_all(const trinom_portfolio &pf, const trinom_curve &curve, const trinom_options &opt, real *prices,
               Timing &timing) {
    const long long total = pf.count;
    long long chunk = opt.chunk_size > 0 ? opt.chunk_size : (1LL << 22);
    chunk = std::min<long long>(chunk, INT_MAX / 8);
    // Keep the per-chunk buffers well inside the free memory.
    size_t free_bytes = 0, all = 0;
    TRINOM_CHECK(cudaMemGetInfo(&free_bytes, &all));
    const size_t per_option = 10 * sizeof(real) + 10 * sizeof(int) + 1;
    const size_t room = static_cast<size_t>(0.5 * static_cast<double>(free_bytes + g_ctx.arena.size));
    while (chunk > 1024 && static_cast<size_t>(chunk) * per_option > room) chunk /= 2;
    for (long long begin = 0; begin < total; begin += chunk) {
        Chunk c;
        c.begin = static_cast<int>(0);
        c.count = static_cast<int>(std::min<long long>(chunk, total - begin));
        // Offsets of the chunk into the caller's arrays.
        trinom_portfolio sub = pf;
        sub.strike += begin;
        sub.maturity += begin;
        sub.expiry += begin;
        sub.term_unit += begin;
        sub.term_steps += begin;
        sub.a += begin;
        sub.sigma += begin;
        sub.option_type += begin;
        sub.count = c.count;
        try {
            price_chunk<real>(sub, curve, opt, c, prices + begin, timing);
        } catch (CudaFailure &f) {
            if (f.code == TRINOM_ERR_ARGUMENT && begin > 0) {
                // Row numbers in messages are chunk-relative: make them absolute.
                const size_t at = f.message.find("row ");
                if (at == 0) {
                    const long long row = std::stoll(f.message.substr(4)) + begin;
                    f.message = "row " + std::to_string(row) + f.message.substr(f.message.find(':'));
                }
            }
            throw;
        }
    }
}

std::vector<void (*)()> g_releases;  // run by trinom_cuda_free() (other host files' buffers)

}  // namespace

bool context_ready() { return g_ctx.ready; }

int report_error(int code, const std::string &message) { return fail(code, message); }

void clear_error() { g_error.clear(); }

void on_context_free(void (*release)()) {
    if (std::find(g_releases.begin(), g_releases.end(), release) == g_releases.end()) g_releases.push_back(release);
}

}  // namespace trinom

using namespace trinom;

extern "C" {

int trinom_cuda_device_count(int32_t *count) {
    if (!count) return fail(TRINOM_ERR_ARGUMENT, "count is NULL");
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        cudaGetLastError();
        *count = 0;
        return fail(TRINOM_ERR_NO_DEVICE, std::string("no CUDA device: ") + cudaGetErrorName(err) + ": " +
                                              cudaGetErrorString(err));
    }
    *count = n;
    if (n == 0) return fail(TRINOM_ERR_NO_DEVICE, "no CUDA device: the driver reports none");
    return TRINOM_OK;
}

int trinom_cuda_init(int32_t device) {
    if (g_ctx.ready) return TRINOM_OK;
    try {
        int32_t n = 0;
        const int status = trinom_cuda_device_count(&n);
        if (status != TRINOM_OK) return status;
        if (device < 0 || device >= n)
            return fail(TRINOM_ERR_ARGUMENT, "device " + std::to_string(device) + " out of range (" +
                                                 std::to_string(n) + " devices)");
        // Retain the primary context and make it current explicitly: a context made current by
        // other code (a Futhark cuda library) would otherwise receive our streams and buffers.
        if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&g_ctx.cu_device, device) != CUDA_SUCCESS ||
            cuDevicePrimaryCtxRetain(&g_ctx.primary, g_ctx.cu_device) != CUDA_SUCCESS)
            return fail(TRINOM_ERR_CUDA, "CUDA error: cannot retain the primary context of device " +
                                             std::to_string(device));
        PrimaryContextScope scope;
        TRINOM_CHECK(cudaSetDevice(device));
        TRINOM_CHECK(cudaFree(nullptr));
        TRINOM_CHECK(cudaGetDeviceProperties(&g_ctx.prop, device));
        TRINOM_CHECK(cudaStreamCreateWithFlags(&g_ctx.stream, cudaStreamNonBlocking));
        for (int s = 0; s < kSideStreams; ++s) {
            TRINOM_CHECK(cudaStreamCreateWithFlags(&g_ctx.side[s], cudaStreamNonBlocking));
            TRINOM_CHECK(cudaEventCreateWithFlags(&g_ctx.side_done[s], cudaEventDisableTiming));
        }
        const unsigned cores = std::thread::hardware_concurrency();
        g_ctx.pool.reset(new WorkerPool(static_cast<int>(std::min(7u, cores > 1 ? cores - 1 : 0u))));
        g_ctx.device = device;
        g_ctx.ready = true;
        g_error.clear();
        return TRINOM_OK;
    } catch (const CudaFailure &f) {
        return fail(f.code, f.message);
    }
}

int trinom_cuda_price(const trinom_portfolio *portfolio, const trinom_curve *curve, const trinom_options *options,
                      void *prices, trinom_timing *timing) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!g_ctx.ready) return fail(TRINOM_ERR_NOT_INIT, "trinom_cuda_init() was not called");
    if (!portfolio || !curve || !prices) return fail(TRINOM_ERR_ARGUMENT, "portfolio, curve and prices must not be NULL");
    PrimaryContextScope scope;
    trinom_options opt{};
    if (options) opt = *options;
    const trinom_portfolio &pf = *portfolio;
    if (pf.count < 0) return fail(TRINOM_ERR_ARGUMENT, "count must be >= 0");
    if (pf.count > 0 && (!pf.strike || !pf.maturity || !pf.expiry || !pf.term_unit || !pf.term_steps || !pf.a ||
                         !pf.sigma || !pf.option_type))
        return fail(TRINOM_ERR_ARGUMENT, "a portfolio array is NULL");
    if (curve->count < 1 || !curve->rates || !curve->days) return fail(TRINOM_ERR_ARGUMENT, "the yield curve is empty");
    if (opt.variant < TRINOM_VARIANT_OPTION || opt.variant > TRINOM_VARIANT_FAST)
        return fail(TRINOM_ERR_ARGUMENT, "unknown variant " + std::to_string(opt.variant));
    if (opt.precision != TRINOM_F32 && opt.precision != TRINOM_F64)
        return fail(TRINOM_ERR_ARGUMENT, "unknown precision " + std::to_string(opt.precision));
    if (opt.padding < TRINOM_PAD_GLOBAL || opt.padding > TRINOM_PAD_WARP)
        return fail(TRINOM_ERR_ARGUMENT, "unknown padding " + std::to_string(opt.padding));
    if (opt.block_size != 0 && (opt.block_size < 32 || opt.block_size > 1024 || opt.block_size % 32 != 0))
        return fail(TRINOM_ERR_ARGUMENT, "block_size must be a multiple of 32 in 32..1024, got " +
                                             std::to_string(opt.block_size));
    if (opt.variant == TRINOM_VARIANT_FAST && opt.block_size > 128)
        return fail(TRINOM_ERR_ARGUMENT, "the fast kernel takes block_size 32..128, got " +
                                             std::to_string(opt.block_size));
    Timing t;
    try {
        if (pf.count > 0) {
            if (opt.precision == TRINOM_F32)
                price_all<float>(pf, *curve, opt, static_cast<float *>(prices), t);
            else
                price_all<double>(pf, *curve, opt, static_cast<double *>(prices), t);
        }
    } catch (const CudaFailure &f) {
        g_ctx.events_used = 0;
        return fail(f.code, f.message);
    } catch (const std::exception &e) {
        g_ctx.events_used = 0;
        return fail(TRINOM_ERR_MEMORY, std::string("host error: ") + e.what());
    }
    if (timing) {
        timing->kernel_ms = t.kernel_ms;
        timing->device_ms = t.device_ms;
        timing->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        timing->chunks = t.pieces;
        timing->fallback = t.fallback;
    }
    g_error.clear();
    return TRINOM_OK;
}

void trinom_cuda_free(void) {
    if (!g_ctx.ready) return;
    const CUdevice cu_device = g_ctx.cu_device;
    {
    PrimaryContextScope scope;
    cudaDeviceSynchronize();
    for (auto release : g_releases) release();
    g_ctx.arena.release();
    g_ctx.workspace.release();
    g_ctx.aux.release();
    g_ctx.staging.release();
    g_ctx.info.release();
    for (cudaEvent_t e : g_ctx.events) cudaEventDestroy(e);
    g_ctx.events.clear();
    g_ctx.events_used = 0;
    for (int s = 0; s < kSideStreams; ++s) {
        cudaEventDestroy(g_ctx.side_done[s]);
        cudaStreamDestroy(g_ctx.side[s]);
    }
    cudaStreamDestroy(g_ctx.stream);
    }
    cuDevicePrimaryCtxRelease(cu_device);
    g_ctx = Context();
}

const char *trinom_cuda_last_error(void) { return g_error.c_str(); }

const char *trinom_cuda_device_name(void) { return g_ctx.ready ? g_ctx.prop.name : ""; }

}  // extern "C"
