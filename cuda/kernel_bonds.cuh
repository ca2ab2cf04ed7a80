// Coupon bonds with an embedded call or put (docs/paper-instrument.md), two kernels:
//
// * bond_kernel: the `cuda` design (kernel_fast.cuh). Each bond is a segment of L lanes of a
//   warp, each lane holding K consecutive nodes of a tree level in registers; neighbours cross
//   lanes by shuffles. The forward pass needs no alpha: with D_m = prod_{i<m} exp(-alpha_i dt),
//   the scaled level T_m = Q_m exp(-j dr dt) / D_m satisfies T_{m+1} = W T_m, and
//   exp(-alpha_m dt) = P_m / (D_m sum T_m) = (P_m / P_{m-1}) (S_{m-1} / S_m) with S_m = sum T_m.
//   T is renormalised by a power of two whenever S_m leaves [2^-16, 2^16] (on the paper's data
//   D_m reaches 1e-3186), so the ratio needs no exponent. E_m g (with the OAS factor g) is
//   stored per step in global memory, G bonds of a warp interleaved. The backward pass keeps
//   true values, since exercise (min/max against strike + accrued interest) and cash flows need
//   them: cont_j = (pu V_u + pm V_m + pd V_d) ((E_i g) x_j). Keeping x_j out of the weights
//   keeps float32 from overflowing where the reference does not (sum p V <= max V).
// * bond_wide_kernel: trees wider than the fast classes (W > 512): one bond per block, levels in
//   global memory, the spec's operations in its order (alpha by log, no contraction); only the
//   level sum's order differs.
//
// Semantics (§6): quirks Q1 (a cash flow reaches |j| <= min(i, jmax) only), Q2, Q4 and the +-inf
// mapping are kept; Q3 is not: the cash-flow pointer never leaves the bond's own schedule. Listed
// exercise points (BondArgs::ex_*) cap or floor the value at their dirty price at their own steps, after
// the window's exercise (the same side, so one bound: the lower for a call, the higher for a put).
#pragma once

#include <cfloat>
#include <math_constants.h>

#include "trinom_bonds.cuh"

namespace trinom {

namespace {

constexpr int kWideThreads = 256;

template <typename real> struct Extremes;
template <> struct Extremes<float> {
    static constexpr float max = FLT_MAX, min = FLT_MIN;
};
template <> struct Extremes<double> {
    static constexpr double max = DBL_MAX, min = DBL_MIN;
};

// §6 step 6: +inf becomes the largest finite value, -inf the smallest positive normal one.
template <typename real> __device__ __forceinline__ real clamp_inf(real v) {
    if (isinf(v)) v = v > real(0) ? Extremes<real>::max : Extremes<real>::min;
    return v;
}

// Per-bond constants (§2, §9): V and dr in double, the rest computed in double from
// working-precision operands and rounded to `real`, as trinom.bonds.model.bond_geometry.
template <typename real> struct BondConstants {
    real dt, M, mdrdt, g;
    double dt64;
};

// g = exp(-(spread / 100) dt): the spread's one-step discount.
template <typename real> __device__ __forceinline__ real spread_factor(real spread, real dt) {
    using R = Rn<real>;
    return real(exp(double(R::mul(-R::div(spread, real(SPREAD_UNIT)), dt))));
}

template <typename real>
__device__ __forceinline__ BondConstants<real> bond_constants(int term_unit, int term_steps, real a, real sigma,
                                                              real spread) {
    using R = Rn<real>;
    using D = Rn<double>;
    BondConstants<real> c;
    const double u = ceil(D::div(double(BOND_DAYS_IN_YEAR), double(term_unit)));
    c.dt = real(D::div(u, double(term_steps)));
    c.dt64 = double(c.dt);
    const double decay = exp(double(R::mul(R::mul(real(-2), a), c.dt)));
    const double V = D::div(D::mul(double(R::mul(sigma, sigma)), D::sub(1.0, decay)), double(R::mul(real(2), a)));
    const double dr = D::sqrt_(D::mul(3.0, V));
    c.M = real(D::sub(exp(double(R::mul(-a, c.dt))), 1.0));
    c.mdrdt = real(D::mul(-dr, c.dt64));
    c.g = spread_factor(spread, c.dt);
    return c;
}

// x_j = exp(mdrdt j): the level shift's one-step discount.
template <typename real> __device__ __forceinline__ real node_discount(real mdrdt, int j) {
    return real(exp(double(Rn<real>::mul(mdrdt, real(j)))));
}

// The §3 table, operation by operation (w2 = (2j) M, w3 = (3j) M).
template <typename real> __device__ __forceinline__ Probs<real> bond_probabilities(int j, int jmax, real M) {
    using R = Rn<real>;
    using C = Sixths<real>;
    const real q = R::mul(R::mul(real(j * j), M), M);
    const real w = R::mul(real(j), M);
    const real half = real(0.5);
    Probs<real> p;
    if (j == -jmax) {
        p.pu = R::add(C::one_sixth, R::mul(R::sub(q, w), half));
        p.pm = R::add(R::sub(C::minus_third, q), R::mul(real(2 * j), M));
        p.pd = R::add(C::seven_sixths, R::mul(R::sub(q, R::mul(real(3 * j), M)), half));
    } else if (j == jmax) {
        p.pu = R::add(C::seven_sixths, R::mul(R::add(q, R::mul(real(3 * j), M)), half));
        p.pm = R::sub(R::sub(C::minus_third, q), R::mul(real(2 * j), M));
        p.pd = R::add(C::one_sixth, R::mul(R::add(q, w), half));
    } else {
        p.pu = R::add(C::one_sixth, R::mul(R::add(q, w), half));
        p.pm = R::sub(C::two_thirds, q);
        p.pd = R::add(C::one_sixth, R::mul(R::sub(q, w), half));
    }
    return p;
}

// A tree with sigma pieces (python/trinom/model/piecewise_tree.py, fut/lattice.fut's probabilities_v): node j's
// probabilities at a step whose variance is v = V / dx^2 (Hull and White's own at v = 1/3), operation by operation.
template <typename real>
__device__ __forceinline__ Probs<real> piece_probabilities(int j, int jmax, real M, real v) {
    using R = Rn<real>;
    const real jM = R::mul(real(j), M);
    const real jjMM = R::mul(jM, jM);
    const real half = real(0.5);
    const real hv = R::mul(v, half);
    Probs<real> p;
    if (j == -jmax) {
        p.pu = R::add(hv, R::mul(R::sub(jjMM, jM), half));
        p.pm = R::add(R::sub(-v, jjMM), R::mul(real(2), jM));
        p.pd = R::add(R::add(real(1), hv), R::mul(R::sub(jjMM, R::mul(real(3), jM)), half));
    } else if (j == jmax) {
        p.pu = R::add(R::add(real(1), hv), R::mul(R::add(jjMM, R::mul(real(3), jM)), half));
        p.pm = R::sub(R::sub(-v, jjMM), R::mul(real(2), jM));
        p.pd = R::add(hv, R::mul(R::add(jjMM, jM), half));
    } else {
        p.pu = R::add(hv, R::mul(R::add(jjMM, jM), half));
        p.pm = R::sub(R::sub(real(1), v), jjMM);
        p.pd = R::add(hv, R::mul(R::sub(jjMM, jM), half));
    }
    return p;
}

// Step i's V / dx^2 of bond o's sigma pieces (the last piece starting at or before i).
template <typename real> __device__ __forceinline__ real piece_v(const BondArgs<real> &b, int o, int i) {
    int k = b.pc_begin[o];
    const int end = b.pc_begin[o + 1];
    while (k + 1 < end && b.pc_step[k + 1] <= i) ++k;
    return real(b.pc_v[k]);
}

// The standard normal distribution function.
__device__ __forceinline__ double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

// Options lo .. hi - 1 on coupon rates from a node whose factor x_j is d (python/trinom/engines/
// coupon_option_terms.py's node_values; `terms` the 8 of each on the curve priced): each amount times Hull and
// White's option on P(s, e) from the node, summed in order.
__device__ __forceinline__ double coupon_options_value(const double *terms, int lo, int hi, double d) {
    const double ln_d = log(d);
    double acc = 0.0;
    for (int k = lo; k < hi; ++k) {
        const double *t = terms + size_t(k) * 8;
        const double p_s = exp(t[0] + t[1] * ln_d), p_e = exp(t[2] + t[3] * ln_d);
        const double sd = t[4], strike = t[5] * p_s;
        const bool call = t[7] != 0.0;
        double v;
        if (sd > 0.0) {
            const double d1 = log(p_e / strike) / sd + 0.5 * sd;
            v = call ? p_e * normal_cdf(d1) - strike * normal_cdf(d1 - sd)
                     : strike * normal_cdf(sd - d1) - p_e * normal_cdf(-d1);
        } else {
            v = call ? fmax(p_e - strike, 0.0) : fmax(strike - p_e, 0.0);
        }
        acc += t[6] * (isfinite(v) ? v : 0.0);
    }
    return acc;
}

// The branch of node s to t, or 0, from s's probabilities `p`.
template <typename real> __device__ __forceinline__ real branch_of(const Probs<real> &p, int s, int t, int jmax) {
    const int d = t - s;
    if (s == -jmax) return d == 2 ? p.pu : d == 1 ? p.pm : d == 0 ? p.pd : real(0);
    if (s == jmax) return d == 0 ? p.pu : d == -1 ? p.pm : d == -2 ? p.pd : real(0);
    return d == 1 ? p.pu : d == 0 ? p.pm : d == -1 ? p.pd : real(0);
}

// Probability that node s (of a full-width level) branches to t, or 0 (§3).
template <typename real> __device__ __forceinline__ real branch_to(int s, int t, int jmax, real M) {
    return branch_of(bond_probabilities(s, jmax, M), s, t, jmax);
}

// §4: the zero rate at t years on one curve, searching on from the last index found: forward
// (t only grows, `at` starts at 0) or, with `down`, backward (t only falls, `at` starts at count).
// Both find the first pillar at or after the day, so both give the same bits.
template <typename real> struct CurveCursor {
    const real *rates;
    const int *days;
    int count, at;
    template <bool down = false> __device__ __forceinline__ real rate(real t, int term_unit) {
        using R = Rn<real>;
        const real x = R::mul(t, real(term_unit));
        const real rounded = floor(R::add(fabs(x), real(0.5)));
        const int d = static_cast<int>(x < real(0) ? -rounded : rounded);
        if (down)
            while (at > 0 && days[at - 1] >= d) --at;
        else
            while (at < count && days[at] < d) ++at;
        if (at == 0) return rates[0];
        if (at >= count) return rates[count - 1];
        const real coefficient = R::div(real(d - days[at - 1]), real(days[at] - days[at - 1]));
        return R::add(rates[at - 1], R::mul(coefficient, R::sub(rates[at], rates[at - 1])));
    }
};

// A cursor on curve `c`, at its start (forward) or its end (`down`).
template <typename real>
__device__ __forceinline__ CurveCursor<real> curve_cursor_of(const BondArgs<real> &b, int c, bool down = false) {
    const int lo = b.curve_begin[c], hi = b.curve_begin[c + 1];
    return CurveCursor<real>{b.curve_rates + lo, b.curve_days + lo, hi - lo, down ? hi - lo : 0};
}

template <typename real>
__device__ __forceinline__ CurveCursor<real> curve_cursor(const BondArgs<real> &b, int o) {
    return curve_cursor_of(b, b.curve[o]);
}

// P(0, t) = exp(-R(t) t) in double (§5), at t = (m + 1) dt.
template <bool down = false, typename real>
__device__ __forceinline__ double zero_price(CurveCursor<real> &curve, int m, const BondConstants<real> &c,
                                             int term_unit) {
    using R = Rn<real>;
    const real t = R::mul(real(m + 1), c.dt);
    return exp(double(R::mul(-curve.template rate<down>(t, term_unit), t)));
}

// The cursor of `curve` at the first pillar at or after day d (a binary search: what the walking cursors find).
template <typename real> __device__ __forceinline__ CurveCursor<real> curve_at_day(const CurveCursor<real> &curve, int d) {
    int lo = 0, hi = curve.count;  // the first index with days[at] >= d
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (curve.days[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return CurveCursor<real>{curve.rates, curve.days, curve.count, lo};
}

// The whole day of t years as the cursors round it (half away from zero).
template <typename real> __device__ __forceinline__ int day_of(real t, int term_unit) {
    using R = Rn<real>;
    const real x = R::mul(t, real(term_unit));
    const real rounded = floor(R::add(fabs(x), real(0.5)));
    return static_cast<int>(x < real(0) ? -rounded : rounded);
}

// P(0, (m + 1) dt) as zero_price, the curve's index found by binary search (the same pillar as the cursors find).
template <typename real>
__device__ __forceinline__ double zero_price_at(const CurveCursor<real> &curve, int m, const BondConstants<real> &c,
                                                int term_unit) {
    using R = Rn<real>;
    const real t = R::mul(real(m + 1), c.dt);
    CurveCursor<real> at = curve_at_day(curve, day_of(t, term_unit));
    return exp(double(R::mul(-at.rate(t, term_unit), t)));
}

// P(0, t) at a cash flow's time t (years, in double): exp(-R(t) t), the rate read at t's whole day.
template <typename real>
__device__ __forceinline__ double zero_price_time(const CurveCursor<real> &curve, double t, int term_unit) {
    CurveCursor<real> at = curve_at_day(curve, day_of(real(t), term_unit));
    return exp(-double(at.rate(real(t), term_unit)) * t);
}

// The backward pass' per-bond state (§6): local cash-flow index p (never below the bond's first,
// so no Q3), its step S, and r, the cash flows not yet added.
struct CashflowCursor {
    int first, p, S, r;
};

// A last flow with a time (`timed_last`: paid at its date, before step n) is not on step n's nodes: the cursor stays
// on it, and it is taken at step n - 1 as the flows between steps are.
__device__ __forceinline__ CashflowCursor cashflow_start(const int *steps, int first, int end, int n,
                                                        bool timed_last = false) {
    CashflowCursor c{first, end - 1, 0, end - first};
    c.S = steps[c.p];
    if (timed_last) return c;
    c.r -= 1;
    if (c.p > c.first && c.S <= n && c.r > 0) c.S = steps[--c.p];
    return c;
}

// The value of step n's nodes: the maturity flow, or 0 where it has a time (cashflow_start).
template <typename real> __device__ __forceinline__ bool last_flow_timed(const BondArgs<real> &b, int end) {
    return b.cf_time != nullptr && !isnan(b.cf_time[end - 1]);
}

// Step i's exercise flag (§6.2, with S before the cash flow is added: Q4).
__device__ __forceinline__ bool exercise_at(int i, int S, int first_ex, int last_ex, int freq) {
    return first_ex <= i && i <= last_ex && (S - i) % freq == 0;
}

// §6.3: the cash flow of step i+1, if it is due; `paid` is the amount (0 if none).
template <typename real>
__device__ __forceinline__ real take_cashflow(CashflowCursor &c, int i, int n, const int *steps, const real *paid) {
    if (!(i == c.S - 1 && c.r > 0)) return real(0);
    const real amount = paid[c.p];
    if (c.p > c.first && c.S <= n) c.S = steps[--c.p];
    c.r -= 1;
    return amount;
}

// Flows between steps (docs/paper-instrument.md, "Flows between steps"): the flows of step i+1 with a time t in
// (t_i, t_i+1] are valued at step i from each node j as c0 + c1 x_j (bonds/reference.py's _FlowsBetweenSteps, in
// double): lambda = B(t - t_i) / B(dt) weighs the tree's one-step discount x_j against a constant, and the level
// makes the tree price P(0, t) exp(-s (t - t_i)) exactly, with E_i and the curve's P(0, t_i), P(0, t_i+1). A listed
// point dated between steps i and i+1 pays its price then: its value from each node is e0 + e1 x_j the same way, and
// the step's flows paid by its date (a0 + a1 x_j) come after its exercise. The d* are the derivatives by the spread
// (percent), for a spread search.
struct TimedFlows {
    double c0, c1, d0, d1;  // the flows valued before the step's exercise
    double a0, a1, da0, da1;  // the flows paid by the listed point's date: after it
    double e0, e1, de0, de1;  // the dated listed point's price
    bool dated;
    // Cleared before the step's first flow or dated point (`timed`: the step has one).
    __device__ __forceinline__ void start(bool &timed) {
        if (!timed) *this = TimedFlows{};
        timed = true;
    }
};

// The curve's part of a flow's value at step i = its step - 1 (FlowContext::value): tau = t - t_i, lambda =
// B(tau) / B(dt), P(0, t), P(0, t_i) and P(0, t_i+1) on the bond's own curve. flow_terms_kernel finds them once a
// flow before the backward passes (BondArgs::cf_terms, kFlowTerms doubles a flow), so a pass only adds E_i and the
// spread: a narrow kernel's lanes would otherwise each search the curve three times at every flow of any bond of
// their warp.
struct FlowTerms {
    double tau, lambda, p_t, p_before, p_after;
};

template <typename real>
__device__ __forceinline__ FlowTerms flow_terms(const CurveCursor<real> &curve, const BondConstants<real> &c, double a,
                                                int term_unit, int i, double t) {
    const double tau = t - double(i) * c.dt64;
    return FlowTerms{tau, (1.0 - exp(-a * tau)) / (1.0 - exp(-a * c.dt64)), zero_price_time(curve, t, term_unit),
                     i > 0 ? zero_price_at(curve, i - 1, c, term_unit) : 1.0, zero_price_at(curve, i, c, term_unit)};
}

// What a flow's value at step i needs, looked up only where the step has such a flow (a step without one loads
// nothing): bond o's curve `curve` (a scenario entry's, or its own), its spread in percent (*spread_at, or `spread`
// where that is nullptr), E_i = eg / g, and the flows' curve terms where the curve is the bond's own.
template <typename real> struct FlowContext {
    const BondArgs<real> *b;
    const BondConstants<real> *c;
    int o, curve, term_unit;
    const real *spread_at;
    double spread;
    real eg, g;

    // The value c0 + c1 x_j at step i of `amount` paid at t (in (t_i, t_i+1]), and its derivative d0 + d1 x_j; entry
    // `at` of `terms` (cf_terms or ex_terms: its terms on the bond's own curve, or nullptr) holds its curve terms.
    __device__ __forceinline__ void value(int i, double t, double amount, double &k0, double &k1, double &q0,
                                          double &q1, const double *terms, int at) const {
        FlowTerms f;
        if (terms != nullptr && curve == b->curve[o]) {
            const double *stored = terms + size_t(at) * kFlowTerms;
            f = FlowTerms{stored[0], stored[1], stored[2], stored[3], stored[4]};
        } else {
            f = flow_terms(curve_cursor_of(*b, curve), *c, double(b->a[o]), term_unit, i, t);
        }
        const double s = spread_at != nullptr ? double(*spread_at) : spread;
        const double after = f.p_after / (double(eg) / double(g));
        const double level = f.p_t * exp(-(s / SPREAD_UNIT) * f.tau) / ((1.0 - f.lambda) * f.p_before + f.lambda * after);
        const double scaled = amount * level;
        k0 = scaled * (1.0 - f.lambda);
        k1 = scaled * f.lambda;
        q0 = -f.tau / SPREAD_UNIT * k0;
        q1 = -f.tau / SPREAD_UNIT * k1;
    }
};

// One thread an event with a time, valued at its step - `before` (a flow: 1, a listed point: 0): its curve terms on
// its bond's own curve (FlowContext::value), for the `count` bonds of the chunk; `begin`, `step` and `time` are the
// events' (cf_* or ex_*).
template <typename real>
__global__ void flow_terms_kernel(BondArgs<real> b, int count, const int *begin, const int *step, const double *time,
                                  int before, double *terms) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= begin[count]) return;
    const double t = time[f];
    const int i = step[f] - before;
    if (isnan(t) || i < 0) return;
    int lo = 0, hi = count;  // the bond o with begin[o] <= f < begin[o + 1]
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (begin[mid] <= f) lo = mid;
        else hi = mid;
    }
    const int o = lo;
    const BondConstants<real> c = bond_constants<real>(b.term_unit[o], b.term_steps[o], b.a[o], b.sigma[o], b.spread[o]);
    const FlowTerms k = flow_terms(curve_cursor(b, o), c, double(b.a[o]), b.term_unit[o], i, t);
    double *out = terms + size_t(f) * kFlowTerms;
    out[0] = k.tau;
    out[1] = k.lambda;
    out[2] = k.p_t;
    out[3] = k.p_before;
    out[4] = k.p_after;
}

// take_cashflow with flows between steps: the flow of step i+1 on its step (or 0) is returned, the flows with a
// time (several may share a step) are summed into `tf`, those paid by `date` (the step's dated listed point's, NaN:
// none) apart. `tf` is written only where the step has such a flow (`timed` is then set; tf is cleared first if it
// was not), so a kernel may keep it out of registers.
template <typename real>
__device__ __forceinline__ real take_flows(CashflowCursor &cf, int i, int n, const BondArgs<real> &b,
                                           const FlowContext<real> &ctx, double date, TimedFlows &tf, bool &timed) {
    if (b.cf_time == nullptr) return take_cashflow(cf, i, n, b.cf_step, b.cf_paid);
    real stepped = real(0);
    while (i == cf.S - 1 && cf.r > 0) {
        const double t = b.cf_time[cf.p];
        if (isnan(t)) {
            stepped = b.cf_paid[cf.p];
        } else {
            double k0, k1, q0, q1;
            ctx.value(i, t, double(b.cf_paid[cf.p]), k0, k1, q0, q1, b.cf_terms, cf.p);
            tf.start(timed);
            if (t <= date) {
                tf.a0 += k0, tf.a1 += k1, tf.da0 += q0, tf.da1 += q1;
            } else {
                tf.c0 += k0, tf.c1 += k1, tf.d0 += q0, tf.d1 += q1;
            }
        }
        if (cf.p > cf.first && cf.S <= n) cf.S = b.cf_step[--cf.p];
        cf.r -= 1;
    }
    return stepped;
}

// Node value v (continuation at x, its spread derivative d) after the step: the flows before exercise, the window's
// or an undated listed point's bound `price` where `exercise`, a dated listed point's, the flows paid by its date.
template <typename real>
__device__ __forceinline__ real settle(const TimedFlows &tf, bool call, bool exercise, real price, real v, real x,
                                       real &d) {
    const double xd = double(x);
    if (tf.c0 != 0.0 || tf.c1 != 0.0) {
        v = v + real(tf.c0 + tf.c1 * xd);
        d = d + real(tf.d0 + tf.d1 * xd);
    }
    if (exercise && (call ? v > price : price > v)) {
        v = price;
        d = real(0);
    }
    if (tf.dated) {
        const real bound = real(tf.e0 + tf.e1 * xd);
        if (call ? v > bound : bound > v) {
            v = bound;
            d = real(tf.de0 + tf.de1 * xd);
        }
    }
    if (tf.a0 != 0.0 || tf.a1 != 0.0) {
        v = v + real(tf.a0 + tf.a1 * xd);
        d = d + real(tf.da0 + tf.da1 * xd);
    }
    return v;
}

// §6.4: the exercise price strike + accrued interest at step i (Q2: the coupon paid at S).
template <typename real>
__device__ __forceinline__ real exercise_price(const CashflowCursor &c, int i, real strike, const int *steps,
                                               const real *coupon) {
    using R = Rn<real>;
    real accrued = real(0);
    if (c.S != 0 && c.r > 0) {
        const int next = steps[c.p + 1];
        const real span = real(next - c.S);
        const real left = real(max(next - i, 0));
        accrued = R::mul(R::div(R::sub(span, left), span), coupon[c.p]);
    }
    return R::add(strike, accrued);
}

// The bond's listed exercise points, walked from the last down (as the cash-flow pointer): `at` indexes the next
// one (below `first`: none left) and `step` is its step (-1: none). A point at the maturity step n is never
// reached, as the window's exercise never is there, so the walk starts below it.
struct ListedCursor {
    int first, at, step;
};

template <typename real> __device__ __forceinline__ ListedCursor listed_start(const BondArgs<real> &b, int o, int n) {
    ListedCursor c{0, -1, -1};
    if (!b.ex_begin) return c;
    c.first = b.ex_begin[o];
    c.at = b.ex_begin[o + 1] - 1;
    while (c.at >= c.first && b.ex_step[c.at] >= n) --c.at;
    c.step = c.at >= c.first ? b.ex_step[c.at] : -1;
    return c;
}

// The date of step i's listed point where it is between steps (b.ex_time), else NaN.
template <typename real>
__device__ __forceinline__ double listed_date(const ListedCursor &c, int i, const BondArgs<real> &b) {
    return c.step == i && b.ex_time != nullptr ? b.ex_time[c.at] : CUDART_NAN;
}

// Step i's exercise with its listed point, if it has one: `exercise` and `price` (the window's, strike +
// accrued interest) become the step's exercise flag and its one bound (a call's lower, a put's higher); a point
// dated between steps is valued from each node instead (tf's e0 + e1 x_j, FlowContext::value).
template <typename real>
__device__ __forceinline__ void take_listed(ListedCursor &c, int i, const BondArgs<real> &b, bool call, bool &exercise,
                                            real &price, const FlowContext<real> &ctx, TimedFlows &tf, bool &timed) {
    if (c.step != i) return;
    const real listed = b.ex_price[c.at];
    const double date = b.ex_time != nullptr ? b.ex_time[c.at] : CUDART_NAN;
    if (isnan(date)) {
        price = !exercise ? listed : call ? (listed < price ? listed : price) : (listed > price ? listed : price);
        exercise = true;
    } else {
        tf.start(timed);
        tf.dated = true;
        ctx.value(i, date, double(listed), tf.e0, tf.e1, tf.de0, tf.de1, b.ex_terms, c.at);
    }
    --c.at;
    c.step = c.at >= c.first ? b.ex_step[c.at] : -1;
}

// The last step at or below i where the backward pass has something to do besides the nodes' sums: a cash flow
// (the cursor's), a listed point or the window's exercise (with the cursor's S, which moves only at a flow); -1: none.
__device__ __forceinline__ int last_event_step(int i, const CashflowCursor &cf, const ListedCursor &lx, int first_ex,
                                               int last_ex, int freq) {
    if (freq <= 0) return i;  // no window arithmetic to trust: every step is looked at
    int event = max(cf.r > 0 ? cf.S - 1 : -1, lx.step);
    const int top = min(i, last_ex);
    if (top >= first_ex) {
        const int e = top - ((top - cf.S) % freq + freq) % freq;  // the last step <= top with (S - e) % freq == 0
        if (e >= first_ex) event = max(event, e);
    }
    return min(event, i);
}

// One bond's spread search (trinom_spread_search): every thread that works on the bond holds the same
// state and takes the same steps, from the same price and derivative. The gap f = log(model / target)
// is nearly linear in the spread and falls as it rises; f' = (dP/ds) / P.
struct SpreadSearch {
    double target;              // the dirty price to reach
    double s;                   // the spread the next backward pass prices (in the working precision)
    double low, high;           // the root lies in [low, high]
    double f_low, f_high;       // f at low (> 0) and at high (< 0), once a pricing has shown it
    bool low_seen, high_seen;
    double best_s, best_p, best_miss;  // the pricing closest to the target so far
    double f_last;
    int iterations, stalls, status;  // status: -1 while searching, else enum trinom_search_status

    // Bond o's search, from its own spread (within the bracket).
    template <typename real> __device__ void start(const BondArgs<real> &b, int o) {
        target = b.target[o];
        low = b.search_low;
        high = b.search_high;
        f_low = f_high = 0;
        low_seen = high_seen = false;
        s = double(real(fmin(fmax(double(b.spread[o]), low), high)));
        best_s = best_p = __longlong_as_double(0x7ff8000000000000LL);  // NaN
        best_miss = f_last = __longlong_as_double(0x7ff0000000000000LL);  // +inf
        iterations = stalls = 0;
        status = target > 0 && isfinite(target) ? -1 : TRINOM_SEARCH_SKIPPED;
    }

    // After a pricing at s: the price p and its derivative dp by the spread (Newton's slope; where it is not
    // finite, the bracket's steps alone). True once the search ends.
    template <typename real> __device__ bool step(double p, double dp, const BondArgs<real> &b) {
        ++iterations;
        if (!(isfinite(p) && p > 0)) return finish(TRINOM_SEARCH_OVERFLOW);
        const double miss = fabs(p - target);
        if (miss < best_miss) {
            best_miss = miss;
            best_s = s;
            best_p = p;
        }
        if (miss <= b.search_tolerance && miss <= b.search_relative * target) return finish(TRINOM_SEARCH_CONVERGED);
        const double lo = b.search_low, hi = b.search_high;
        const double f = log(p / target);
        if (f > 0) {  // the model is above the target: the root lies at a higher spread
            low = s;
            f_low = f;
            low_seen = true;
        } else {
            high = s;
            f_high = f;
            high_seen = true;
        }
        if ((f > 0 && s >= hi) || (f <= 0 && s <= lo)) return finish(TRINOM_SEARCH_OUTSIDE);
        if (iterations >= b.search_max) return finish(TRINOM_SEARCH_NO_CONVERGENCE);
        const bool bracketed = low_seen && high_seen;
        stalls = bracketed && fabs(f) > 0.5 * fabs(f_last) ? stalls + 1 : 0;
        f_last = f;
        const double newton = s - f * p / dp;
        double next;
        if (stalls < 2 && isfinite(newton) && newton > low && newton < high) {
            next = newton;
        } else if (bracketed) {  // false position, or bisection when that stalls too
            const double position = (low * f_high - high * f_low) / (f_high - f_low);
            next = stalls < 2 && position > low && position < high ? position : 0.5 * (low + high);
        } else {  // towards the end of the bracket on the root's side
            next = f > 0 ? hi : lo;
        }
        if (next == s) return finish(TRINOM_SEARCH_NO_CONVERGENCE);
        s = double(real(next));
        return false;
    }

    __device__ bool finish(int how) {
        status = how;
        if (how == TRINOM_SEARCH_OUTSIDE || how == TRINOM_SEARCH_OVERFLOW)
            best_s = best_p = __longlong_as_double(0x7ff8000000000000LL);
        return true;
    }
};

// Bond o's search outcome (written once, by one thread).
template <typename real> __device__ __forceinline__ void report_search(const BondArgs<real> &b, int o,
                                                                      const SpreadSearch &st, real *out) {
    out[o] = real(st.best_p);
    b.found_spread[o] = st.best_s;
    b.found_iterations[o] = st.iterations;
    b.found_status[o] = st.status;
}


// One backward step's probability-weighted sums of a segment's level, in place (each source j reads its
// targets j+1, j, j-1; the top's j-2 and the bottom's j+2 are scalars, the bottom's added in the first lane);
// left1, left2 and right are the neighbour lanes' values.
template <typename real, int K>
__device__ __forceinline__ void backward_sums(real (&level)[K], real left1, real left2, real right,
                                              const real (&w_right)[K], const real (&w_mid)[K],
                                              const real (&w_left)[K], int top_kb, real top_b, real bottom_b,
                                              bool first_lane) {
    const real third = level[2];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const real cur = level[k];
        const real r1 = (k + 1 < K) ? level[k + 1] : right;
        real next = w_right[k] * r1 + w_mid[k] * cur + w_left[k] * left1;
        if (k == top_kb) next += top_b * left2;
        level[k] = next;
        left2 = left1;
        left1 = cur;
    }
    if (first_lane) level[0] += bottom_b * third;
}

// What bond_kernel does: one price per bond, one per scenario entry, or a spread search per bond.
enum BondMode { kPriceMode, kEntryMode, kSearchMode };

// kEntryMode: the bond's scenario entries (BondArgs::ent_*). The forward pass then stores the
// curve-free ratio S_{m-1} / S_m per step, and each entry's backward pass multiplies it by its own
// curve's P_m / P_{m-1} (looked up L steps at a time, walking the curve backward) and spread factor:
// the same operations as the one-price path, so an entry on the bond's own curve and spread gives
// its price bit for bit in float64.
// kSearchMode: the forward pass stores E_m without the spread factor; each search iteration is one
// backward pass at the bond's current spread s (E_i g(s), rounded as the one-price path rounds it: the
// same bits as pricing the bond at s) that carries dV/ds beside V: with g = exp(-(s / 100) dt),
// d cont / ds = (d sum - sum dt / 100) (E_i g x_j), and 0 where the bond is exercised (in its window or
// at a listed point: the value is then the exercise price, which does not depend on the spread).
template <typename real, int L, int K, int kMode>
__global__ void __launch_bounds__(128) bond_kernel(BondArgs<real> b, const int *__restrict__ perm, int begin, int count,
                                                   const long long *__restrict__ warp_at, real *__restrict__ out) {
    using R = Rn<real>;
    constexpr bool kScen = kMode == kEntryMode;
    constexpr bool kSearch = kMode == kSearchMode;
    constexpr int G = 32 / L;  // bonds per warp
    const int lane = threadIdx.x & 31;
    const int sl = lane & (L - 1);  // lane within the segment
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (warp * G >= count) return;  // whole warp idle
    const int column = lane / L;
    const int slot = warp * G + column;
    const bool valid = slot < count;
    // Segments past the end mirror the warp's first bond and write no price.
    const int o = perm[begin + (valid ? slot : warp * G)];
    const int n = b.n[o], jmax = b.jmax[o];
    const int n_max = __reduce_max_sync(kFull, n);
    const int e0 = kScen ? b.ent_begin[o] : 0;
    const int entries = kScen ? b.ent_begin[o + 1] - e0 : 1;
    const int e_max = kScen ? __reduce_max_sync(kFull, entries) : 1;
    if (e_max == 0) return;  // no bond of the warp has an entry
    // Nodes beyond |j| = n are never reached and never reach the root: the segment holds
    // |j| <= half only; the tree's edges are in it when half == jmax.
    const int half = min(jmax, n);
    const bool edges = half == jmax;
    const int base = sl * K - half;  // j of this lane's slot 0
    const int term_unit = b.term_unit[o];
    const BondConstants<real> c = bond_constants<real>(term_unit, b.term_steps[o], b.a[o], b.sigma[o], b.spread[o]);
    real *factor = b.scratch + warp_at[warp] + column;  // (E_i g) at factor[i * G]
    // kScen: the first entry's level after step cp_step[o], slot k of lane l at checkpoint[k * 32 + l]
    real *checkpoint = b.scratch + warp_at[warp] + G * n_max;
    // The step's flows between steps (rarely written, read only then): in shared memory, out of the registers that the
    // level and its weights fill.
    __shared__ TimedFlows timed_flows[128];
    TimedFlows &tf = timed_flows[threadIdx.x];

    real v[K], w_left[K], w_mid[K], w_right[K];

    // ---- forward weights by target j (sources j-1, j, j+1; the top's j+2 and the bottom's
    // jump to -jmax+2 are scalars), each times x_j ----------------------------------------------
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = base + k;
        w_left[k] = w_mid[k] = w_right[k] = 0;
        v[k] = j == 0 ? real(1) : real(0);
        if (j <= half) {
            const real xj = node_discount(c.mdrdt, j);
            const Probs<real> pj = bond_probabilities(j, jmax, c.M);
            w_mid[k] = (j == -jmax ? pj.pd : (j == jmax ? pj.pu : pj.pm)) * xj;
            if (j > -jmax && j - 1 >= -half) {
                const Probs<real> pk = bond_probabilities(j - 1, jmax, c.M);
                w_left[k] = (j - 1 == -jmax ? pk.pm : pk.pu) * xj;
            }
            if (j < jmax && j + 1 <= half) {
                const Probs<real> pk = bond_probabilities(j + 1, jmax, c.M);
                w_right[k] = (j + 1 == jmax ? pk.pm : pk.pd) * xj;
            }
        }
    }
    const real bottom = edges ? bond_probabilities(-jmax, jmax, c.M).pu * node_discount(c.mdrdt, 2 - jmax) : real(0);
    const real top = edges ? bond_probabilities(jmax, jmax, c.M).pd * node_discount(c.mdrdt, jmax - 2) : real(0);
    const int top_k = edges && jmax - 2 - base >= 0 && jmax - 2 - base < K ? jmax - 2 - base : -1;

    // ---- forward: E_m = (P_m / P_{m-1}) (S_{m-1} / S_m), T_{m+1} = W T_m ------------------------
    // The zero-coupon prices P_m are computed L at a time: lane sl of the segment looks up step
    // m + sl (its own curve cursor), then step m's value is broadcast from lane m % L.
    CurveCursor<real> curve = curve_cursor(b, o);
    double p_prev = 1, p_lane = 1;
    real s_prev = 1;
    for (int m = 0; m < n_max; ++m) {
        real s = segment_sum<real, L, K>(v);
        if constexpr (!kScen) {
            if (m % L == 0) p_lane = m + sl < n ? zero_price(curve, m + sl, c, term_unit) : 1.0;
        }
        const double p = kScen ? 1.0 : L > 1 ? __shfl_sync(kFull, p_lane, m % L, L) : p_lane;
        if (m < n) {
            if constexpr (kScen) {
                if (sl == 0) factor[m * G] = real(double(s_prev) / double(s));
            } else {
                const real e = real((p / p_prev) * (double(s_prev) / double(s)));
                if (sl == 0) factor[m * G] = kSearch ? e : R::mul(e, c.g);
            }
            p_prev = p;
            const int shift = ilogb_(s);
            if (shift > 16 || shift < -16) {  // exact power-of-two renormalisation
#pragma unroll
                for (int k = 0; k < K; ++k) v[k] = R::ldexp_(v[k], -shift);
                s = R::ldexp_(s, -shift);
            }
            s_prev = s;
        }
        if (m + 1 < n_max) {
            // Halo from the neighbour lanes; at the segment's ends the shuffles return the lane's
            // own values, which meet zero weights.
            real left = 0, right0 = 0, right1 = 0;
            if (L > 1) {
                left = __shfl_up_sync(kFull, v[K - 1], 1, L);
                right0 = __shfl_down_sync(kFull, v[0], 1, L);
                right1 = __shfl_down_sync(kFull, v[1], 1, L);
            }
            if (m + 1 < n) {
                const real first = v[0];
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const real cur = v[k];
                    const real r1 = (k + 1 < K) ? v[k + 1] : right0;
                    const real r2 = (k + 2 < K) ? v[k + 2] : (k + 2 == K ? right0 : right1);
                    real next = w_left[k] * left + w_mid[k] * cur + w_right[k] * r1;
                    if (k == top_k) next += top * r2;
                    v[k] = next;
                    left = cur;
                }
                if (sl == 0) v[2] += bottom * first;
            }
        }
    }
    __syncwarp();  // each segment's lane 0 wrote the factors its lanes read below

    // ---- backward weights by source j (targets j+1, j, j-1; the bottom's j+2 and the top's j-2
    // are scalars) and the node discounts x_j ------------------------------------------------------
    real x[K];
    const int p0 = b.cf_begin[o], p1 = b.cf_begin[o + 1];
    CashflowCursor cf = cashflow_start(b.cf_step, p0, p1, n, last_flow_timed(b, p1));
    ListedCursor lx = listed_start(b, o, n);
    const real at_maturity = last_flow_timed(b, p1) ? real(0) : b.cf_paid[p1 - 1];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = base + k;
        w_left[k] = w_mid[k] = w_right[k] = x[k] = 0;
        v[k] = at_maturity;  // the maturity cash flow on every node of step n
        if (j <= half) {
            x[k] = node_discount(c.mdrdt, j);
            const Probs<real> pj = bond_probabilities(j, jmax, c.M);
            if (j == -jmax) {
                w_right[k] = pj.pm;
                w_mid[k] = pj.pd;
            } else if (j == jmax) {
                w_mid[k] = pj.pu;
                w_left[k] = pj.pm;
            } else {  // in a truncated window the nodes +-half read nothing outside it
                w_right[k] = j + 1 <= half ? pj.pu : real(0);
                w_mid[k] = pj.pm;
                w_left[k] = j - 1 >= -half ? pj.pd : real(0);
            }
        }
    }
    const real bottom_b = edges ? bond_probabilities(-jmax, jmax, c.M).pu : real(0);
    const real top_b = edges ? bond_probabilities(jmax, jmax, c.M).pd : real(0);
    const int top_kb = edges && jmax - base >= 0 && jmax - base < K ? jmax - base : -1;
    const real strike = b.strike[o];
    const bool call = b.type[o] == CALL;
    const int first_ex = b.first[o], last_ex = b.last[o], freq = b.freq[o];
    const int *steps = b.cf_step;

    // An entry that resumes starts from the first entry's level after step cp (its curve and spread give
    // that entry's bits for every step from cp on): only steps cp-1 .. 0 are priced again.
    const int cp = kScen && b.cp_step ? b.cp_step[o] : -1;
    CashflowCursor cf_at_cp = cf;  // the first entry's cash-flow cursor at the checkpoint
    ListedCursor lx_at_cp = lx;    // and its listed points' cursor
    // kSearch: the bond's search (the same in every lane of its segment) and dV/ds per node.
    SpreadSearch search{};
    real dv[K];
    const real spread_dt = kSearch ? R::div(c.dt, real(SPREAD_UNIT)) : real(0);
    if constexpr (kSearch) {
        search.start(b, o);
        if (valid && sl == 0 && search.status >= 0) report_search(b, o, search, out);
    }
    for (int e = 0;; ++e) {  // entries, or search iterations
    bool has;
    if constexpr (kSearch) {
        has = valid && search.status < 0;
        if (!__any_sync(kFull, has)) break;
    } else {
        if (e >= e_max) break;
        has = e < entries;
    }
    const bool resume = kScen && has && cp > 0 && e > 0 && b.ent_resume[e0 + e] != 0;
    const int top = resume ? cp : n;  // the entry prices steps top-1 .. 0
    real g = kSearch ? spread_factor(real(search.s), c.dt) : c.g;
    double p_hi = 1;  // P_i of the entry's curve (kScen)
    CurveCursor<real> down{};
    if (kScen && has) {
        g = spread_factor(b.ent_spread[e0 + e], c.dt);
        down = curve_cursor_of(b, b.ent_curve[e0 + e], true);
        CurveCursor<real> first = down;  // the lanes' cursor must only walk down: look P_{top-1} up apart
        p_hi = zero_price<true>(first, top - 1, c, term_unit);
    }
    if (kScen || kSearch) {
        cf = resume ? cf_at_cp : cashflow_start(b.cf_step, p0, p1, n, last_flow_timed(b, p1));
        lx = resume ? lx_at_cp : listed_start(b, o, n);
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = resume ? checkpoint[k * 32 + lane] : at_maturity;
    }
    if constexpr (kSearch) {
#pragma unroll
        for (int k = 0; k < K; ++k) dv[k] = 0;
    }
    double p_lane = 1;
    real eg = kScen ? real(0) : factor[(n - 1) * G];
    // A step with no flow, exercise or listed point (most of them) skips their bookkeeping (as bond_block_kernel).
    int event = last_event_step(top - 1, cf, lx, first_ex, last_ex, freq);
    // The warp starts at its highest step to price (resuming entries skip the steps above their checkpoint).
    const int i_start = kScen || kSearch ? __reduce_max_sync(kFull, has ? top : 0) - 1 : n_max - 1;
    for (int i = i_start; i >= 0; --i) {
        const bool live = has && i < top;
        real eg_next = 0;
        if constexpr (kScen) {
            // E_i g = (P_i / P_{i-1}) (S_{i-1} / S_i) g; lane sl of the segment looks up P at step
            // q0 + sl of the block of L steps that holds q = i - 1, then step q's value is broadcast.
            const int q = i - 1;
            if (q >= 0 && (i == i_start || q % L == L - 1)) {
                const int q0 = q / L * L;
                p_lane = has && q0 + sl < top ? zero_price<true>(down, q0 + sl, c, term_unit) : 1.0;
            }
            const double p_q = L > 1 ? __shfl_sync(kFull, p_lane, max(q, 0) % L, L) : p_lane;
            if (live) {
                const double p_lo = i > 0 ? p_q : 1.0;
                eg = R::mul(real((p_hi / p_lo) * double(factor[i * G])), g);
                p_hi = p_lo;
            }
        } else {
            if (live && i > 0) eg_next = factor[(i - 1) * G];  // prefetch
        }
        bool exercise = false, timed = false;
        real price = 0;
        if (live && i <= event) {
            const int h = min(i, jmax);
            exercise = exercise_at(i, cf.S, first_ex, last_ex, freq);
            const FlowContext<real> ctx{&b, &c, o, kScen ? b.ent_curve[e0 + e] : b.curve[o], term_unit,
                                        kScen ? b.ent_spread + e0 + e : kSearch ? nullptr : b.spread + o, search.s,
                                        eg, kSearch ? real(1) : g};
            const real cash = take_flows(cf, i, n, b, ctx, listed_date(lx, i, b), tf, timed);
            if (cash != real(0)) {  // Q1: only the nodes of step i, |j| <= h
#pragma unroll
                for (int k = 0; k < K; ++k)
                    if (abs(base + k) <= h) v[k] += cash;
            }
            if (exercise) price = exercise_price(cf, i, strike, steps, b.cf_coupon);
            take_listed(lx, i, b, call, exercise, price, ctx, tf, timed);
            event = last_event_step(i - 1, cf, lx, first_ex, last_ex, freq);
        }
        real left1 = 0, left2 = 0, right = 0;
        real d_left1 = 0, d_left2 = 0, d_right = 0;
        if (L > 1) {
            left1 = __shfl_up_sync(kFull, v[K - 1], 1, L);
            left2 = __shfl_up_sync(kFull, v[K - 2], 1, L);
            right = __shfl_down_sync(kFull, v[0], 1, L);
            if constexpr (kSearch) {
                d_left1 = __shfl_up_sync(kFull, dv[K - 1], 1, L);
                d_left2 = __shfl_up_sync(kFull, dv[K - 2], 1, L);
                d_right = __shfl_down_sync(kFull, dv[0], 1, L);
            }
        }
        if (live) {
            const bool plain = !timed;
            backward_sums(v, left1, left2, right, w_right, w_mid, w_left, top_kb, top_b, bottom_b, sl == 0);
            if constexpr (kSearch)  // dV/ds: the same linear step
                backward_sums(dv, d_left1, d_left2, d_right, w_right, w_mid, w_left, top_kb, top_b, bottom_b, sl == 0);
            const real eg_i = kSearch ? R::mul(eg, g) : eg;  // kSearch: the stored E_i times g(s)
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const real ex = eg_i * x[k];
                real d = kSearch ? (dv[k] - v[k] * spread_dt) * ex : real(0);
                real cont = v[k] * ex;
                if (plain) {
                    if (exercise && (call ? cont > price : price > cont)) {
                        cont = price;
                        d = real(0);
                    }
                } else {
                    cont = settle(tf, call, exercise, price, cont, x[k], d);
                }
                if constexpr (kSearch) dv[k] = d;
                v[k] = clamp_inf(cont);
            }
            if (!kScen) eg = eg_next;
            if (kScen && e == 0 && i == cp) {  // the level (and cursor) the resuming entries start from
#pragma unroll
                for (int k = 0; k < K; ++k) checkpoint[k * 32 + lane] = v[k];
                cf_at_cp = cf;
                lx_at_cp = lx;
            }
        }
    }

    // Root value (j = 0 sits in lane half / K of the segment, slot half % K).
    real mine = 0, d_mine = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (base + k == 0) {
            mine = v[k];
            if constexpr (kSearch) d_mine = dv[k];
        }
    const real root = __shfl_sync(kFull, mine, half / K, L);
    if constexpr (kSearch) {
        const real d_root = __shfl_sync(kFull, d_mine, half / K, L);
        if (has && search.step(double(root), double(d_root), b)) {
            if (sl == 0) report_search(b, o, search, out);
        }
    } else {
        if (valid && has && sl == 0) out[kScen ? e0 + e : o] = root;
    }
    }  // entries, or search iterations
}

// ---- wide trees: one bond per block -------------------------------------------------------------
template <typename real> __device__ real block_sum(real value, real *shared) {
    for (int off = 16; off >= 1; off /= 2) value += __shfl_xor_sync(kFull, value, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) shared[warp] = value;
    __syncthreads();
    real total = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < kWideThreads / 32; ++w) total += shared[w];
    return total;  // valid in thread 0
}

// kSearch: the forward pass once, then one backward pass per search iteration carrying dV/ds (as
// bond_kernel's kSearchMode) in two more levels after E.
template <typename real, bool kSearch>
__global__ void __launch_bounds__(kWideThreads) bond_wide_kernel(BondArgs<real> b, const int *__restrict__ perm,
                                                                 int begin, const long long *__restrict__ bond_at,
                                                                 real *__restrict__ out) {
    using R = Rn<real>;
    __shared__ real partial[kWideThreads / 32];
    __shared__ real e_shared;
    const int o = perm[begin + blockIdx.x];
    const int n = b.n[o], jmax = b.jmax[o];
    const int half = min(jmax, n);
    const int W = 2 * half + 1;
    const int term_unit = b.term_unit[o];
    BondConstants<real> c = bond_constants<real>(term_unit, b.term_steps[o], b.a[o], b.sigma[o], b.spread[o]);
    // Sigma pieces: the pieces' grid (jmax[o] is its half width) and each step's branching from its piece.
    const bool pieced = b.pc_begin != nullptr && b.pc_begin[o + 1] > b.pc_begin[o];
    if (pieced) c.mdrdt = real(b.pc_mdrdt[o]);
    auto probabilities = [&](int j, int step) {
        return pieced ? piece_probabilities(j, jmax, c.M, piece_v(b, o, step)) : bond_probabilities(j, jmax, c.M);
    };
    // Options on coupon rates: [co_first, co_end) of the chunk's, ascending steps.
    const int co_first = b.co_begin != nullptr ? b.co_begin[o] : 0, co_end = b.co_begin != nullptr ? b.co_begin[o + 1] : 0;
    real *x = b.scratch + bond_at[blockIdx.x];
    real *cur = x + W, *nxt = cur + W;
    real *E = nxt + W;  // E_i = exp(-alpha_i dt), i < n
    const int tid = threadIdx.x;

    // With scenario entries the whole tree is priced once per entry (its curve and spread): wide trees
    // are few, and their forward pass is the spec's, by log, which needs the curve.
    const bool scen = b.ent_begin != nullptr;
    const int e0 = scen ? b.ent_begin[o] : 0, entries = scen ? b.ent_begin[o + 1] - e0 : 1;
    for (int ent = 0; ent < entries; ++ent) {
    const real g = scen ? spread_factor(b.ent_spread[e0 + ent], c.dt) : c.g;
    for (int idx = tid; idx < W; idx += kWideThreads) {
        x[idx] = node_discount(c.mdrdt, idx - half);
        cur[idx] = idx == half ? real(1) : real(0);
    }
    CurveCursor<real> curve = scen ? curve_cursor_of(b, b.ent_curve[e0 + ent]) : curve_cursor(b, o);
    if (tid == 0) {  // alpha_0 = R(dt)
        const real e0 = real(exp(-Rn<double>::mul(double(curve.rate(c.dt, term_unit)), c.dt64)));
        E[0] = e0;
        e_shared = e0;
    }
    __syncthreads();

    // ---- forward (§5): gather from the sources in increasing order --------------------------------
    for (int i = 1; i < n; ++i) {
        const int h = min(i, jmax), hp = min(i - 1, jmax);
        const real e = e_shared;
        real mine = 0;
        for (int t = tid - h; t <= h; t += kWideThreads) {
            real q = 0;
            for (int s = max(t - 2, -hp); s <= min(t + 2, hp); ++s) {
                const real p = branch_of(probabilities(s, i - 1), s, t, jmax);
                if (p != real(0)) q = R::add(q, R::mul(p, R::mul(R::mul(cur[s + half], e), x[s + half])));
            }
            nxt[t + half] = q;
            mine = R::add(mine, R::mul(q, x[t + half]));
        }
        const real A = block_sum(mine, partial);
        if (tid == 0) {
            const double P = zero_price(curve, i, c, term_unit);
            const double alpha = double(real(log(double(A) / P) / c.dt64));
            const real e_i = real(exp(-Rn<double>::mul(alpha, c.dt64)));
            E[i] = e_i;
            e_shared = e_i;
        }
        __syncthreads();
        real *swap = cur;
        cur = nxt;
        nxt = swap;
    }

    // ---- backward (§6): once, or once per search iteration ------------------------------------------
    const int p0 = b.cf_begin[o], p1 = b.cf_begin[o + 1];
    const real at_maturity = last_flow_timed(b, p1) ? real(0) : b.cf_paid[p1 - 1];
    const real strike = b.strike[o];
    const bool call = b.type[o] == CALL;
    const int first_ex = b.first[o], last_ex = b.last[o], freq = b.freq[o];
    real *d_cur = E + n, *d_nxt = d_cur + W;  // kSearch: dV/ds of the two levels
    const real spread_dt = kSearch ? R::div(c.dt, real(SPREAD_UNIT)) : real(0);
    SpreadSearch search{};
    if constexpr (kSearch) {
        search.start(b, o);
        if (search.status >= 0) {
            if (tid == 0) report_search(b, o, search, out);
            return;
        }
    }
    for (;;) {
    const real g_pass = kSearch ? spread_factor(real(search.s), c.dt) : g;
    CashflowCursor cf = cashflow_start(b.cf_step, p0, p1, n, last_flow_timed(b, p1));
    ListedCursor lx = listed_start(b, o, n);
    int co_next = co_end - 1;  // the last option not yet taken (options are taken from the last step down)
    const double *co_terms =
        b.co_terms + size_t(8) * size_t(scen ? b.ent_curve[e0 + ent] : b.curve[o]) * size_t(b.co_count);
    for (int idx = tid; idx < W; idx += kWideThreads) {
        cur[idx] = at_maturity;
        if constexpr (kSearch) d_cur[idx] = 0;
    }
    __syncthreads();
    for (int i = n - 1; i >= 0; --i) {
        const int h = min(i, jmax);
        const real e = E[i];
        bool exercise = exercise_at(i, cf.S, first_ex, last_ex, freq);
        TimedFlows tf{};
        bool timed = false;
        const FlowContext<real> ctx{&b, &c, o, scen ? b.ent_curve[e0 + ent] : b.curve[o], term_unit,
                                    kSearch ? nullptr : scen ? b.ent_spread + e0 + ent : b.spread + o, search.s, e,
                                    real(1)};
        const real cash = take_flows(cf, i, n, b, ctx, listed_date(lx, i, b), tf, timed);
        if (cash != real(0)) {
            for (int j = tid - h; j <= h; j += kWideThreads) cur[j + half] = R::add(cur[j + half], cash);
            __syncthreads();
        }
        real price = exercise ? exercise_price(cf, i, strike, b.cf_step, b.cf_coupon) : real(0);
        take_listed(lx, i, b, call, exercise, price, ctx, tf, timed);
        const int co_hi = co_next + 1;  // the options of step i: [co_next + 1, co_hi) after the walk
        while (co_next >= co_first && b.co_step[co_next] >= i) --co_next;
        const int co_lo = co_next + 1;
        for (int j = tid - h; j <= h; j += kWideThreads) {
            const Probs<real> p = probabilities(j, i);
            const int u = j == -jmax ? j + 2 : j == jmax ? j : j + 1;  // targets u > m > d
            const real sum = R::add(R::add(R::mul(p.pu, cur[u + half]), R::mul(p.pm, cur[u - 1 + half])),
                                    R::mul(p.pd, cur[u - 2 + half]));
            const real ex = R::mul(R::mul(e, x[j + half]), g_pass);
            real d_cont = 0;
            if constexpr (kSearch) {
                const real d_sum = p.pu * d_cur[u + half] + p.pm * d_cur[u - 1 + half] + p.pd * d_cur[u - 2 + half];
                d_cont = (d_sum - sum * spread_dt) * ex;
            }
            real value = R::mul(sum, ex);
            if (co_lo < co_hi)  // options on coupon rates, before the step's events
                value = value + real(coupon_options_value(co_terms, co_lo, co_hi, double(x[j + half])));
            const real cont = settle(tf, call, exercise, price, value, x[j + half], d_cont);
            nxt[j + half] = clamp_inf(cont);
            if constexpr (kSearch) d_nxt[j + half] = d_cont;
        }
        __syncthreads();
        real *swap = cur;
        cur = nxt;
        nxt = swap;
        if constexpr (kSearch) {
            swap = d_cur;
            d_cur = d_nxt;
            d_nxt = swap;
        }
    }
    if constexpr (kSearch) {  // every thread takes the same step from the same root
        const bool done = search.step(double(cur[half]), double(d_cur[half]), b);
        __syncthreads();  // the root is read before the next pass rewrites the levels
        if (done) {
            if (tid == 0) report_search(b, o, search, out);
            return;
        }
    } else {
        if (tid == 0) out[scen ? e0 + ent : o] = cur[half];
        __syncthreads();  // the next entry rewrites the levels
        break;
    }
    }  // search iterations
    }  // entries
}

// ---- wide trees in registers: one bond per block (bond_block_kernel) ------------------------------
// Thread t of a block of T holds K consecutive nodes of each level in registers (node index t K + k, j = t K + k -
// half) and its nodes' x_j; the level never leaves the registers. One barrier a step: each thread publishes what its
// neighbours need in a buffer of the step's parity (the forward pass: its contributions to the two nodes either side
// of its range; the backward pass: its two first and two last values), waits, and reads theirs. Nothing else is on a
// step's path: the forward pass spreads the level without alpha (bond_kernel's scaled level, renormalised by powers
// of two a step late), its sums reach the block two steps late, and E_i = exp(-alpha_i dt) is found for all steps at
// once afterwards from the zero prices P_{i+1} (looked up for all steps at once, a binary search each); the backward
// pass reads E a step ahead. The forward pass runs once a tree (its sums do not depend on a scenario entry). In both
// passes a thread whose nodes all lie outside the step's level skips them (the growing levels, and the block's
// threads past the tree's width), and the backward pass skips a step's flow, exercise and listed-point bookkeeping
// up to the next step that has one (last_event_step). The backward pass is bond_wide_kernel's, operation by
// operation: the same cash flows, exercise window, listed points and +-inf mapping; only E_i's last bits differ.

// The node value at position p (-2..K+1, a constant once unrolled) of a thread's range: its own registers, or its
// neighbours' two values either side.
// v, as the compiler can no longer see through: what is computed from it in a loop is computed again each time,
// not kept in registers from before the loop.
__device__ __forceinline__ void opaque(double &v) { asm volatile("" : "+d"(v)); }
__device__ __forceinline__ void opaque(float &v) { asm volatile("" : "+f"(v)); }

// Node j's interior probabilities (§3's middle row, w = j M, q = w^2), rounded as the hardware likes (contracted):
// pu = 1/6 + (q + w) / 2, pm = 2/3 - q, pd = 1/6 + (q - w) / 2.
template <typename real> __device__ __forceinline__ Probs<real> interior_probabilities(real jd, real M) {
    const real w = jd * M, q = w * w;
    const real c0 = fma(real(0.5), q, Sixths<real>::one_sixth), hw = real(0.5) * w;
    return Probs<real>{c0 + hw, Sixths<real>::two_thirds - q, c0 - hw};
}

template <typename real, int T, int K, int kMinBlocks, bool kTable>
__global__ void __launch_bounds__(T, kMinBlocks) bond_block_kernel(BondArgs<real> b, const int *__restrict__ perm,
                                                                   int begin, const long long *__restrict__ bond_at,
                                                                   BlockShare share, real *__restrict__ out) {
    using R = Rn<real>;
    constexpr int kWarps = T / 32;
    __shared__ real edge[2][4][T];
    __shared__ real wpart[3][kWarps];
    const int o = perm[begin + blockIdx.x];
    const int n = b.n[o], jmax = b.jmax[o];
    const int half = min(jmax, n);
    const int W = 2 * half + 1;
    const int term_unit = b.term_unit[o];
    const BondConstants<real> c = bond_constants<real>(term_unit, b.term_steps[o], b.a[o], b.sigma[o], b.spread[o]);
    // 3 n reals: (P) the ratio's low part; (S) S_i, then the ratio; (E) the shift of step i, then E_i. A backward-only
    // tree reads P and S of its model's tree (trinom_bonds.cuh's BlockShare) and has only E.
    const bool shared = share.phase == kBackwardOnly;
    real *P = b.scratch + (shared ? share.ratio_at[2 * blockIdx.x] : bond_at[blockIdx.x]);
    real *S = shared ? b.scratch + share.ratio_at[2 * blockIdx.x + 1] : P + n;
    real *E = shared ? b.scratch + bond_at[blockIdx.x] : S + n;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int base = tid * K - half;                 // j of the thread's first node
    const int valid = max(0, min(K, W - tid * K));   // the thread's nodes inside the tree
    const real x_first = node_discount(c.mdrdt, base), x_step = node_discount(c.mdrdt, 1);  // x_j, x_{j+1} / x_j
    const real j_first = real(base);
    // The edges (a tree at least jmax + 1 steps tall): node -jmax is thread 0's first, node jmax any thread's.
    const bool edges = half == jmax;
    const bool bottom = edges && tid == 0;
    const Probs<real> pb = bond_probabilities(-jmax, jmax, c.M), pt = bond_probabilities(jmax, jmax, c.M);
    real v[K];
    // kTable: each node's interior pu and pd kept in shared memory (the thread's own column: index k T + tid, so a
    // warp reads consecutive words), pm = 1 - pu - pd: two loads and two operations a node instead of seven.
    extern __shared__ unsigned char table_bytes[];
    real *t_pu = reinterpret_cast<real *>(table_bytes), *t_pd = t_pu + T * K;
    if constexpr (kTable) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const Probs<real> p = interior_probabilities(real(base + k), c.M);
            t_pu[k * T + tid] = p.pu;
            t_pd[k * T + tid] = p.pd;
        }
    }
    const auto probabilities = [&](int k, real jd) {
        if constexpr (kTable) {
            const real pu = t_pu[k * T + tid], pd = t_pd[k * T + tid];
            return Probs<real>{pu, real(1) - pu - pd, pd};
        } else {
            return interior_probabilities(jd, c.M);
        }
    };

    const bool scen = b.ent_begin != nullptr;
    const int e0 = scen ? b.ent_begin[o] : 0, entries = scen ? b.ent_begin[o + 1] - e0 : 1;
    if (!shared) {
        // ---- forward, once a tree (nothing in it depends on a scenario entry's curve or spread): Q'_0 = 1 at j = 0;
        // step i spreads Q'_i x_j to level i + 1 (no alpha: Q_i = D_i Q'_i, with
        // S_i = sum_j Q'_ij x_j, E_i = (P_{i+1} / P_i) (S_{i-1} 2^-shift_i / S_i), found for all steps afterwards).
        // The level sum's warp shares reach the other warps a step later and its block total a step after that,
        // off each step's path; Q' is renormalised by a power of two once that total leaves [2^-16, 2^16].
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = base + k == 0 ? real(1) : real(0);
        real prev_part = real(0);
        int shift_prev = 0;
        for (int i = 0; i < n; ++i) {
            const int par = i & 1;
            int shift = 0;
            if (i >= 2) {  // S_{i-2}: its warp shares were written before the last barrier
                real total = real(0);
#pragma unroll
                for (int w = 0; w < kWarps; ++w) total += wpart[(i - 2) % 3][w];
                if (tid == 0) S[i - 2] = total;
                const int magnitude = total > real(0) && isfinite(total) ? ilogb_(total) - shift_prev : 0;
                if (magnitude > 16 || magnitude < -16) shift = magnitude;
            }
            if (shift != 0) {
#pragma unroll
                for (int k = 0; k < K; ++k) v[k] = R::ldexp_(v[k], -shift);
            }
            if (tid == 0) E[i] = real(shift);
            shift_prev = shift;
            if (i >= 1) {  // step i-1's share of this warp
#pragma unroll
                for (int off = 16; off >= 1; off /= 2) prev_part += __shfl_xor_sync(kFull, prev_part, off);
                if (lane == 0) wpart[(i - 1) % 3][warp] = prev_part;
            }
            real acc[K + 4];  // contributions to the nodes -2 .. K+1 of the thread's range
#pragma unroll
            for (int k = 0; k < K + 4; ++k) acc[k] = real(0);
            real part = real(0), xk = x_first, jd = j_first;
            opaque(xk);  // per-node factors are recomputed each step (a few operations) rather than held
            opaque(jd);
            // A thread whose nodes are all outside level i (zeros) spreads nothing: it only adds its neighbours'.
            const int hi = min(i, jmax);
            if (base <= hi && base + K - 1 >= -hi) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const real t = k < valid ? v[k] * xk : real(0);
                part += t;
                if (k == 0 && bottom) {  // node -jmax: to j+2, j+1, j
                    acc[k + 4] = fma(pb.pu, t, acc[k + 4]);
                    acc[k + 3] = fma(pb.pm, t, acc[k + 3]);
                    acc[k + 2] = fma(pb.pd, t, acc[k + 2]);
                } else if (edges && base + k == jmax) {  // node jmax: to j, j-1, j-2
                    acc[k + 2] = fma(pt.pu, t, acc[k + 2]);
                    acc[k + 1] = fma(pt.pm, t, acc[k + 1]);
                    acc[k] = fma(pt.pd, t, acc[k]);
                } else {
                    const Probs<real> p = probabilities(k, jd);
                    acc[k + 3] = fma(p.pu, t, acc[k + 3]);
                    acc[k + 2] = fma(p.pm, t, acc[k + 2]);
                    acc[k + 1] = fma(p.pd, t, acc[k + 1]);
                }
                xk *= x_step;
                jd += real(1);
            }
            }
            edge[par][0][tid] = acc[0];
            edge[par][1][tid] = acc[1];
            edge[par][2][tid] = acc[K + 2];
            edge[par][3][tid] = acc[K + 3];
            __syncthreads();
            if (tid > 0) {
                acc[2] += edge[par][2][tid - 1];
                acc[3] += edge[par][3][tid - 1];
            }
            if (tid + 1 < T) {
                acc[K] += edge[par][0][tid + 1];
                acc[K + 1] += edge[par][1][tid + 1];
            }
#pragma unroll
            for (int k = 0; k < K; ++k) v[k] = acc[k + 2];
            prev_part = part;
        }
        // The last two sums, then E_i for every step at once (in place of its shift).
#pragma unroll
        for (int off = 16; off >= 1; off /= 2) prev_part += __shfl_xor_sync(kFull, prev_part, off);
        if (lane == 0) wpart[(n - 1) % 3][warp] = prev_part;
        __syncthreads();
        if (tid == 0) {
            for (int i = max(n - 2, 0); i < n; ++i) {
                real total = real(0);
                for (int w = 0; w < kWarps; ++w) total += wpart[i % 3][w];
                S[i] = total;
            }
        }
        __syncthreads();
        // The ratio S_{i-1} 2^-shift_i / S_i (all that step i needs of the sums) for every entry, as a sum of two
        // reals (the second 0 in double): in S's place and P's.
        for (int i = tid; i < n; i += T) {
            const double s_before = i > 0 ? double(R::ldexp_(S[i - 1], -int(E[i]))) : 1.0;
            const double ratio = s_before / double(S[i]);
            E[i] = real(ratio);
            P[i] = real(ratio - double(real(ratio)));
        }
        __syncthreads();
        for (int i = tid; i < n; i += T) S[i] = E[i];
        __syncthreads();
    }
    if (share.phase == kForwardOnly) return;
    for (int ent = 0; ent < entries; ++ent) {
        const real g = scen ? spread_factor(b.ent_spread[e0 + ent], c.dt) : c.g;
        const CurveCursor<real> curve = scen ? curve_cursor_of(b, b.ent_curve[e0 + ent]) : curve_cursor(b, o);
            for (int i = tid; i < n; i += T) {
            const double p = double(real(zero_price_at(curve, i, c, term_unit)));
            const double p_before = i > 0 ? double(real(zero_price_at(curve, i - 1, c, term_unit))) : 1.0;
            E[i] = real((p / p_before) * (double(S[i]) + double(P[i])));
        }
        __syncthreads();  // E is complete

        // ---- backward: bond_wide_kernel's cash flows, exercise window, listed points and +-inf mapping, in
        // registers; each step's weighted sums in the interior's contracted form ---------------------------------
        const int p0 = b.cf_begin[o], p1 = b.cf_begin[o + 1];
        const real at_maturity = last_flow_timed(b, p1) ? real(0) : b.cf_paid[p1 - 1];
        const real strike = b.strike[o];
        const bool call = b.type[o] == CALL;
        const int first_ex = b.first[o], last_ex = b.last[o], freq = b.freq[o];
        CashflowCursor cf = cashflow_start(b.cf_step, p0, p1, n, last_flow_timed(b, p1));
        ListedCursor lx = listed_start(b, o, n);
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = at_maturity;
        real e_next = E[n - 1];
        int event = last_event_step(n - 1, cf, lx, first_ex, last_ex, freq);
        for (int i = n - 1; i >= 0; --i) {
            const int par = i & 1;
            const int h = min(i, jmax);
            const real e_i = e_next, eg = e_i * g;
            if (i > 0) e_next = E[i - 1];  // prefetched a step ahead
            // A step with no flow, exercise or listed point (most of them) skips their bookkeeping.
            bool exercise = false, timed = false;
            real cash = real(0), price = real(0);
            TimedFlows tf;
            if (i <= event) {
                exercise = exercise_at(i, cf.S, first_ex, last_ex, freq);
                const FlowContext<real> ctx{&b, &c, o, scen ? b.ent_curve[e0 + ent] : b.curve[o], term_unit,
                                            scen ? b.ent_spread + e0 + ent : b.spread + o, 0.0, e_i, real(1)};
                cash = take_flows(cf, i, n, b, ctx, listed_date(lx, i, b), tf, timed);
                price = exercise ? exercise_price(cf, i, strike, b.cf_step, b.cf_coupon) : real(0);
                take_listed(lx, i, b, call, exercise, price, ctx, tf, timed);
                event = last_event_step(i - 1, cf, lx, first_ex, last_ex, freq);
            }
            if (cash != real(0)) {
#pragma unroll
                for (int k = 0; k < K; ++k)
                    if (abs(base + k) <= h) v[k] += cash;
            }
            edge[par][0][tid] = v[0];
            edge[par][1][tid] = v[1];
            edge[par][2][tid] = v[K - 2];
            edge[par][3][tid] = v[K - 1];
            __syncthreads();
            // Old values either side of node k as it is rewritten: v[k-2], v[k-1] (from the left neighbour at first),
            // v[k+1], v[k+2] (from the right neighbour past the end).
            // A thread whose nodes are all outside level i skips them: no node of the level reads theirs.
            if (base > h || base + K - 1 < -h) continue;
            real prev2 = tid > 0 ? edge[par][2][tid - 1] : real(0), prev1 = tid > 0 ? edge[par][3][tid - 1] : real(0);
            const real r0 = tid + 1 < T ? edge[par][0][tid + 1] : real(0);
            const real r1 = tid + 1 < T ? edge[par][1][tid + 1] : real(0);
            real xk = x_first, jd = j_first;
            opaque(xk);
            opaque(jd);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const real cur = v[k];
                const real up1 = k + 1 < K ? v[k + 1] : r0;
                const real up2 = k + 2 < K ? v[k + 2] : k + 2 == K ? r0 : r1;
                real sum;
                if (k == 0 && bottom) {
                    sum = fma(pb.pu, up2, fma(pb.pm, up1, pb.pd * cur));
                } else if (edges && base + k == jmax) {
                    sum = fma(pt.pu, cur, fma(pt.pm, prev1, pt.pd * prev2));
                } else {
                    const Probs<real> p = probabilities(k, jd);
                    sum = fma(p.pu, up1, fma(p.pm, cur, p.pd * prev1));
                }
                real cont = sum * (eg * xk);
                if (!timed) {
                    if (exercise && (call ? cont > price : price > cont)) cont = price;
                } else {
                    real unused = real(0);
                    cont = settle(tf, call, exercise, price, cont, xk, unused);
                }
                v[k] = clamp_inf(cont);
                prev2 = prev1;
                prev1 = cur;
                xk *= x_step;
                jd += real(1);
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (base + k == 0) out[scen ? e0 + ent : o] = v[k];
        __syncthreads();  // the next entry rewrites P, S and E
    }
}

template <typename real, int L, int K>
void launch_class(const BondArgs<real> &args, const int *perm, int begin, int count, const long long *warp_at,
                  real *out, int block_size, cudaStream_t stream) {
    const int blocks = segment_blocks<L>(count, block_size);
    if (args.target)
        bond_kernel<real, L, K, kSearchMode><<<blocks, block_size, 0, stream>>>(args, perm, begin, count, warp_at, out);
    else if (args.ent_begin)
        bond_kernel<real, L, K, kEntryMode><<<blocks, block_size, 0, stream>>>(args, perm, begin, count, warp_at, out);
    else
        bond_kernel<real, L, K, kPriceMode><<<blocks, block_size, 0, stream>>>(args, perm, begin, count, warp_at, out);
}

}  // namespace

template <typename real>
void launch_bonds(int cls, const BondArgs<real> &args, const int *perm, int begin, int count,
                  const long long *warp_at, real *out, int block_size, cudaStream_t stream) {
    if (count <= 0) return;
    if (block_size < 32 || block_size > 128 || block_size % 32 != 0) block_size = 128;
    with_fast_class(cls, [&](auto lanes, auto nodes) {
        launch_class<real, decltype(lanes)::value, decltype(nodes)::value>(args, perm, begin, count, warp_at, out,
                                                                            block_size, stream);
    });
    TRINOM_CHECK(cudaGetLastError());
}

template <typename real>
void launch_flow_terms(const BondArgs<real> &args, int count, int cashflows, int points, cudaStream_t stream) {
    constexpr int threads = 128;
    if (count > 0 && cashflows > 0 && args.cf_terms != nullptr)
        flow_terms_kernel<real><<<(cashflows + threads - 1) / threads, threads, 0, stream>>>(
            args, count, args.cf_begin, args.cf_step, args.cf_time, 1, const_cast<double *>(args.cf_terms));
    if (count > 0 && points > 0 && args.ex_terms != nullptr)
        flow_terms_kernel<real><<<(points + threads - 1) / threads, threads, 0, stream>>>(
            args, count, args.ex_begin, args.ex_step, args.ex_time, 0, const_cast<double *>(args.ex_terms));
    TRINOM_CHECK(cudaGetLastError());
}

template <typename real>
void launch_bonds_wide(const BondArgs<real> &args, const int *perm, int begin, int count, const long long *bond_at,
                       real *out, cudaStream_t stream) {
    if (count <= 0) return;
    if (args.target)
        bond_wide_kernel<real, true><<<count, kWideThreads, 0, stream>>>(args, perm, begin, bond_at, out);
    else
        bond_wide_kernel<real, false><<<count, kWideThreads, 0, stream>>>(args, perm, begin, bond_at, out);
    TRINOM_CHECK(cudaGetLastError());
}

// The block kernel's variants (threads, nodes per thread, blocks an SM must hold, probabilities kept in shared
// memory), by the widest tree each holds.
template <typename real, int T, int K, int kMinBlocks, bool kTable = false>
void launch_block(const BondArgs<real> &args, const int *perm, int begin, int count, const long long *bond_at,
                  BlockShare share, real *out, cudaStream_t stream) {
    const int table = kTable ? 2 * T * K * int(sizeof(real)) : 0;
    if (kTable) {  // with the static edges, even a table under 48 KiB can pass the default limit of a block's total
        static const bool raised = [&] {
            TRINOM_CHECK(cudaFuncSetAttribute(bond_block_kernel<real, T, K, kMinBlocks, kTable>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, table));
            return true;
        }();
        (void)raised;
    }
    bond_block_kernel<real, T, K, kMinBlocks, kTable><<<count, T, table, stream>>>(args, perm, begin, bond_at, share,
                                                                                  out);
}

template <typename real>
void launch_bonds_block(int variant, const BondArgs<real> &args, const int *perm, int begin, int count,
                        const long long *bond_at, BlockShare share, real *out, cudaStream_t stream) {
    if (count <= 0) return;
    switch (variant) {
    case 0: launch_block<real, 128, 8, 4>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 1: launch_block<real, 128, 8, 2>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 2: launch_block<real, 256, 8, 2>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 3: launch_block<real, 256, 8, 1>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 4: launch_block<real, 256, 16, 1>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 5: launch_block<real, 512, 8, 1>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 7: launch_block<real, 128, 8, 4, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 8: launch_block<real, 256, 8, 2, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 9: launch_block<real, 512, 8, 1, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 10: launch_block<real, 512, 16, 1, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    // Sixteen nodes a thread in blocks narrow enough for several trees an SM, each with its own barrier.
    case 11: launch_block<real, 64, 16, 8, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 12: launch_block<real, 128, 16, 4, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 13: launch_block<real, 256, 16, 2, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    case 14: launch_block<real, 256, 20, 2, true>(args, perm, begin, count, bond_at, share, out, stream); break;
    default: launch_block<real, 512, 16, 1>(args, perm, begin, count, bond_at, share, out, stream); break;
    }
    TRINOM_CHECK(cudaGetLastError());
}

}  // namespace trinom
