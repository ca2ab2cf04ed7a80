// Internal declarations of the coupon-bond pricer (docs/paper-instrument.md): the device view of
// one chunk of bonds and the launchers of its two kernels (kernel_bonds.cuh).
#pragma once

#include "trinom_internal.cuh"

namespace trinom {

// One chunk of bonds on the device, in the working precision; per-bond arrays are in the chunk's
// input order (index o), cash flows and curves flattened as in the 19-array file.
template <typename real> struct BondArgs {
    const int *n, *jmax;                    // tree height and half width (host, in float64)
    const int *term_unit, *term_steps;      // days per term unit, steps per term unit
    const real *a, *sigma, *spread, *strike;
    const int *first, *last, *freq, *curve; // exercise window and period, yield curve index
    const signed char *type;                // CALL or PUT
    const int *cf_begin;                    // count + 1 entries: bond o owns [cf_begin[o], cf_begin[o+1])
    const int *cf_step;                     // per cash flow: its step,
    const real *cf_paid, *cf_coupon;        // repayment + coupon (added in `real`), and the coupon
    const int *curve_begin;                 // curves + 1 entries into curve_rates / curve_days
    const real *curve_rates;
    const int *curve_days;
    real *scratch;                          // per-step discount factors (and the wide kernel's levels)
    // Scenario entries (nullptr: one price per bond, out[o]): bond o is priced on curve ent_curve[k]
    // with spread ent_spread[k] for k in [ent_begin[o], ent_begin[o+1]), into out[k].
    const int *ent_begin, *ent_curve;
    const real *ent_spread;
    // Optional (nullptr: every entry prices every step): cp_step[o] >= 1, the step after which bond o's first
    // entry keeps its level; an entry k > first with ent_resume[k] starts from it (-1: none).
    const int *cp_step, *ent_resume;
    // Optional (nullptr: no bond has one): bond o's listed exercise points are [ex_begin[o], ex_begin[o+1]), at
    // step ex_step[k] (ascending) the value is capped (call) or floored (put) at the dirty price ex_price[k].
    const int *ex_begin, *ex_step;
    const real *ex_price;
    // Optional (nullptr: every flow on its step): per cash flow its time in years, NaN on its step (take_flows); per
    // listed point its date in years, NaN at its step (take_listed).
    const double *cf_time, *ex_time;
    // Optional (nullptr: found where used): per flow with a time and per listed point with a date, its terms on the
    // bond's own curve (kernel_bonds.cuh's flow_terms, written by launch_flow_terms before the pricing kernels).
    const double *cf_terms, *ex_terms;
    // Optional (nullptr: price): a spread search (trinom_spread_search) for every bond o of the chunk, towards
    // the dirty price target[o]; the bond's price at the spread reported goes to out[o], the rest to found_*.
    const double *target;
    double search_low, search_high, search_tolerance, search_relative;
    int search_max;
    double *found_spread;
    int *found_iterations, *found_status;
    // Optional (nullptr: one sigma a tree): bond o's sigma pieces are [pc_begin[o], pc_begin[o+1]) (none: Hull and
    // White's tree), piece k from step pc_step[k] on (the first from 0) with V / dx^2 pc_v[k]; its grid's -dx dt is
    // pc_mdrdt[o] (its half width is jmax[o]). Such trees take the global-memory kernel (bond_wide_kernel).
    const int *pc_begin, *pc_step;
    const double *pc_v, *pc_mdrdt;
    // Optional (nullptr: none): bond o's options on coupon rates are [co_begin[o], co_begin[o+1]), at step co_step[k]
    // (ascending), their 8 terms on curve c at co_terms + 8 (c co_count + k) (trinom_cuda.h). Such trees take the
    // global-memory kernel.
    const int *co_begin, *co_step;
    const double *co_terms;
    int co_count;
};

// Bonds in warp segments (class cls < kFastClasses): the bonds perm[begin .. begin+count) of
// the chunk; warp w of the launch keeps its per-step factors at scratch + warp_at[w] (G = 32/L
// interleaved columns of n_max entries).
template <typename real>
void launch_bonds(int cls, const BondArgs<real> &args, const int *perm, int begin, int count,
                  const long long *warp_at, real *out, int block_size, cudaStream_t stream);

// Wide trees: one bond per block, tree levels in global memory (scratch + bond_at[b]: 3 W + n
// reals, W = 2 min(jmax, n) + 1; a search adds the two levels' derivatives, 2 W), following the spec's
// operations in order.
template <typename real>
void launch_bonds_wide(const BondArgs<real> &args, const int *perm, int begin, int count, const long long *bond_at,
                       real *out, cudaStream_t stream);

// Wide trees in registers (bond_block_kernel): one bond per block of T threads, K nodes each. Width class c holds the
// widths up to block_class_width(c) (1024, 2048, 4096, 5120, 8192) and runs variant block_variant(c) of
// launch_bonds_block (kernel_bonds.cuh: T x K >= the class's width); wider trees and spread searches take
// launch_bonds_wide. Scratch: 3 n reals per bond (bond_at[b]).
constexpr int kBlockClasses = 5;
constexpr int kBlockVariants = 15;
__host__ __device__ inline int block_class_width(int cls) {
    return cls == 0 ? 1024 : cls == 1 ? 2048 : cls == 2 ? 4096 : cls == 3 ? 5120 : 8192;
}
__host__ __device__ inline int block_variant_width(int variant) {
    if (variant >= 11) return variant == 11 ? 1024 : variant == 12 ? 2048 : variant == 13 ? 4096 : 5120;
    if (variant >= 7) return variant == 7 ? 1024 : variant == 8 ? 2048 : variant == 9 ? 4096 : 8192;
    return variant < 2 ? 1024 : variant < 4 ? 2048 : variant < 6 ? 4096 : 8192;
}
__host__ __device__ inline int block_class(int width) {
    for (int c = 0; c < kBlockClasses; ++c)
        if (width <= block_class_width(c)) return c;
    return kBlockClasses;
}

constexpr int kFlowTerms = 5;  // doubles a flow in BondArgs::cf_terms

// Before the pricing kernels: the curve terms of every flow with a time and every listed point with a date of the
// chunk's `count` bonds (`cashflows` flows, `points` listed points) into args.cf_terms and args.ex_terms.
template <typename real>
void launch_flow_terms(const BondArgs<real> &args, int count, int cashflows, int points, cudaStream_t stream);

// The block kernel's forward pass shared between trees of one model. The forward pass (the level spread without
// alpha, and the ratios of its sums that fit each step's alpha) depends on a tree's term unit, steps, a and sigma
// only, not on its curve, spread or cash flows, and a tree's ratios are the first n of a taller tree's of the same
// model (a tree shorter than jmax steps is narrower, but its levels are the taller tree's first n).
// kForwardAndBackward: each tree its own (ratio_at unused; scratch 3 n reals at bond_at: the ratios' two parts, then
// E). kForwardOnly: the trees (one a model, the tallest) write their ratios (scratch as before). kBackwardOnly: each
// tree reads the ratios at ratio_at[2 b] and ratio_at[2 b + 1] (its model's tree, written by a kForwardOnly launch
// before it) and keeps only E at bond_at (n reals).
enum BlockPhase { kForwardAndBackward = 0, kForwardOnly = 1, kBackwardOnly = 2 };
struct BlockShare {
    BlockPhase phase = kForwardAndBackward;
    const long long *ratio_at = nullptr;
};

template <typename real>
void launch_bonds_block(int variant, const BondArgs<real> &args, const int *perm, int begin, int count,
                        const long long *bond_at, BlockShare share, real *out, cudaStream_t stream);

}  // namespace trinom
