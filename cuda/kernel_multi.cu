// cuda-multi (thesis CUDA-multi / paper GPU-FLAT): the options of one bin (summed widths at
// most the block size) share a CUDA block, one thread per tree node. Qs and the scan buffer
// live in shared memory; the alpha sums are block-level segmented reductions (warp shuffles plus
// per-warp partials in shared memory); the alphas go to
// global memory, padded per block (the bin's max height times its option count, transposed).
#include "trinom_internal.cuh"

namespace trinom {

namespace {

template <typename real>
__device__ __forceinline__ real gather_shared(const real *E, int t, int j, int jhigh, int jmax, real M) {
    real acc = 0;
#pragma unroll
    for (int k = j - 2; k <= j + 2; ++k) {
        if (k < -jhigh || k > jhigh || (k == j - 2 && k != -jmax) || (k == j + 2 && k != jmax)) continue;
        acc += branch(k, j, jmax, M) * E[t + (k - j)];
    }
    return acc;
}

template <typename real>
__global__ void __launch_bounds__(1024) multi_kernel(Params<real> p, DeviceCurve<real> curves,
                                                     const int *__restrict__ perm, const int *__restrict__ bin_ends,
                                                     const long long *__restrict__ alpha_offset, real *alphas,
                                                     real *out) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int B = blockDim.x, t = threadIdx.x;
    real *Qs = reinterpret_cast<real *>(smem_raw);
    real *Es = Qs + B;
    real *Ss = Es + B;
    int *starts = reinterpret_cast<int *>(Ss + B);  // B + 1 ints: option start columns
    int *block_max = starts + B + 1;                // [0]: the bin's max n

    const int first = blockIdx.x == 0 ? 0 : bin_ends[blockIdx.x - 1];
    const int options = bin_ends[blockIdx.x] - first;

    // Exclusive scan of the widths (Hillis-Steele over the bin's options) gives the start columns.
    if (t == 0) block_max[0] = 0;
    int my_width = 0;
    if (t < options) my_width = 2 * p.jmax[perm[first + t]] + 1;
    starts[t + 1] = my_width;
    if (t == 0) starts[0] = 0;
    __syncthreads();
    for (int d = 1; d < options; d *= 2) {
        const int v = (t < options && t >= d) ? starts[t + 1 - d] : 0;
        __syncthreads();
        if (t < options) starts[t + 1] += v;
        __syncthreads();
    }
    const int used = starts[options];

    // The option of this thread (binary search over the start columns).
    int local = -1;
    if (t < used) {
        int lo = 0, hi = options - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (starts[mid] <= t) lo = mid; else hi = mid - 1;
        }
        local = lo;
    }
    const bool real_thread = local >= 0;
    const int o = real_thread ? perm[first + local] : 0;
    const DeviceCurve<real> curve = curves.of(o);
    const int n = real_thread ? p.n[o] : 0;
    const int jmax = real_thread ? p.jmax[o] : 0;
    const int expiry_step = real_thread ? p.expiry_step[o] : -1;
    const int term_unit = real_thread ? p.term_unit[o] : 1;
    const int type = real_thread ? p.type[o] : 0;
    const real dt = real_thread ? p.dt[o] : real(1), dr = real_thread ? p.dr[o] : real(0);
    const real M = real_thread ? p.M[o] : real(0), X = real_thread ? p.strike[o] : real(0);
    const int start = real_thread ? starts[local] : t;
    const int width = 2 * jmax + 1;
    const int j = t - start - jmax;
    if (real_thread) atomicMax(&block_max[0], n);
    real *my_alphas = alphas + alpha_offset[blockIdx.x] + (real_thread ? local : 0);
    const long long alpha_stride = options;

    Qs[t] = (real_thread && j == 0) ? real(1) : real(0);
    if (real_thread && j == 0) my_alphas[0] = rate_at(dt, term_unit, curve.rates, curve.days, curve.count);
    __syncthreads();
    const int max_n = block_max[0];

    // Forward.
    for (int i = 0; i < max_n; ++i) {
        const bool alive = real_thread && i < n;
        const int jhigh = min(i, jmax), jhigh1 = min(i + 1, jmax);
        real alpha = 0;
        if (alive) alpha = my_alphas[i * alpha_stride];
        Es[t] = (alive && j >= -jhigh && j <= jhigh) ? Qs[t] * exp(-(alpha + j * dr) * dt) : real(0);
        __syncthreads();
        const bool target = alive && j >= -jhigh1 && j <= jhigh1;
        real q = 0;
        if (target) q = gather_shared(Es, t, j, jhigh, jmax, M);
        if (alive) Qs[t] = q;
        // Segmented sum of q exp(-j dr dt) per option: an inclusive segmented scan inside each warp
        // (shuffles), then the option's last thread adds the partial sums at the ends of the earlier
        // warps its columns span (a fixed order: deterministic).
        real x = target ? q * exp(-j * dr * dt) : real(0);
        const int lane = t & 31;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const real y = __shfl_up_sync(0xffffffffu, x, d);
            if (lane >= d && t - d >= start) x += y;
        }
        Ss[t] = x;
        __syncthreads();
        if (alive && t == start + width - 1) {
            real sum = x;
            for (int end = (t & ~31) - 1; end >= start; end -= 32) sum += Ss[end];
            const real ti = real(i + 2) * dt;
            const real P = exp(-rate_at(ti, term_unit, curve.rates, curve.days, curve.count) * ti);
            my_alphas[(i + 1) * alpha_stride] = log(sum / P) / dt;
        }
        __syncthreads();
    }

    // Backward.
    Qs[t] = real(FACE_VALUE);
    __syncthreads();
    for (int i = max_n - 1; i >= 0; --i) {
        const int jhigh = min(i, jmax);
        const bool alive = real_thread && i < n && j >= -jhigh && j <= jhigh;
        real res = 0;
        if (alive) {
            const real a = my_alphas[i * alpha_stride];
            const Probs<real> pr = probabilities(j, jmax, M);
            const Destinations to = destinations(j, jmax, t);
            res = (pr.pu * Qs[to.up] + pr.pm * Qs[to.mid] + pr.pd * Qs[to.down]) * exp(-(a + j * dr) * dt);
            if (i == expiry_step) res = type == PUT ? fmax(X - res, real(0)) : fmax(res - X, real(0));
        }
        __syncthreads();
        if (alive) Qs[t] = res;
        __syncthreads();
    }
    if (real_thread && j == 0) out[o] = Qs[t];
}

}  // namespace

template <typename real>
void launch_multi(const Params<real> &params, DeviceCurve<real> curve, const int *perm, const int *bin_ends,
                  int bins, const long long *alpha_offset, real *alphas, real *out, int block_size,
                  cudaStream_t stream) {
    if (bins <= 0) return;
    const size_t shared = 3 * sizeof(real) * block_size + sizeof(int) * (block_size + 3);
    multi_kernel<real><<<bins, block_size, shared, stream>>>(params, curve, perm, bin_ends, alpha_offset, alphas,
                                                             out);
    TRINOM_CHECK(cudaGetLastError());
}

template void launch_multi<float>(const Params<float> &, DeviceCurve<float>, const int *, const int *, int,
                                  const long long *, float *, float *, int, cudaStream_t);
template void launch_multi<double>(const Params<double> &, DeviceCurve<double>, const int *, const int *, int,
                                   const long long *, double *, double *, int, cudaStream_t);

}  // namespace trinom
