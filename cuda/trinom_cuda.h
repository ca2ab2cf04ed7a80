/* trinom_cuda: prices a book of interest-rate instruments under Hull-White one-factor trinomial
 * trees on NVIDIA GPUs: European options on zero-coupon bonds (three kernels: cuda-option,
 * cuda-multi, cuda) and coupon bonds with an embedded call or put (docs/paper-instrument.md).
 *
 * One entry prices a book: trinom_cuda_price_book() takes an option section and a bond section
 * (either may be empty) and a device id. The library keeps at most one context per device (the
 * device's primary context, streams, pinned and device buffers, host staging threads), created
 * on the first call for that device and kept until trinom_cuda_release(). Calls are thread-safe:
 * calls on different devices run at the same time, calls on one device one after the other.
 * Each call binds the device's primary context on the calling thread and restores the caller's
 * current context before it returns (other CUDA code in the process keeps its own).
 *
 * Every function returns TRINOM_OK (0) or a status code, and fills the caller's trinom_error
 * (where not NULL) with the status, the failing row, the field or stage, and a message.
 *
 * The declarations between the CDEF markers are plain C that cffi's cdef() parses once the
 * lines starting with '#' are removed. */
#ifndef TRINOM_CUDA_H
#define TRINOM_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CDEF BEGIN */
enum trinom_status {
    TRINOM_OK = 0,
    TRINOM_ERR_CUDA = 1,      /* a CUDA call failed; the message has CUDA's error string */
    TRINOM_ERR_ARGUMENT = 2,  /* a bad argument or input row (null pointer, unknown variant, no valid tree, ...) */
    TRINOM_ERR_MEMORY = 3,    /* even one instrument does not fit in the GPU memory budget */
    TRINOM_ERR_NO_DEVICE = 5, /* no usable CUDA device (no driver, or the driver reports none) */
    TRINOM_ERR_DEVICE = 6     /* the device id is not one of the devices this process sees */
};

/* Which part of a book an error belongs to. */
enum trinom_section { TRINOM_SECTION_NONE = 0, TRINOM_SECTION_OPTIONS = 1, TRINOM_SECTION_BONDS = 2 };

enum trinom_variant {
    TRINOM_VARIANT_OPTION = 0, /* cuda-option: one option per thread (thesis CUDA-option / GPU-OUTER) */
    TRINOM_VARIANT_MULTI = 1,  /* cuda-multi: options bin-packed into blocks (thesis CUDA-multi / GPU-FLAT) */
    TRINOM_VARIANT_FAST = 2    /* cuda: options in warp segments, tree levels in registers */
};

enum trinom_precision { TRINOM_F32 = 0, TRINOM_F64 = 1 };

/* Padding granularity of cuda-option's expanded arrays. */
enum trinom_padding { TRINOM_PAD_GLOBAL = 0, TRINOM_PAD_BLOCK = 1, TRINOM_PAD_WARP = 2 };

/* Options on zero-coupon bonds as a struct of arrays, `count` entries each (host memory), in the
 * dtypes of trinom.Portfolio so that Python passes its arrays without converting them: term_unit
 * and term_steps are whole numbers held as double, option_type is int8. */
typedef struct trinom_portfolio {
    int64_t count;
    const double *strike;      /* strike X */
    const double *maturity;    /* bond maturity T in years */
    const double *expiry;      /* option expiry in years */
    const double *term_unit;   /* days per term unit (a whole number) */
    const double *term_steps;  /* tree steps per term unit (a whole number) */
    const double *a;           /* mean reversion */
    const double *sigma;       /* volatility */
    const int8_t *option_type; /* 0 = call, 1 = put */
    /* Optional (NULL: every option on the book's `curve`): option i is priced on curve curve_index[i] of the
     * book's `option_curves` (`curve` is then not read): a market's scenarios of an option book, one call. */
    const int64_t *curve_index;
    /* Optional scenario entries (NULL: one price per option; not with curve_index): option i is priced once
     * per entry k in [entry_offset[i], entry_offset[i+1]) (entry_offset[0] == 0), on curve entry_curve[k] of
     * the book's option_curves, and option_prices receives entry_offset[count] prices in entry order. The
     * curve enters the reformulated tree through two level discounts only, so the forward pass and the
     * backward steps down to the expiry run once per option and each entry prices the steps below the
     * expiry: the same bits as the option priced alone on that curve. The fast variant only, and trees of
     * width <= 512 only (a wider one is refused with its row, or skipped with options->skip_wide: price it
     * with curve_index). */
    const int64_t *entry_offset;
    const int64_t *entry_curve;
} trinom_portfolio;

/* The options' yield curve: continuously compounded rates[k] at days[k] (strictly increasing). */
typedef struct trinom_curve {
    int32_t count;
    const double *rates;
    const int32_t *days;
} trinom_curve;

/* Coupon bonds with an embedded call or put (docs/paper-instrument.md): a struct of arrays in the
 * dtypes of trinom.bonds.BondPortfolio (host memory), validated by the caller
 * (BondPortfolio.validate). Per bond: `count` entries; per cash flow: cashflow_offset[count]
 * entries, the bonds' schedules concatenated. */
typedef struct trinom_bonds {
    int64_t count;
    const int64_t *term_unit;          /* days per term unit (360: a term unit is a year) */
    const int64_t *term_steps;         /* tree steps per term unit */
    const double *a;                   /* mean reversion */
    const double *sigma;               /* volatility */
    const double *maturity;            /* maturity in term units */
    const double *spread;              /* option-adjusted spread, percent per year */
    const int8_t *option_type;         /* 0 = call, 1 = put */
    const double *strike;              /* clean exercise price per 100 face */
    const int64_t *first_exercise;     /* first step at which exercise is allowed */
    const int64_t *last_exercise;      /* last step at which exercise is allowed */
    const int64_t *exercise_frequency; /* exercise period in steps (>= 1) */
    const int64_t *curve_index;        /* the bond's yield curve (0-based) */
    const int64_t *cashflow_offset;    /* count + 1 entries: bond b owns [offset[b], offset[b+1]) */
    const int64_t *cashflow_step;      /* per cash flow: tree step (ascending; the last is the height) */
    const double *repayment;           /* per cash flow: principal paid */
    const double *coupon;              /* per cash flow: coupon amount paid */
    /* Scenario entries. NULL: one price per bond, on its curve_index with its spread. Otherwise bond b
     * is priced once per entry k in [entry_offset[b], entry_offset[b+1]) (entry_offset[0] == 0), on
     * curve entry_curve[k] with spread entry_spread[k], and bond_prices receives entry_offset[count]
     * prices in entry order. The forward pass, whose scaled levels depend on neither the curve nor
     * the spread, runs once per bond; each entry is one backward pass. */
    const int64_t *entry_offset;
    const int64_t *entry_curve;
    const double *entry_spread;
    /* Optional with entries (NULL: every entry prices every step). checkpoint_step[b] in 1..height-1 (or
     * -1): bond b's first entry keeps its level after that step, and an entry k after the first with
     * entry_resume[k] != 0 starts from it, pricing the steps before only. The caller guarantees that
     * such an entry has the first entry's spread and zero-coupon prices at every step from
     * checkpoint_step - 1 on (its curve differs before that time only), so it gets the same bits as
     * if priced whole. */
    const int64_t *checkpoint_step;
    const int8_t *entry_resume;
    /* Optional (NULL: price). A spread search instead of prices: see trinom_spread_search. */
    const struct trinom_spread_search *search;
    /* Optional listed exercise points (NULL exercise_offset: no bond has any). Bond b's points are
     * [exercise_offset[b], exercise_offset[b+1]) (count + 1 entries): at step exercise_step[k] (strictly
     * ascending within a bond, 1..height; a point at the height is never reached) the value on that
     * step's nodes is capped (call) or floored (put, by option_type) at exercise_price[k], a dirty price
     * per 100 face (no accrued interest is added), after the window's exercise of that step. */
    const int64_t *exercise_offset;
    const int64_t *exercise_step;
    const double *exercise_price;
    /* Optional (NULL: every cash flow on its step). Per cash flow, its time in years (NaN: on its step): a flow
     * with a time t is paid then, between the steps cashflow_step - 1 and cashflow_step, and valued at the
     * first of them from each node by Hull-White's zero-coupon bond price fitted to the tree
     * (docs/paper-instrument.md, "Flows between steps"). */
    const double *cashflow_time;
    /* Optional (NULL: every listed point at its step). Per listed exercise point, its date in years (NaN: at its
     * step): a point with a date between exercise_step and the next step pays its price then, and the flows paid by
     * the date are the holder's whatever is decided. */
    const double *exercise_time;
    /* Optional sigma pieces (NULL piece_offset: every tree Hull and White's, one sigma; python/trinom/model/
     * piecewise_tree.py). Bond b's pieces are [piece_offset[b], piece_offset[b+1]) (count + 1 entries; none: its
     * tree is Hull and White's): piece k applies from step piece_step[k] on (the first from step 0, ascending), each
     * step's branching from its V / dx^2, piece_v[k]; the tree's grid is piece_jmax[b] nodes each side and
     * piece_mdrdt[b] = -dx dt (per bond, read where the bond has pieces). */
    const int64_t *piece_offset;
    const int64_t *piece_step;
    const double *piece_v;
    const int64_t *piece_jmax;
    const double *piece_mdrdt;
    /* Optional options on coupon rates (NULL option_offset: none; python/trinom/instruments/coupon_options.py).
     * Bond b's are [option_offset[b], option_offset[b+1]) (count + 1 entries), at step option_step[k] (ascending),
     * valued from each node before the step's exercise with the 8 terms of python/trinom/engines/
     * coupon_option_terms.py on each curve: option k's on curve c are option_terms[8 (c K + k) ..], K =
     * option_offset[count] (a bond's own curve's, or a scenario entry's). */
    const int64_t *option_offset;
    const int64_t *option_step;
    const double *option_terms;
} trinom_bonds;

/* How a bond's spread search ended (trinom_spread_search.status). */
enum trinom_search_status {
    TRINOM_SEARCH_CONVERGED = 0,      /* |model - target| <= tolerance and <= relative_tolerance * target */
    TRINOM_SEARCH_OUTSIDE = 1,        /* the target is above the model price at `low` or below it at `high` */
    TRINOM_SEARCH_NO_CONVERGENCE = 2, /* max_iterations pricings passed (the closest spread is reported) */
    TRINOM_SEARCH_OVERFLOW = 3,       /* the model price left the floating-point range */
    TRINOM_SEARCH_SKIPPED = 4         /* the target is not a positive number: the bond was not searched */
};

/* Per bond, the spread (percent per year, the unit of trinom_bonds.spread) at which the model's dirty
 * price equals target[b], all bonds in one launch sequence: the forward pass of a bond's tree (which does
 * not depend on its spread) runs once, then each iteration is one backward pass that carries the price's
 * derivative by the spread beside the price, and a Newton step on log(model / target) kept inside the
 * bracket of the spreads tried so far (false position or bisection where Newton leaves it or stalls). The
 * search starts at the bond's own spread (clamped to [low, high]); a bond is done when converged, when a
 * step at an end of [low, high] keeps the sign of the gap (outside), or after max_iterations pricings.
 * bond_prices receives the model's dirty price at the spread reported (NaN where outside or skipped);
 * with entries the call is refused. */
typedef struct trinom_spread_search {
    const double *target;   /* per bond: the dirty price to reach per 100 face (not > 0 or NaN: skipped) */
    double low, high;       /* the spreads searched, low < high (percent) */
    double tolerance;       /* the largest |model - target| accepted (>= 0) */
    double relative_tolerance; /* and the largest |model - target| / target (>= 0) */
    int32_t max_iterations; /* the most pricings (backward passes) a bond may take (>= 1) */
    int32_t reserved;
    double *spread;         /* out, per bond: the spread found (NaN where outside or skipped) */
    int32_t *iterations;    /* out, per bond: the pricings (backward passes) it took */
    int32_t *status;        /* out, per bond: enum trinom_search_status */
} trinom_spread_search;

/* The bonds' yield curves, flattened: curve c has terms[c] points (rates, days), curves concatenated. */
typedef struct trinom_bond_curves {
    int64_t count;
    const int64_t *terms;
    const double *rates;  /* continuously compounded, decimal */
    const int64_t *days;  /* strictly increasing within a curve */
} trinom_bond_curves;

/* A book: an option section (options + their curve, or their curves with options.curve_index) and a bond
 * section (bonds + their curves). A section with count 0 is empty and its arrays and curves are not read. */
typedef struct trinom_book {
    trinom_portfolio options;
    trinom_curve curve;
    trinom_bonds bonds;
    trinom_bond_curves bond_curves;
    trinom_bond_curves option_curves; /* with options.curve_index: the curves it indexes (same layout) */
} trinom_book;

/* How to price a book. Zero-filled fields take their defaults. */
typedef struct trinom_run_options {
    int32_t precision;       /* enum trinom_precision: compute in float or double (both sections) */
    int32_t variant;         /* options: enum trinom_variant */
    int32_t block_size;      /* options: threads per block; 0: the variant's default (option 128, multi 1024, fast 128) */
    int32_t padding;         /* options: enum trinom_padding (cuda-option only); 0 = TRINOM_PAD_GLOBAL */
    int32_t no_sort;         /* 1: keep input order (options: no sorting by width / height; bonds: group by width only) */
    int32_t bond_block_size; /* bonds: threads per block of the warp-segment kernel, 32..128; 0: 128 */
    int32_t bond_wide_only;  /* bonds: 1 = price every bond with the wide-tree kernels (one bond per block, levels in
                              * registers), 2 = with the one whose levels are in global memory */
    int32_t skip_wide;       /* options with scenario entries: 1 = an option wider than the fast kernel's 512
                              * nodes is skipped, its entries' prices NaN (the caller prices it otherwise);
                              * 0: refused with its row */
    int64_t chunk_size;      /* options: most options priced per chunk; 0: automatic */
    int64_t bond_chunk_size; /* bonds: most bonds priced per chunk; 0: automatic */
    int64_t memory_limit;    /* bytes of GPU memory a chunk's buffers may use (options: its inputs and
                              * the kernels' expanded arrays; bonds: its inputs and scratch); 0: the
                              * memory policy, a fixed fraction of what the device has free
                              * (memory_policy.cuh) */
} trinom_run_options;

/* Timings of one section of a call. */
typedef struct trinom_section_timing {
    double kernel_ms;  /* pricing kernels (cudaEvent), summed over chunks */
    double device_ms;  /* first upload to last download (cudaEvent), summed over chunks */
    int64_t chunks;    /* number of chunks (and workspace pieces) priced */
    int64_t fallback;  /* instruments priced by the wide-tree path */
} trinom_section_timing;

/* Timings of one call, in milliseconds. */
typedef struct trinom_timing {
    trinom_section_timing options;
    trinom_section_timing bonds;
    double total_ms;   /* wall clock of the call, both sections */
} trinom_timing;

/* What went wrong, filled by every entry (status TRINOM_OK and row -1 on success). */
typedef struct trinom_error {
    int32_t status;    /* enum trinom_status, the entry's return value */
    int32_t section;   /* enum trinom_section: which input arrays `row` indexes */
    int64_t row;       /* the failing row within the section's input arrays (0-based), -1 if none */
    int32_t device;    /* the device id of the call, -1 if none */
    int32_t reserved;
    char field[32];    /* the input field at fault ("curve_index", "option_type", ...), empty if none */
    char stage[32];    /* where it failed ("arguments", "device", "geometry", "plan", "kernels", ...) */
    char message[512]; /* the message, without the row (the caller adds it) */
} trinom_error;

/* Number of CUDA devices this process sees. TRINOM_ERR_NO_DEVICE (count 0) when there is no
 * driver or it reports none. Creates no context. `error` may be NULL. */
int trinom_cuda_device_count(int32_t *count, trinom_error *error);
/* The name of device `device` into name[0..size) (NUL-terminated). Creates no context. */
int trinom_cuda_device_name(int32_t device, char *name, int32_t size, trinom_error *error);
/* Prices a book on device `device`: writes book->options.count option prices into
 * `option_prices` and book->bonds.count dirty bond prices per 100 face (one per scenario entry
 * where the bonds have entries; with book->bonds.search, the price at each bond's spread found and
 * the search's outcome in the trinom_spread_search) into `bond_prices`, each
 * in input order, as float (TRINOM_F32) or double (TRINOM_F64). Options are priced first, then
 * bonds; each section is priced as a separate call for it alone would price it (same bits).
 * Option trees wider than 512 nodes go to the cuda-option kernel, bond trees wider than 512 nodes
 * to the one-bond-per-block kernel (timing->*.fallback counts them). The prices of an empty
 * section may be NULL; `options`, `timing` and `error` may be NULL. */
int trinom_cuda_price_book(const trinom_book *book, int32_t device, const trinom_run_options *options,
                           void *option_prices, void *bond_prices, trinom_timing *timing, trinom_error *error);
/* Frees the context of `device` (all contexts for -1): its buffers, streams and threads, and
 * releases its primary context. A later call on the device creates a new one. */
void trinom_cuda_release(int32_t device);
/* CDEF END */

#ifdef __cplusplus
}
#endif

#endif
