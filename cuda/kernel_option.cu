// cuda-option (thesis CUDA-option / paper GPU-OUTER): one option per thread.
// Qs, QsCopy and alphas live in global memory, padded per group of `granularity` options
// (global, block or warp padding) and transposed inside a group so that the threads of a warp
// touch consecutive addresses. Forward step in gather form; rates and probabilities are
// recomputed per node, one exp per node, as in the thesis.
#include <algorithm>

#include "trinom_internal.cuh"

namespace trinom {

namespace {

// Q_{i+1}[j] = sum of prob(k -> j) * E[k] over the sources k in j-2..j+2 that are alive at
// level i (|k| <= jhigh), taken in ascending k as the scatter form adds them.
template <typename real>
__device__ __forceinline__ real gather(const real *E, long long stride, int j, int jhigh, int jmax, real M) {
    real acc = 0;
#pragma unroll
    for (int k = j - 2; k <= j + 2; ++k) {
        // Sources two nodes away branch here only from the edges (k == -jmax to k+2, k == jmax to k-2).
        if (k < -jhigh || k > jhigh || (k == j - 2 && k != -jmax) || (k == j + 2 && k != jmax)) continue;
        acc += branch(k, j, jmax, M) * E[(k + jmax) * stride];
    }
    return acc;
}

template <typename real>
__global__ void option_kernel(Params<real> p, DeviceCurve<real> curves, const int *__restrict__ perm, int count,
                              const long long *__restrict__ q_offset, const long long *__restrict__ a_offset,
                              int granularity, real *workspace, long long q_total, real *out) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const int o = perm[s];
    const DeviceCurve<real> curve = curves.of(o);
    const int group = s / granularity, lane = s % granularity;
    const long long stride = granularity;
    real *Q = workspace + q_offset[group] + lane;
    real *Qn = Q + q_total;
    real *alphas = workspace + 2 * q_total + a_offset[group] + lane;

    const int n = p.n[o], jmax = p.jmax[o], expiry_step = p.expiry_step[o], term_unit = p.term_unit[o];
    const int type = p.type[o];
    const real dt = p.dt[o], dr = p.dr[o], M = p.M[o], X = p.strike[o];

    // Forward: Arrow-Debreu prices and the alphas.
    real alpha = rate_at(dt, term_unit, curve.rates, curve.days, curve.count);
    alphas[0] = alpha;
    Q[jmax * stride] = 1;
    for (int i = 0; i < n; ++i) {
        const int jhigh = min(i, jmax);
        for (int j = -jhigh; j <= jhigh; ++j) {
            Q[(j + jmax) * stride] *= exp(-(alpha + j * dr) * dt);
        }
        const int jhigh1 = min(i + 1, jmax);
        real sum = 0;
        for (int j = -jhigh1; j <= jhigh1; ++j) {
            const real q = gather(Q, stride, j, jhigh, jmax, M);
            Qn[(j + jmax) * stride] = q;
            sum += q * exp(-j * dr * dt);
        }
        const real ti = real(i + 2) * dt;
        const real P = exp(-rate_at(ti, term_unit, curve.rates, curve.days, curve.count) * ti);
        alpha = log(sum / P) / dt;
        alphas[(i + 1) * stride] = alpha;
        real *tmp = Q;
        Q = Qn;
        Qn = tmp;
    }

    // Backward: discount from the face value, payoff at the expiry step.
    const int width = 2 * jmax + 1;
    for (int k = 0; k < width; ++k) Q[k * stride] = real(FACE_VALUE);
    for (int i = n - 1; i >= 0; --i) {
        const int jhigh = min(i, jmax);
        const real a = alphas[i * stride];
        for (int j = -jhigh; j <= jhigh; ++j) {
            const Probs<real> pr = probabilities(j, jmax, M);
            const int k = j + jmax;
            const Destinations to = destinations(j, jmax, k);
            real res = (pr.pu * Q[to.up * stride] + pr.pm * Q[to.mid * stride] + pr.pd * Q[to.down * stride]) *
                       exp(-(a + j * dr) * dt);
            if (i == expiry_step) res = type == PUT ? fmax(X - res, real(0)) : fmax(res - X, real(0));
            Qn[k * stride] = res;
        }
        real *tmp = Q;
        Q = Qn;
        Qn = tmp;
    }
    out[o] = Q[jmax * stride];
}

}  // namespace

OptionLayout option_layout(const int *widths, const int *heights, int count, int granularity) {
    OptionLayout layout;
    layout.granularity = std::max(1, granularity);
    const int groups = (count + layout.granularity - 1) / layout.granularity;
    layout.q_offset.resize(groups);
    layout.a_offset.resize(groups);
    for (int g = 0; g < groups; ++g) {
        const int lo = g * layout.granularity, hi = std::min(count, lo + layout.granularity);
        long long wmax = 0, hmax = 0;
        for (int s = lo; s < hi; ++s) {
            wmax = std::max<long long>(wmax, widths[s]);
            hmax = std::max<long long>(hmax, heights[s]);
        }
        layout.q_offset[g] = layout.q_total;
        layout.a_offset[g] = layout.a_total;
        layout.q_total += wmax * layout.granularity;
        layout.a_total += hmax * layout.granularity;
    }
    return layout;
}

template <typename real>
void launch_option(const Params<real> &params, DeviceCurve<real> curve, const int *perm, int count,
                   const long long *q_offset, const long long *a_offset, int granularity, real *workspace,
                   long long q_total, real *out, int block_size, cudaStream_t stream) {
    if (count <= 0) return;
    const int blocks = (count + block_size - 1) / block_size;
    option_kernel<real><<<blocks, block_size, 0, stream>>>(params, curve, perm, count, q_offset, a_offset,
                                                           granularity, workspace, q_total, out);
    TRINOM_CHECK(cudaGetLastError());
}

template void launch_option<float>(const Params<float> &, DeviceCurve<float>, const int *, int, const long long *,
                                   const long long *, int, float *, long long, float *, int, cudaStream_t);
template void launch_option<double>(const Params<double> &, DeviceCurve<double>, const int *, int,
                                    const long long *, const long long *, int, double *, long long, double *, int,
                                    cudaStream_t);

}  // namespace trinom
