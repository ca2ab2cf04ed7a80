// The option path's per-chunk preparation on the GPU: each option's tree geometry (model.py's
// tree_geometry, operation by operation in the working precision), and for the fast variant the
// counting sort of the options into (width class, height bucket) bins.
#include "trinom_internal.cuh"

namespace trinom {

namespace {

constexpr int kScanThreads = 1024;
static_assert(kBins % kScanThreads == 0, "bins must split evenly over the scan block");

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

}  // namespace

template <typename real>
void launch_geometry(const Inputs<real> &inputs, int count, const Params<real> &params, bool fast, bool sort,
                     int *hist, int *first_bad, cudaStream_t stream) {
    if (count <= 0) return;
    geometry_kernel<real><<<(count + 255) / 256, 256, 0, stream>>>(inputs, count, params, fast, sort, hist, first_bad);
    TRINOM_CHECK(cudaGetLastError());
}

template <typename real>
void launch_bins(const Params<real> &params, int count, const int *hist, int *cursor, int *info, int *perm,
                 cudaStream_t stream) {
    scan_bins_kernel<<<1, kScanThreads, 0, stream>>>(hist, cursor, info);
    if (count > 0) scatter_kernel<real><<<(count + 255) / 256, 256, 0, stream>>>(params, count, cursor, perm);
    TRINOM_CHECK(cudaGetLastError());
}

template void launch_geometry<float>(const Inputs<float> &, int, const Params<float> &, bool, bool, int *, int *,
                                     cudaStream_t);
template void launch_geometry<double>(const Inputs<double> &, int, const Params<double> &, bool, bool, int *, int *,
                                      cudaStream_t);
template void launch_bins<float>(const Params<float> &, int, const int *, int *, int *, int *, cudaStream_t);
template void launch_bins<double>(const Params<double> &, int, const int *, int *, int *, int *, cudaStream_t);

}  // namespace trinom
