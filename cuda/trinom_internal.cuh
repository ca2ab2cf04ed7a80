// Internal declarations shared by the CUDA sources: device math in the thesis' operation order,
// the per-option parameters, and the launchers of the option kernels (tree geometry and binning,
// and the three pricing kernels).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>

#include "failure.cuh"
#include "trinom_constants.h"
#include "trinom_cuda.h"

namespace trinom {

// A 64-bit input as the kernels' int, saturated at +-2^30 (steps and days beyond that are never reached).
inline int clamp_int(int64_t v) { return static_cast<int>(std::max<int64_t>(INT_MIN / 2, std::min<int64_t>(INT_MAX / 2, v))); }

// ---------------------------------------------------------------------------------------------
// Rounded arithmetic that the compiler may not contract into FMAs, so that the tree geometry
// (integers derived from truncation) and the probabilities follow python/trinom/model.py.
template <typename real> struct Rn;
template <> struct Rn<float> {
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
    static __device__ __forceinline__ float sqrt_(float a) { return __fsqrt_rn(a); }
    static __device__ __forceinline__ float exp_(float a) { return expf(a); }
    static __device__ __forceinline__ float log_(float a) { return logf(a); }
    static __device__ __forceinline__ float ceil_(float a) { return ceilf(a); }
    static __device__ __forceinline__ float floor_(float a) { return floorf(a); }
    static __device__ __forceinline__ float ldexp_(float a, int e) { return scalbnf(a, e); }
};
template <> struct Rn<double> {
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
    static __device__ __forceinline__ double sqrt_(double a) { return __dsqrt_rn(a); }
    static __device__ __forceinline__ double exp_(double a) { return exp(a); }
    static __device__ __forceinline__ double log_(double a) { return log(a); }
    static __device__ __forceinline__ double ceil_(double a) { return ceil(a); }
    static __device__ __forceinline__ double floor_(double a) { return floor(a); }
    static __device__ __forceinline__ double ldexp_(double a, int e) { return scalbn(a, e); }
};

// C's (int)x as model.py's _trunc_int: truncation; non-finite or huge values give -1
// (a huge positive expiry step saturates instead: it is never reached either way).
template <typename real> __device__ __forceinline__ int trunc_int(real x, bool saturate = false) {
    if (!(x == x) || !(x < real(2147483647.0) && x > real(-2147483647.0))) {
        return (saturate && x > real(0)) ? 2147483647 : -1;
    }
    return static_cast<int>(x);
}

// Branching probabilities (pu, pm, pd) of node j, docs/model.md §1.4 / lattice.py `probabilities`.
// Case B at j == -jmax (to j+2, j+1, j), case C at j == jmax (to j, j-1, j-2), else case A.
// The constants 1/6, 2/3, -1/3 and 7/6 are IEEE quotients folded by the compiler in `real`,
// as NumPy computes them; the rest follows model.py's operation order without contraction.
template <typename real> struct Probs { real pu, pm, pd; };
template <typename real> struct Sixths {
    static constexpr real one_sixth = real(1) / real(6);
    static constexpr real two_thirds = real(2) / real(3);
    static constexpr real minus_third = real(-1) / real(3);
    static constexpr real seven_sixths = real(7) / real(6);
};
// Destinations (up, mid, down) of node j, as indices relative to `k`, the index of node j itself:
// case A to j+1, j, j-1; case B (j == -jmax) to j+2, j+1, j; case C (j == jmax) to j, j-1, j-2.
struct Destinations { int up, mid, down; };
__device__ __forceinline__ Destinations destinations(int j, int jmax, int k) {
    if (j == -jmax) return {k + 2, k + 1, k};
    if (j == jmax) return {k, k - 1, k - 2};
    return {k + 1, k, k - 1};
}

template <typename real> __device__ __forceinline__ Probs<real> probabilities(int j, int jmax, real M) {
    using R = Rn<real>;
    using C = Sixths<real>;
    const real jjMM = R::mul(R::mul(real(j * j), M), M);
    const real jM = R::mul(real(j), M);
    const real half = real(0.5);
    Probs<real> p;
    if (j == -jmax) {
        p.pu = R::add(C::one_sixth, R::mul(R::sub(jjMM, jM), half));
        p.pm = R::add(R::sub(C::minus_third, jjMM), R::mul(real(2), jM));
        p.pd = R::add(C::seven_sixths, R::mul(R::sub(jjMM, R::mul(real(3), jM)), half));
    } else if (j == jmax) {
        p.pu = R::add(C::seven_sixths, R::mul(R::add(jjMM, R::mul(real(3), jM)), half));
        p.pm = R::sub(R::sub(C::minus_third, jjMM), R::mul(real(2), jM));
        p.pd = R::add(C::one_sixth, R::mul(R::add(jjMM, jM), half));
    } else {
        p.pu = R::add(C::one_sixth, R::mul(R::add(jjMM, jM), half));
        p.pm = R::sub(C::two_thirds, jjMM);
        p.pd = R::add(C::one_sixth, R::mul(R::sub(jjMM, jM), half));
    }
    return p;
}

// Probability of the branch from node k to node j of the next level (0 if j is not one of
// k's destinations); only that one probability is computed. Same arithmetic as above.
template <typename real> __device__ __forceinline__ real branch(int k, int j, int jmax, real M) {
    using R = Rn<real>;
    using C = Sixths<real>;
    const int d = j - k;
    const real jjMM = R::mul(R::mul(real(k * k), M), M);
    const real jM = R::mul(real(k), M);
    const real half = real(0.5);
    if (k == -jmax) {
        if (d == 2) return R::add(C::one_sixth, R::mul(R::sub(jjMM, jM), half));
        if (d == 1) return R::add(R::sub(C::minus_third, jjMM), R::mul(real(2), jM));
        if (d == 0) return R::add(C::seven_sixths, R::mul(R::sub(jjMM, R::mul(real(3), jM)), half));
        return real(0);
    }
    if (k == jmax) {
        if (d == 0) return R::add(C::seven_sixths, R::mul(R::add(jjMM, R::mul(real(3), jM)), half));
        if (d == -1) return R::sub(R::sub(C::minus_third, jjMM), R::mul(real(2), jM));
        if (d == -2) return R::add(C::one_sixth, R::mul(R::add(jjMM, jM), half));
        return real(0);
    }
    if (d == 1) return R::add(C::one_sixth, R::mul(R::add(jjMM, jM), half));
    if (d == 0) return R::sub(C::two_thirds, jjMM);
    if (d == -1) return R::add(C::one_sixth, R::mul(R::sub(jjMM, jM), half));
    return real(0);
}

// Zero rate at t years (curve.py `rate_at`): days = round-half-away(t * term_unit) in the working
// precision; flat before the first and after the last point; linear in days between.
template <typename real>
__device__ __forceinline__ real rate_at(real t, int term_unit, const real *rates, const int *days, int count) {
    using R = Rn<real>;
    const real x = R::mul(t, real(term_unit));
    real rounded = R::floor_(R::add(fabs(x), real(0.5)));
    if (x < real(0)) rounded = -rounded;
    const long long t_days = static_cast<long long>(rounded);
    int second = 0;
    while (second < count && days[second] < t_days) ++second;
    if (second == 0) return rates[0];
    if (second >= count) return rates[count - 1];
    const int first = second - 1;
    const long long span = days[second] - days[first];
    const real coefficient = R::div(real(t_days - days[first]), real(span > 1 ? span : 1));
    return R::add(rates[first], R::mul(coefficient, R::sub(rates[second], rates[first])));
}

// Zero-coupon bond price exp(-R(t) t) at t = steps * dt.
template <typename real>
__device__ __forceinline__ real discount_at(int steps, real dt, int term_unit, const real *rates, const int *days,
                                            int count) {
    using R = Rn<real>;
    const real t = R::mul(real(steps), dt);
    return R::exp_(-R::mul(rate_at(t, term_unit, rates, days, count), t));
}

// ---------------------------------------------------------------------------------------------
// Per-option tree constants (struct of device arrays, input order within a chunk).
template <typename real> struct Params {
    real *strike, *dt, *dr, *M;
    int *n, *jmax, *expiry_step, *term_unit, *type, *key;
};

// The options' yield curve on the device, in the working precision: one curve of `count` points, or
// several (curve c: points begin[c] .. begin[c+1]), option o of the chunk on curve index[o].
template <typename real> struct DeviceCurve {
    const real *rates;
    const int *days;
    int count;
    const int *begin = nullptr, *index = nullptr;  // nullptr: one curve
    // Option o's curve (one curve of its own points).
    __device__ __forceinline__ DeviceCurve of(int o) const { return index ? at(index[o]) : *this; }
    // Curve c of several.
    __device__ __forceinline__ DeviceCurve at(int c) const {
        const int lo = begin[c];
        return DeviceCurve{rates + lo, days + lo, begin[c + 1] - lo};
    }
};

// Scenario entries of the options of a chunk (trinom_portfolio.entry_offset): option o is priced once per
// entry k in [begin[o], begin[o+1]), on curve curve[k] (DeviceCurve::at), into out[k].
struct OptionEntries {
    const int *begin = nullptr, *curve = nullptr;  // nullptr: one price per option
};

// Fast kernel classes: L lanes per option, K nodes per lane (L*K >= width). Widths up to 16 take
// one lane with K in {4, 6, ..., 16} (classes 0-6); wider trees take the fewest lanes L in
// {2, 4, ..., 32} with 16 L >= width, and K in {10, 12, 14, 16} (classes 7 + 4 log2(L/2) + (K-10)/2).
constexpr int kFastClasses = 7 + 5 * 4;  // 27 classes; class kFastClasses is the fallback
constexpr int kFastMaxWidth = 32 * 16;
constexpr int kFastBuckets = 256;        // height buckets per class (for sorting)

// Class of a tree width for the fast kernel (kFastClasses for trees wider than 512).
__host__ __device__ inline int fast_class(int width) {
    if (width <= 16) {
        const int k = width <= 4 ? 4 : (width + 1) / 2 * 2;
        return (k - 4) / 2;
    }
    int lane_index = 0;
    for (int L = 2; L <= 32; L *= 2, ++lane_index) {
        if (L * 16 >= width) {
            const int per_lane = (width + L - 1) / L;
            const int k = per_lane <= 10 ? 10 : (per_lane + 1) / 2 * 2;
            return 7 + lane_index * 4 + (k - 10) / 2;
        }
    }
    return kFastClasses;
}

// Lanes per tree (L) and nodes per lane (K) of fast class cls < kFastClasses (fast_class's table).
__host__ __device__ inline int class_lanes(int cls) { return cls < 7 ? 1 : 2 << ((cls - 7) / 4); }
__host__ __device__ inline int class_nodes(int cls) { return cls < 7 ? 4 + 2 * cls : 10 + 2 * ((cls - 7) % 4); }

// --- warp segments (the fast option and bond kernels): a tree level spread over L lanes, K nodes each
constexpr unsigned kFull = 0xffffffffu;  // every lane of the warp

__device__ __forceinline__ int ilogb_(float x) { return ilogbf(x); }
__device__ __forceinline__ int ilogb_(double x) { return ilogb(x); }

// Sum of a segment's values: each lane's K nodes in order, then across the L lanes by shuffles.
template <typename real, int L, int K>
__device__ __forceinline__ real segment_sum(const real (&v)[K]) {
    real s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) s += v[k];
#pragma unroll
    for (int off = L / 2; off >= 1; off /= 2) s += __shfl_xor_sync(kFull, s, off, L);
    return s;
}

// Blocks of block_size threads for `count` trees in segments of L lanes (32/L trees per warp).
template <int L> inline int segment_blocks(int count, int block_size) {
    constexpr int per_warp = 32 / L;
    const int warps = (count + per_warp - 1) / per_warp;
    const int warps_per_block = block_size / 32;
    return (warps + warps_per_block - 1) / warps_per_block;
}

// Calls launch(Int<L>{}, Int<K>{}) with class cls's L and K as compile-time constants (for the
// kernel templates of the fast option and bond kernels). cls must be < kFastClasses.
template <int N> using Int = std::integral_constant<int, N>;
template <typename Launch> void with_fast_class(int cls, Launch &&launch) {
    if (cls < 7) {
        switch (cls) {
        case 0: launch(Int<1>{}, Int<4>{}); break;
        case 1: launch(Int<1>{}, Int<6>{}); break;
        case 2: launch(Int<1>{}, Int<8>{}); break;
        case 3: launch(Int<1>{}, Int<10>{}); break;
        case 4: launch(Int<1>{}, Int<12>{}); break;
        case 5: launch(Int<1>{}, Int<14>{}); break;
        default: launch(Int<1>{}, Int<16>{}); break;
        }
        return;
    }
    const int k_index = (cls - 7) % 4;
    auto with_nodes = [&](auto lanes) {
        switch (k_index) {
        case 0: launch(lanes, Int<10>{}); break;
        case 1: launch(lanes, Int<12>{}); break;
        case 2: launch(lanes, Int<14>{}); break;
        default: launch(lanes, Int<16>{}); break;
        }
    };
    switch ((cls - 7) / 4) {
    case 0: with_nodes(Int<2>{}); break;
    case 1: with_nodes(Int<4>{}); break;
    case 2: with_nodes(Int<8>{}); break;
    case 3: with_nodes(Int<16>{}); break;
    default: with_nodes(Int<32>{}); break;
    }
}

// ---------------------------------------------------------------------------------------------
// Launchers (host side). All work is enqueued on `stream`; errors are thrown as CudaFailure
// (failure.cuh).

// The inputs of one chunk of options on the device, in the working precision. Columns that vary
// from row to row are uploaded as arrays; a column with one value for every row (term units,
// steps, volatilities, types, ... often are) travels as that value only.
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

// Bins of the fast variant's counting sort: (kFastClasses + 1) classes x kFastBuckets heights.
constexpr int kBins = (kFastClasses + 1) * kFastBuckets;
// The bins' summary downloaded per chunk: class begin, class count, and the first bad option.
constexpr int kInfoInts = 2 * (kFastClasses + 1) + 1;
constexpr int kFirstBad = 2 * (kFastClasses + 1);

// Tree geometry of options 0..count-1 into `params` (kernel_geometry.cu); *first_bad gets the
// lowest option that gives no valid tree. With `fast`, also each option's bin key (class, and
// height bucket if `sort`) counted into hist.
template <typename real>
void launch_geometry(const Inputs<real> &inputs, int count, const Params<real> &params, bool fast, bool sort,
                     int *hist, int *first_bad, cudaStream_t stream);
// The fast variant's counting sort: scans hist into bin cursors and the class summary `info`,
// then scatters the options into perm, grouped by class and ordered by height bucket.
template <typename real>
void launch_bins(const Params<real> &params, int count, const int *hist, int *cursor, int *info, int *perm,
                 cudaStream_t stream);

// Layout of cuda-option's expanded arrays for the options perm[0..count) of one launch.
struct OptionLayout {
    int granularity = 32;            // options per padding group (32, block size or count)
    std::vector<long long> q_offset; // per group: start of its width-sized arrays
    std::vector<long long> a_offset; // per group: start of its alpha arrays
    long long q_total = 0, a_total = 0;
};
OptionLayout option_layout(const int *widths, const int *heights, int count, int granularity);

template <typename real>
void launch_option(const Params<real> &params, DeviceCurve<real> curve, const int *perm, int count,
                   const long long *q_offset, const long long *a_offset, int granularity, real *workspace,
                   long long q_total, real *out, int block_size, cudaStream_t stream);

template <typename real>
void launch_multi(const Params<real> &params, DeviceCurve<real> curve, const int *perm, const int *bin_ends,
                  int bins, const long long *alpha_offset, real *alphas, real *out, int block_size,
                  cudaStream_t stream);

template <typename real>
void launch_fast(int cls, const Params<real> &params, DeviceCurve<real> curve, OptionEntries entries, const int *perm,
                 int begin, int count, real *out, int block_size, cudaStream_t stream);

}  // namespace trinom
