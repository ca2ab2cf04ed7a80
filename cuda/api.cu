// The C entries of trinom_cuda.h: argument checks, the device lease, the two sections of a book,
// the timings, and the caller's trinom_error (no exception crosses the C boundary).
#include <chrono>
#include <cmath>
#include <climits>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "device_context.cuh"
#include "pricing.cuh"

using namespace trinom;

namespace {

void copy_text(char *dst, size_t size, const std::string &src) {
    if (!dst || size == 0) return;
    const size_t n = std::min(size - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

void clear_error(trinom_error *error, int device) {
    if (!error) return;
    std::memset(error, 0, sizeof(*error));
    error->status = TRINOM_OK;
    error->section = TRINOM_SECTION_NONE;
    error->row = -1;
    error->device = device;
}

int report(trinom_error *error, int device, const CudaFailure &f) {
    if (error) {
        clear_error(error, device);
        error->status = f.code;
        error->section = f.section;
        error->row = f.row;
        copy_text(error->field, sizeof(error->field), f.field);
        copy_text(error->stage, sizeof(error->stage), f.stage);
        copy_text(error->message, sizeof(error->message), f.message);
    }
    return f.code;
}

// Runs fn, turning whatever it throws into the caller's trinom_error.
template <typename Fn> int guarded(trinom_error *error, int device, Fn &&fn) {
    try {
        fn();
        return TRINOM_OK;
    } catch (const CudaFailure &f) {
        return report(error, device, f);
    } catch (const std::bad_alloc &) {
        return report(error, device, CudaFailure(TRINOM_ERR_MEMORY, "host error: out of host memory"));
    } catch (const std::exception &e) {
        return report(error, device, CudaFailure(TRINOM_ERR_MEMORY, std::string("host error: ") + e.what()));
    } catch (...) {
        return report(error, device, CudaFailure(TRINOM_ERR_MEMORY, "host error: unknown exception"));
    }
}

[[noreturn]] void bad_argument(int section, const std::string &message, const char *field = "") {
    Stage stage("arguments");
    CudaFailure f(TRINOM_ERR_ARGUMENT, message, -1, field);
    f.section = section;
    throw f;
}

void check_run_options(const trinom_run_options &opt) {
    if (opt.precision != TRINOM_F32 && opt.precision != TRINOM_F64)
        bad_argument(TRINOM_SECTION_NONE, "unknown precision " + std::to_string(opt.precision), "precision");
}

// A flattened set of curves (trinom_bond_curves): at least one, each with points, not too many points in all.
void check_curves(int section, const trinom_bond_curves &curves, const char *field, const std::string &none,
                  const std::string &name) {
    if (curves.count < 1 || !curves.terms || !curves.rates || !curves.days) bad_argument(section, none, field);
    long long points = 0;
    for (int64_t c = 0; c < curves.count; ++c) {
        if (curves.terms[c] < 1) bad_argument(section, name + " " + std::to_string(c) + " has no points", field);
        points += curves.terms[c];
    }
    if (points > INT_MAX / 2) bad_argument(section, "the " + name + "s have too many points", field);
}

void check_option_section(const trinom_book &book, const trinom_run_options &opt, const void *prices) {
    constexpr int S = TRINOM_SECTION_OPTIONS;
    const trinom_portfolio &pf = book.options;
    if (pf.count < 0) bad_argument(S, "the option count must be >= 0", "count");
    if (pf.count == 0) return;
    if (!prices) bad_argument(S, "option_prices must not be NULL");
    if (!pf.strike || !pf.maturity || !pf.expiry || !pf.term_unit || !pf.term_steps || !pf.a || !pf.sigma ||
        !pf.option_type)
        bad_argument(S, "an option array is NULL");
    if (pf.entry_offset) {
        if (pf.curve_index) bad_argument(S, "an option section takes curve_index or entries, not both", "entry_offset");
        if (opt.variant != TRINOM_VARIANT_FAST)
            bad_argument(S, "option scenario entries need the fast variant (cuda)", "variant");
        if (pf.entry_offset[0] != 0) bad_argument(S, "entry_offset[0] must be 0", "entry_offset");
        if (pf.entry_offset[pf.count] > 0 && !pf.entry_curve)
            bad_argument(S, "entry_curve must not be NULL where there are scenario entries", "entry_curve");
    }
    if (pf.curve_index || pf.entry_offset) {
        check_curves(S, book.option_curves, "option_curves",
                     "curve_index or entries are given but option_curves holds no curve", "option curve");
    } else if (book.curve.count < 1 || !book.curve.rates || !book.curve.days) {
        bad_argument(S, "the options' yield curve is empty", "curve");
    }
    if (opt.variant < TRINOM_VARIANT_OPTION || opt.variant > TRINOM_VARIANT_FAST)
        bad_argument(S, "unknown variant " + std::to_string(opt.variant), "variant");
    if (opt.padding < TRINOM_PAD_GLOBAL || opt.padding > TRINOM_PAD_WARP)
        bad_argument(S, "unknown padding " + std::to_string(opt.padding), "padding");
    if (opt.block_size != 0 && (opt.block_size < 32 || opt.block_size > 1024 || opt.block_size % 32 != 0))
        bad_argument(S, "block_size must be a multiple of 32 in 32..1024, got " + std::to_string(opt.block_size),
                     "block_size");
    if (opt.variant == TRINOM_VARIANT_FAST && opt.block_size > 128)
        bad_argument(S, "the fast kernel takes block_size 32..128, got " + std::to_string(opt.block_size),
                     "block_size");
}

void check_bond_section(const trinom_book &book, const trinom_run_options &opt, const void *prices) {
    constexpr int S = TRINOM_SECTION_BONDS;
    const trinom_bonds &b = book.bonds;
    if (b.count < 0) bad_argument(S, "the bond count must be >= 0", "count");
    if (b.count == 0) return;
    if (!prices) bad_argument(S, "bond_prices must not be NULL");
    const void *arrays[] = {b.term_unit, b.term_steps, b.a, b.sigma, b.maturity, b.spread, b.option_type, b.strike,
                            b.first_exercise, b.last_exercise, b.exercise_frequency, b.curve_index, b.cashflow_offset};
    for (const void *p : arrays)
        if (!p) bad_argument(S, "a bond array is NULL");
    if (b.cashflow_offset[b.count] > 0 && (!b.cashflow_step || !b.repayment || !b.coupon))
        bad_argument(S, "a cash-flow array is NULL");
    if (b.exercise_offset && b.exercise_offset[b.count] > b.exercise_offset[0] && (!b.exercise_step || !b.exercise_price))
        bad_argument(S, "exercise_step and exercise_price must not be NULL where there are listed exercise points");
    if (b.entry_offset) {
        if (b.entry_offset[0] != 0) bad_argument(S, "entry_offset[0] must be 0", "entry_offset");
        if (b.entry_offset[b.count] > 0 && (!b.entry_curve || !b.entry_spread))
            bad_argument(S, "entry_curve and entry_spread must not be NULL where there are scenario entries");
    }
    if (b.search) {
        const trinom_spread_search &search = *b.search;
        if (b.entry_offset) bad_argument(S, "a spread search takes no scenario entries", "search");
        if (!search.target || !search.spread || !search.iterations || !search.status)
            bad_argument(S, "the spread search's target, spread, iterations and status must not be NULL", "search");
        if (!(std::isfinite(search.low) && std::isfinite(search.high) && search.low < search.high))
            bad_argument(S, "the spread search needs finite low < high", "search");
        if (!(search.tolerance >= 0.0) || !std::isfinite(search.tolerance) || !(search.relative_tolerance >= 0.0) ||
            !std::isfinite(search.relative_tolerance))
            bad_argument(S, "the spread search's tolerances must be finite numbers >= 0", "search");
        if (search.max_iterations < 1)
            bad_argument(S, "the spread search's max_iterations must be >= 1", "search");
    }
    check_curves(S, book.bond_curves, "curves", "no yield curve given for the bonds", "yield curve");
    if (opt.bond_block_size != 0 &&
        (opt.bond_block_size < 32 || opt.bond_block_size > 128 || opt.bond_block_size % 32 != 0))
        bad_argument(S, "block_size must be 32, 64, 96 or 128, got " + std::to_string(opt.bond_block_size),
                     "bond_block_size");
}

}  // namespace

extern "C" {

int trinom_cuda_device_count(int32_t *count, trinom_error *error) {
    clear_error(error, -1);
    if (count) *count = 0;
    return guarded(error, -1, [&] {
        if (!count) bad_argument(TRINOM_SECTION_NONE, "count must not be NULL", "count");
        *count = device_count();
    });
}

int trinom_cuda_device_name(int32_t device, char *name, int32_t size, trinom_error *error) {
    clear_error(error, device);
    if (name && size > 0) name[0] = '\0';
    return guarded(error, device, [&] {
        if (!name || size < 1) bad_argument(TRINOM_SECTION_NONE, "name must not be NULL and size must be >= 1", "name");
        copy_text(name, static_cast<size_t>(size), device_name(device));
    });
}

int trinom_cuda_price_book(const trinom_book *book, int32_t device, const trinom_run_options *options,
                           void *option_prices, void *bond_prices, trinom_timing *timing, trinom_error *error) {
    const auto t0 = std::chrono::steady_clock::now();
    clear_error(error, device);
    trinom_timing t{};
    const int status = guarded(error, device, [&] {
        if (!book) bad_argument(TRINOM_SECTION_NONE, "book must not be NULL", "book");
        trinom_run_options opt{};
        if (options) opt = *options;
        check_run_options(opt);
        check_option_section(*book, opt, option_prices);
        check_bond_section(*book, opt, bond_prices);
        if (book->options.count == 0 && book->bonds.count == 0) {
            check_device(device);
            return;
        }
        DeviceLease lease(device);
        DeviceContext &ctx = lease.context();
        int section = TRINOM_SECTION_OPTIONS;
        try {
            price_options(ctx, book->options, book->curve, book->option_curves, opt, option_prices, t.options);
            section = TRINOM_SECTION_BONDS;
            price_bonds(ctx, book->bonds, book->bond_curves, opt, bond_prices, t.bonds);
        } catch (...) {
            // Let work already queued finish before the buffers are reused by the next call.
            ctx.recycle_events();
            cudaStreamSynchronize(ctx.stream);
            cudaGetLastError();
            try {
                throw;
            } catch (CudaFailure &f) {
                if (f.section == TRINOM_SECTION_NONE) f.section = section;
                throw;
            }
        }
    });
    if (status == TRINOM_OK && timing) {
        *timing = t;
        timing->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    return status;
}

void trinom_cuda_release(int32_t device) {
    guarded(nullptr, device, [&] { release_devices(device); });
}

}  // extern "C"
