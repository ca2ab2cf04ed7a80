/* trinom_cuda: prices European options on zero-coupon bonds under Hull-White one-factor
 * with trinomial trees on an NVIDIA GPU (three kernels: cuda-option, cuda-multi, cuda).
 *
 * One context per process: trinom_cuda_init() once, trinom_cuda_price() any number of times,
 * trinom_cuda_free() at the end. The library owns all device memory. Every function returns
 * TRINOM_OK (0) or an error code; trinom_cuda_last_error() gives the message (for CUDA errors
 * it carries CUDA's error string). Not thread-safe: call from one thread at a time.
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
    TRINOM_ERR_ARGUMENT = 2,  /* a bad argument (null pointer, unknown variant, ...) */
    TRINOM_ERR_MEMORY = 3,    /* even one option does not fit in GPU memory */
    TRINOM_ERR_NOT_INIT = 4,  /* trinom_cuda_init() was not called */
    TRINOM_ERR_NO_DEVICE = 5  /* no usable CUDA device */
};

enum trinom_variant {
    TRINOM_VARIANT_OPTION = 0, /* cuda-option: one option per thread (thesis CUDA-option / GPU-OUTER) */
    TRINOM_VARIANT_MULTI = 1,  /* cuda-multi: options bin-packed into blocks (thesis CUDA-multi / GPU-FLAT) */
    TRINOM_VARIANT_FAST = 2    /* cuda: options in warp segments, tree levels in registers */
};

enum trinom_precision { TRINOM_F32 = 0, TRINOM_F64 = 1 };

/* Padding granularity of cuda-option's expanded arrays. */
enum trinom_padding { TRINOM_PAD_GLOBAL = 0, TRINOM_PAD_BLOCK = 1, TRINOM_PAD_WARP = 2 };

/* The portfolio as a struct of arrays, `count` entries each (host memory), in the dtypes of
 * trinom.Portfolio so that Python passes its arrays without converting them: term_unit and
 * term_steps are whole numbers held as double, option_type is int8. */
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
} trinom_portfolio;

/* The yield curve: continuously compounded rates[k] at days[k] (strictly increasing). */
typedef struct trinom_curve {
    int32_t count;
    const double *rates;
    const int32_t *days;
} trinom_curve;

/* How to price. Zero-filled fields take their defaults. */
typedef struct trinom_options {
    int32_t variant;     /* enum trinom_variant */
    int32_t precision;   /* enum trinom_precision: compute in float or double */
    int32_t block_size;  /* threads per block; 0: the variant's default (option 128, multi 1024, fast 128) */
    int32_t padding;     /* enum trinom_padding (cuda-option only); default TRINOM_PAD_GLOBAL = 0 */
    int32_t no_sort;     /* 1: keep input order (no sorting by width / height) */
    int32_t reserved;
    int64_t chunk_size;  /* most options priced per chunk; 0: automatic */
    int64_t memory_limit; /* bytes of GPU memory the workspace may use; 0: what is free */
} trinom_options;

/* Optional timings of one call, in milliseconds. */
typedef struct trinom_timing {
    double kernel_ms;  /* pricing kernels (cudaEvent), summed over chunks */
    double device_ms;  /* first upload to last download (cudaEvent), summed over chunks */
    double total_ms;   /* wall clock of trinom_cuda_price */
    int64_t chunks;    /* number of chunks (and workspace pieces) priced */
    int64_t fallback;  /* options priced by the wide-tree fallback path */
} trinom_timing;

/* Coupon bonds with an embedded call or put (docs/paper-instrument.md): the portfolio as a
 * struct of arrays in the dtypes of trinom.bonds.BondPortfolio (host memory). Per bond: `count`
 * entries; per cash flow: cashflow_offset[count] entries, the bonds' schedules concatenated. */
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
} trinom_bonds;

/* The yield curves, flattened: curve c has terms[c] points (rates, days), curves concatenated. */
typedef struct trinom_bond_curves {
    int64_t count;
    const int64_t *terms;
    const double *rates;  /* continuously compounded, decimal */
    const int64_t *days;  /* strictly increasing within a curve */
} trinom_bond_curves;

/* How to price bonds. Zero-filled fields take their defaults. */
typedef struct trinom_bond_options {
    int32_t precision;    /* enum trinom_precision */
    int32_t block_size;   /* threads per block of the warp-segment kernel, 32..128; 0: 128 */
    int32_t no_sort;      /* 1: group by tree width only (input order within a group), not by height */
    int32_t wide_only;    /* 1: price every bond with the wide-tree kernel (one bond per block) */
    int64_t chunk_size;   /* most bonds priced per chunk; 0: automatic */
    int64_t memory_limit; /* bytes of GPU memory a chunk may use; 0: 80% of what is free */
} trinom_bond_options;

/* Number of usable CUDA devices (0 if none); returns TRINOM_ERR_NO_DEVICE with a message when
 * the driver has none. Needs no init. */
int trinom_cuda_device_count(int32_t *count);
/* Selects the device and creates the context (streams, events). Calling it again is a no-op. */
int trinom_cuda_init(int32_t device);
/* Prices `portfolio` against `curve`; writes count prices in input order into `prices`
 * (float* for TRINOM_F32, double* for TRINOM_F64). `timing` may be NULL. */
int trinom_cuda_price(const trinom_portfolio *portfolio, const trinom_curve *curve,
                      const trinom_options *options, void *prices, trinom_timing *timing);
/* Prices the bonds (validated by the caller: trinom.bonds.BondPortfolio.validate) against the
 * curves; writes count dirty prices per 100 face in input order into `prices` (float* or
 * double*). Trees up to 512 nodes wide (2 min(jmax, n) + 1) are priced in warp segments, wider
 * ones one per block (timing->fallback counts them). `options` and `timing` may be NULL. */
int trinom_cuda_price_bonds(const trinom_bonds *bonds, const trinom_bond_curves *curves,
                            const trinom_bond_options *options, void *prices, trinom_timing *timing);
/* Frees all device and pinned memory and the context. */
void trinom_cuda_free(void);
/* The message of the last error (empty string if none). */
const char *trinom_cuda_last_error(void);
/* Name of the device in use (empty before init). */
const char *trinom_cuda_device_name(void);
/* CDEF END */

#ifdef __cplusplus
}
#endif

#endif
