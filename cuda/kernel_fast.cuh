// cuda (fast): each option is a segment of L lanes of a warp, each lane holding K consecutive
// nodes of a tree level in registers; neighbours cross lanes by shuffles, so there are no block
// barriers and no global or shared memory traffic in the time loops.
//
// The thesis' recursions are rewritten exactly (same model, different rounding):
//   * exp(-(alpha_i + j dr) dt) = exp(-alpha_i dt) * exp(-j dr dt), and the node factor
//     exp(-j dr dt) is folded into per-node weights (probability times node discount);
//   * exp(-alpha_i dt) = P_i / s_i (the alpha formula), and since it is the same for every node
//     of a level it factors out of both linear recursions: with D_m = prod_{i<m} exp(-alpha_i dt),
//     the scaled forward level T_m = Q_m exp(-j dr dt) / D_m satisfies T_{m+1} = W T_m without
//     any alpha, and D_{m+1} = P_m / sum_j T_m[j]. The backward pass runs the undiscounted
//     recursion U_i = B U_{i+1} and applies D_n / D_e at the payoff step e and D_e at the root.
//   * So only two level sums (steps e-1 and n-1) and two curve look-ups are needed per option.
//   * Nodes with |j| > n are never reached and never reach the root: a segment holds the window
//     |j| <= min(jmax, n) only (the tree edges are in it only when jmax <= n).
//   * Values are kept in range by exact power-of-two rescaling every 16 steps.
//   * Scenario entries (kEntries: one price per (option, curve)): the curve enters through D_n and D_e only,
//     so the forward pass and the backward steps n-1 .. e (U_e) run once per option; each entry applies
//     its own D_n / D_e at the payoff and runs the steps e-1 .. 0 again (the same operations as an option
//     priced alone on that curve: the same bits).
#pragma once

#include "trinom_internal.cuh"

namespace trinom {

namespace {

template <typename real> struct Limits;
template <> struct Limits<float> {
    static constexpr float big = 18446744073709551616.0f;  // 2^64
};
template <> struct Limits<double> {
    static constexpr double big = 18446744073709551616.0;
};


// Divides the segment's values by a power of two when their largest magnitude passes 2^64;
// the exponent goes to `scale` (the values are exact multiples: no rounding).
template <typename real, int L, int K>
__device__ __forceinline__ void rescale(real (&v)[K], int &scale, bool active = true) {
    real largest = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) largest = fmax(largest, fabs(v[k]));
#pragma unroll
    for (int off = L / 2; off >= 1; off /= 2) largest = fmax(largest, __shfl_xor_sync(kFull, largest, off, L));
    if (active && largest > Limits<real>::big && largest < real(INFINITY)) {
        const int shift = ilogb_(largest) - 32;
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = Rn<real>::ldexp_(v[k], -shift);
        scale += shift;
    }
}


// m * 2^e without overflow in the intermediate (m is first normalised).
template <typename real> __device__ __forceinline__ real scaled(real mantissa, real value, int exponent) {
    int e2 = 0;
    const real m = frexp(mantissa, &e2);
    return Rn<real>::ldexp_(m * value, exponent + e2);
}

// D_n = P_{n-1} / sum_n and D_e = P_{e-1} / sum_e on one curve, as mantissas and power-of-two exponents.
template <typename real> struct LevelDiscounts {
    real d_n, d_e;
    int d_n_exp, d_e_exp;
};

template <typename real>
__device__ __forceinline__ LevelDiscounts<real> level_discounts(const DeviceCurve<real> &curve, int n, int expiry_step,
                                                                bool has_e, real dt, int term_unit, real sum_n,
                                                                int scale_n, real sum_e, int scale_e) {
    LevelDiscounts<real> d{discount_at(n, dt, term_unit, curve.rates, curve.days, curve.count) / sum_n, real(1),
                           -scale_n, 0};
    if (has_e) {
        d.d_e = discount_at(expiry_step, dt, term_unit, curve.rates, curve.days, curve.count) / sum_e;
        d.d_e_exp = -scale_e;
    }
    return d;
}

template <typename real, int L, int K, bool kEntries>
__global__ void __launch_bounds__(128) fast_kernel(Params<real> p, DeviceCurve<real> curves, OptionEntries entries,
                                                   const int *__restrict__ perm, int begin, int count,
                                                   real *__restrict__ out) {
    using R = Rn<real>;
    constexpr int G = 32 / L;  // options per warp
    const int lane = threadIdx.x & 31;
    const int sl = lane & (L - 1);  // lane within the segment
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (warp * G >= count) return;  // whole warp idle
    const int slot = warp * G + lane / L;
    const bool valid = slot < count;
    // Segments past the end mirror the warp's first option and write nothing.
    const int o = perm[begin + (valid ? slot : warp * G)];
    const int n = p.n[o], jmax = p.jmax[o], expiry_step = p.expiry_step[o];
    const real dt = p.dt[o], dr = p.dr[o], M = p.M[o];
    const int n_max = __reduce_max_sync(kFull, n);
    // Nodes beyond |j| = n are never reached (forward) and never reach the root (backward): the
    // segment holds the window |j| <= half only. When half < jmax the edges are not in it.
    const int half = min(jmax, n);
    const bool edges = half == jmax;
    const int base = sl * K - half;  // j of this lane's slot 0

    real v[K], w_left[K], w_mid[K], w_right[K], w_far[K];

    // ---- forward weights, indexed by the target node j: sources j-1, j, j+1 and j+2 ----------
    // (the bottom node's branch to -jmax+2 is the scalar `bottom`, applied in lane 0)
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = base + k;
        w_left[k] = w_mid[k] = w_right[k] = w_far[k] = 0;
        v[k] = (j == 0) ? real(1) : real(0);
        if (j <= half) {
            const real ej = R::exp_(-R::mul(R::mul(real(j), dr), dt));
            const Probs<real> pj = probabilities(j, jmax, M);
            w_mid[k] = (j == -jmax ? pj.pd : (j == jmax ? pj.pu : pj.pm)) * ej;
            // Sources outside the window (only when it is truncated) hold zero: zero weight.
            if (j > -jmax && j - 1 >= -half) {
                const Probs<real> pk = probabilities(j - 1, jmax, M);
                w_left[k] = (j - 1 == -jmax ? pk.pm : pk.pu) * ej;
            }
            if (j < jmax && j + 1 <= half) {
                const Probs<real> pk = probabilities(j + 1, jmax, M);
                w_right[k] = (j + 1 == jmax ? pk.pm : pk.pd) * ej;
            }
            if (j + 2 == jmax && edges) w_far[k] = probabilities(jmax, jmax, M).pd * ej;
        }
    }
    const real bottom =
        edges ? probabilities(-jmax, jmax, M).pu * R::exp_(-R::mul(R::mul(real(2 - jmax), dr), dt)) : real(0);

    // ---- forward: T_m = W T_{m-1}; keep the level sums at m = n-1 and m = e-1 -----------------
    const int m_n = n - 1;
    const int m_e = (expiry_step >= 1 && expiry_step <= n - 1) ? expiry_step - 1 : -1;
    real sum_n = 1, sum_e = 1;  // level 0 sums to 1
    int scale = 0, scale_n = 0, scale_e = 0;
    for (int m = 1; m < n_max; ++m) {
        // Halo from the neighbour lanes. At the segment's ends the shuffles return the lane's own
        // values: finite, and multiplied by zero weights or feeding only nodes that never matter.
        real left = 0, right0 = 0, right1 = 0;
        if (L > 1) {
            left = __shfl_up_sync(kFull, v[K - 1], 1, L);
            right0 = __shfl_down_sync(kFull, v[0], 1, L);
            right1 = __shfl_down_sync(kFull, v[1], 1, L);
        }
        if (m <= m_n) {
            const real first = v[0];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const real cur = v[k];
                const real r1 = (k + 1 < K) ? v[k + 1] : right0;
                const real r2 = (k + 2 < K) ? v[k + 2] : (k + 2 == K ? right0 : right1);
                v[k] = w_left[k] * left + w_mid[k] * cur + w_right[k] * r1 + w_far[k] * r2;
                left = cur;
            }
            if (sl == 0) v[2] += bottom * first;
        }
        if ((m & 15) == 0) rescale<real, L, K>(v, scale);
        const bool at_n = m == m_n, at_e = m == m_e;
        if (__any_sync(kFull, at_n || at_e)) {
            const real s = segment_sum<real, L, K>(v);
            if (at_n) {
                sum_n = s;
                scale_n = scale;
            }
            if (at_e) {
                sum_e = s;
                scale_e = scale;
            }
        }
    }

    // D_n and D_e on the option's curve (kEntries: on each entry's, below).
    const int term_unit = p.term_unit[o];
    LevelDiscounts<real> d{};
    if constexpr (!kEntries) d = level_discounts(curves.of(o), n, expiry_step, m_e >= 0, dt, term_unit, sum_n, scale_n,
                                                 sum_e, scale_e);

    // ---- backward weights, indexed by the node j: reads j+1, j, j-1 and j-2 -------------------
    // (the bottom node's read of -jmax+2 is the scalar `bottom`, applied in lane 0)
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = base + k;
        w_left[k] = w_mid[k] = w_right[k] = w_far[k] = 0;
        v[k] = real(FACE_VALUE);
        if (j <= half) {
            const real ej = R::exp_(-R::mul(R::mul(real(j), dr), dt));
            const Probs<real> pj = probabilities(j, jmax, M);
            if (j == -jmax) {
                w_right[k] = pj.pm * ej;
                w_mid[k] = pj.pd * ej;
            } else if (j == jmax) {
                w_mid[k] = pj.pu * ej;
                w_left[k] = pj.pm * ej;
                w_far[k] = pj.pd * ej;
            } else {  // in a truncated window the nodes +-half read nothing outside it
                w_right[k] = j + 1 <= half ? pj.pu * ej : real(0);
                w_mid[k] = pj.pm * ej;
                w_left[k] = j - 1 >= -half ? pj.pd * ej : real(0);
            }
        }
    }
    const real bottom_b =
        edges ? probabilities(-jmax, jmax, M).pu * R::exp_(-R::mul(R::mul(real(-jmax), dr), dt)) : real(0);
    const real X = p.strike[o];
    const int type = p.type[o];
    const bool paid = expiry_step >= 0 && expiry_step <= n - 1;
    // C_e = (D_n / D_e) * U * 2^scale; the payoff restarts the scaling at 1.
    auto payoff = [&](real (&level)[K], const LevelDiscounts<real> &on, int at_scale) {
        const real ratio = on.d_n / on.d_e;  // D_n / D_e mantissa
        const int ratio_exp = on.d_n_exp - on.d_e_exp;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const real c = scaled(ratio, level[k], ratio_exp + at_scale);
            v[k] = type == PUT ? fmax(X - c, real(0)) : fmax(c - X, real(0));
        }
    };
    // One backward step i of the undiscounted recursion, in every lane (the shuffles), applied where `step`.
    auto backward = [&](bool step) {
        real left1 = 0, left2 = 0, right = 0;
        if (L > 1) {
            left1 = __shfl_up_sync(kFull, v[K - 1], 1, L);
            left2 = __shfl_up_sync(kFull, v[K - 2], 1, L);
            right = __shfl_down_sync(kFull, v[0], 1, L);
        }
        if (step) {
            const real third = v[2];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const real cur = v[k];
                const real r1 = (k + 1 < K) ? v[k + 1] : right;
                v[k] = w_right[k] * r1 + w_mid[k] * cur + w_left[k] * left1 + w_far[k] * left2;
                left2 = left1;
                left1 = cur;
            }
            if (sl == 0) v[0] += bottom_b * third;
        }
    };
    auto root_value = [&]() {  // j = 0 sits in lane half / K of the segment, slot half % K
        real mine = 0;
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (base + k == 0) mine = v[k];
        return __shfl_sync(kFull, mine, half / K, L);
    };
    // kEntries: the steps n-1 .. e do not depend on the curve; U_e (u) and its scale are kept for the entries.
    real u[kEntries ? K : 1];
    int scale_u = 0;
    scale = 0;
    for (int i = n_max - 1; i >= 0; --i) {
        backward(i < n && (!kEntries || !paid || i >= expiry_step));
        if (i < n && i == expiry_step) {
            if constexpr (kEntries) {
#pragma unroll
                for (int k = 0; k < K; ++k) u[k] = v[k];
                scale_u = scale;
            } else {
                payoff(v, d, scale);
                scale = 0;
            }
        }
        if ((i & 15) == 0) rescale<real, L, K>(v, scale);
    }
    const real root = root_value();
    if constexpr (!kEntries) {
        if (valid && sl == 0) out[o] = paid ? scaled(d.d_e, root, d.d_e_exp + scale) : scaled(d.d_n, root, d.d_n_exp + scale);
    } else {
        // Each entry: its curve's D_n and D_e, the payoff at e from U_e, then the steps e-1 .. 0 (an option
        // not paid inside its tree: D_n times the root of the pass above).
        const int first = entries.begin[o];
        const int own = valid ? entries.begin[o + 1] - first : 0;
        const int most = __reduce_max_sync(kFull, own);
        const int top = __reduce_max_sync(kFull, own > 0 && paid ? expiry_step : -1);
        for (int k = 0; k < most; ++k) {
            const bool has = k < own;
            const LevelDiscounts<real> on = level_discounts(curves.at(has ? entries.curve[first + k] : 0), n,
                                                            expiry_step, m_e >= 0, dt, term_unit, sum_n, scale_n,
                                                            sum_e, scale_e);
            const bool redo = has && paid;
            int at = 0;
            for (int i = top; i >= 0; --i) {
                backward(redo && i < expiry_step);
                if (redo && i == expiry_step) {
                    payoff(u, on, scale_u);
                    at = 0;
                }
                if ((i & 15) == 0) rescale<real, L, K>(v, at, redo && i <= expiry_step);
            }
            const real entry_root = top >= 0 ? root_value() : real(0);
            if (has && sl == 0)
                out[first + k] = paid ? scaled(on.d_e, entry_root, on.d_e_exp + at) : scaled(on.d_n, root, on.d_n_exp + scale);
        }
    }
}

template <typename real, int L, int K>
void launch_class(const Params<real> &params, DeviceCurve<real> curve, OptionEntries entries, const int *perm,
                  int begin, int count, real *out, int block_size, cudaStream_t stream) {
    const int blocks = segment_blocks<L>(count, block_size);
    if (entries.begin)
        fast_kernel<real, L, K, true><<<blocks, block_size, 0, stream>>>(params, curve, entries, perm, begin, count, out);
    else
        fast_kernel<real, L, K, false><<<blocks, block_size, 0, stream>>>(params, curve, entries, perm, begin, count, out);
}

}  // namespace

template <typename real>
void launch_fast(int cls, const Params<real> &params, DeviceCurve<real> curve, OptionEntries entries, const int *perm,
                 int begin, int count, real *out, int block_size, cudaStream_t stream) {
    if (count <= 0) return;
    if (block_size < 32 || block_size > 128 || block_size % 32 != 0) block_size = 128;
    with_fast_class(cls, [&](auto lanes, auto nodes) {
        launch_class<real, decltype(lanes)::value, decltype(nodes)::value>(params, curve, entries, perm, begin, count,
                                                                            out, block_size, stream);
    });
    TRINOM_CHECK(cudaGetLastError());
}

}  // namespace trinom
