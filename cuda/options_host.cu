// The option section of a book (pricing.cuh): the options are priced in chunks; per chunk, the
// columns that vary are staged in the working precision by the host threads and uploaded at
// once, the tree geometry (and for the fast variant the bins of width class and height) is
// computed on the GPU, the cuda-option and cuda-multi variants sort and pack on the host, the
// pricing kernels run (in workspace pieces that fit the memory budget), and the prices come back
// in input order in one download.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "memory_policy.cuh"
#include "pricing.cuh"
#include "trinom_internal.cuh"

namespace trinom {

namespace {

constexpr long long kDefaultChunk = 1LL << 22;  // options per chunk unless the caller says
constexpr long long kStagingGrain = 8192;       // options per host thread when staging

// ---- host-side sorting and packing (cuda-option, cuda-multi) ---------------------------------
// Stable counting sort of 0..count-1 by key descending (keys >= 0).
std::vector<int> sort_descending(const std::vector<int> &key) {
    const int count = static_cast<int>(key.size());
    const int top = count ? *std::max_element(key.begin(), key.end()) : 0;
    std::vector<int> perm(count);
    if (top > 16 * count + (1 << 20)) {  // sparse keys: comparison sort
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int x, int y) { return key[x] > key[y]; });
        return perm;
    }
    std::vector<int> start(top + 2, 0);
    for (int k : key) ++start[top - k + 1];
    for (int b = 1; b <= top + 1; ++b) start[b] += start[b - 1];
    for (int i = 0; i < count; ++i) perm[start[top - key[i]]++] = i;
    return perm;
}

// ---- the arena of one chunk --------------------------------------------------------------------
// Device pointers of one chunk inside the arena.
template <typename real> struct ChunkBuffers {
    size_t column_offset[kColumns];  // byte offsets of the varying columns (upload region)
    real *curve_rates;
    int *curve_days;
    int *curve_begin, *curve_index;  // the curves' first points (curves + 1), each option's curve (or none)
    int *ent_begin, *ent_curve;      // scenario entries (or none): per option (count + 1), per entry
    Params<real> params;
    int *perm, *hist, *cursor, *info;
    real *out;
    size_t upload_bytes;  // bytes from the arena's start that mirror the staging buffer
    size_t bytes;
};

// Column c's element size on the device.
template <typename real> size_t column_bytes(int c) {
    return c < kRealColumns ? sizeof(real) : c < kColumns - 1 ? sizeof(int) : sizeof(signed char);
}

// Device bytes per option of a chunk (inputs, parameters, permutation, prices), for sizing chunks.
template <typename real> constexpr size_t arena_bytes_per_option() { return 10 * sizeof(real) + 11 * sizeof(int) + 1; }

// The options' curves on the host, flattened: one, or several chosen per option (portfolio.curve_index).
struct OptionCurves {
    std::vector<double> rates;
    std::vector<int> days;
    std::vector<int> begin;  // curves + 1 entries
    bool indexed = false;
    int points() const { return begin.back(); }
    int curves() const { return static_cast<int>(begin.size()) - 1; }
};

OptionCurves option_curves_of(const trinom_portfolio &pf, const trinom_curve &curve, const trinom_bond_curves &table) {
    OptionCurves c;
    c.begin.push_back(0);
    if (!pf.curve_index && !pf.entry_offset) {
        c.rates.assign(curve.rates, curve.rates + curve.count);
        c.days.assign(curve.days, curve.days + curve.count);
        c.begin.push_back(curve.count);
        return c;
    }
    c.indexed = pf.curve_index != nullptr;
    long long at = 0;
    for (int64_t k = 0; k < table.count; ++k) {
        for (int64_t i = 0; i < table.terms[k]; ++i, ++at) {
            c.rates.push_back(table.rates[at]);
            c.days.push_back(clamp_int(table.days[at]));
        }
        c.begin.push_back(static_cast<int>(at));
    }
    return c;
}

// The arena of one chunk: the upload region first (the curves, the options' curve indices or scenario
// entries, then the varying columns of `varying`, a bit mask, packed), sized for all columns, then the
// device-side arrays; `entries` prices (-1: one per option).
template <typename real>
ChunkBuffers<real> chunk_layout(char *base, int count, const OptionCurves &curves, unsigned varying, int entries = -1) {
    Layout l;
    const size_t c = static_cast<size_t>(count);
    const size_t outputs = entries < 0 ? c : static_cast<size_t>(entries);
    ChunkBuffers<real> b;
    const size_t rates = l.take(curves.points() * sizeof(real));
    const size_t days = l.take(curves.points() * sizeof(int));
    const size_t begin = l.take(curves.begin.size() * sizeof(int));
    const size_t index = l.take(curves.indexed ? c * sizeof(int) : 0);
    const size_t ent_begin = l.take(entries < 0 ? 0 : (c + 1) * sizeof(int));
    const size_t ent_curve = l.take(entries < 0 ? 0 : outputs * sizeof(int));
    for (int k = 0; k < kColumns; ++k) b.column_offset[k] = (varying >> k & 1u) ? l.take(c * column_bytes<real>(k)) : 0;
    const size_t upload = l.bytes;
    for (int k = 0; k < kColumns; ++k)
        if (!(varying >> k & 1u)) l.take(c * column_bytes<real>(k));  // room for any mask
    size_t r[4], i[6];
    for (auto &x : r) x = l.take(c * sizeof(real));
    for (auto &x : i) x = l.take(c * sizeof(int));
    const size_t perm = l.take(c * sizeof(int));
    const size_t hist = l.take(kBins * sizeof(int));
    const size_t cursor = l.take(kBins * sizeof(int));
    const size_t info = l.take(kInfoInts * sizeof(int));
    const size_t out = l.take(outputs * sizeof(real));
    b.ent_begin = entries < 0 ? nullptr : reinterpret_cast<int *>(base + ent_begin);
    b.ent_curve = entries < 0 ? nullptr : reinterpret_cast<int *>(base + ent_curve);
    b.curve_rates = reinterpret_cast<real *>(base + rates);
    b.curve_days = reinterpret_cast<int *>(base + days);
    b.curve_begin = reinterpret_cast<int *>(base + begin);
    b.curve_index = curves.indexed ? reinterpret_cast<int *>(base + index) : nullptr;
    b.params.strike = reinterpret_cast<real *>(base + r[0]);
    b.params.dt = reinterpret_cast<real *>(base + r[1]);
    b.params.dr = reinterpret_cast<real *>(base + r[2]);
    b.params.M = reinterpret_cast<real *>(base + r[3]);
    b.params.n = reinterpret_cast<int *>(base + i[0]);
    b.params.jmax = reinterpret_cast<int *>(base + i[1]);
    b.params.expiry_step = reinterpret_cast<int *>(base + i[2]);
    b.params.term_unit = reinterpret_cast<int *>(base + i[3]);
    b.params.type = reinterpret_cast<int *>(base + i[4]);
    b.params.key = reinterpret_cast<int *>(base + i[5]);
    b.perm = reinterpret_cast<int *>(base + perm);
    b.hist = reinterpret_cast<int *>(base + hist);
    b.cursor = reinterpret_cast<int *>(base + cursor);
    b.info = reinterpret_cast<int *>(base + info);
    b.out = reinterpret_cast<real *>(base + out);
    b.upload_bytes = upload;
    b.bytes = l.bytes;
    return b;
}

// ---- one section call ----------------------------------------------------------------------------
using KernelEvents = std::vector<std::pair<cudaEvent_t, cudaEvent_t>>;

struct Run {
    DeviceContext &ctx;
    const trinom_run_options &opt;
    trinom_section_timing &timing;
    KernelEvents kernels;   // the chunk's kernel intervals
    size_t chunk_bytes = 0;  // the arena bytes of the chunk being priced
};

// Bytes the expanded arrays (workspace and aux) may take (memory_policy.cuh): what the chunk's
// arena leaves of the caller's limit, else the policy's share of what is free now (the arena
// allocated) plus what they hold.
size_t workspace_room(const Run &run) {
    if (run.opt.memory_limit > 0) {
        const size_t limit = static_cast<size_t>(run.opt.memory_limit);
        return limit > run.chunk_bytes ? limit - run.chunk_bytes : 0;
    }
    return memory_budget(0, run.ctx.workspace.size + run.ctx.aux.size);
}

std::pair<cudaEvent_t, cudaEvent_t> kernel_begin(Run &run) {
    std::pair<cudaEvent_t, cudaEvent_t> ev{run.ctx.event(), run.ctx.event()};
    TRINOM_CHECK(cudaEventRecord(ev.first, run.ctx.stream));
    return ev;
}

// The field that alone makes option i give no valid tree (geometry_kernel's test), if one does.
std::string field_at_fault(const trinom_portfolio &pf, long long i) {
    if (pf.option_type[i] != CALL && pf.option_type[i] != PUT) return "option_type";
    if (!(pf.term_unit[i] >= 1.0) || !std::isfinite(pf.term_unit[i])) return "term_unit";
    if (!(pf.term_steps[i] >= 1.0) || !std::isfinite(pf.term_steps[i])) return "term_steps";
    if (!(pf.a[i] > 0.0) || !std::isfinite(pf.a[i])) return "a";
    if (!std::isfinite(pf.sigma[i])) return "sigma";
    if (!(pf.maturity[i] > 0.0) || !std::isfinite(pf.maturity[i])) return "maturity";
    return "";
}

double field_value(const trinom_portfolio &pf, long long i, const std::string &field) {
    if (field == "option_type") return pf.option_type[i];
    if (field == "term_unit") return pf.term_unit[i];
    if (field == "term_steps") return pf.term_steps[i];
    if (field == "a") return pf.a[i];
    if (field == "sigma") return pf.sigma[i];
    return pf.maturity[i];
}

[[noreturn]] void refuse_option(const trinom_portfolio &pf, long long i, long long row) {
    const std::string field = field_at_fault(pf, i);
    std::string why = "check maturity, term_unit, term_steps, a, sigma and option_type";
    if (!field.empty()) {
        char value[64];
        std::snprintf(value, sizeof(value), "%g", field_value(pf, i, field));
        why = field + " is " + value;
    }
    throw CudaFailure(TRINOM_ERR_ARGUMENT, "the option gives no valid tree (" + why + ")", row, field);
}

// cuda-option over the options perm_host[0..count) (already on the device at d_perm), split in
// pieces whose padded workspace fits the budget.
template <typename real>
void run_option_pieces(Run &run, const ChunkBuffers<real> &cb, DeviceCurve<real> curve, const int *d_perm,
                       const std::vector<int> &perm_host, const std::vector<int> &widths,
                       const std::vector<int> &heights, int padding, int block_size) {
    DeviceContext &ctx = run.ctx;
    const int count = static_cast<int>(perm_host.size());
    std::vector<int> w(count), h(count);
    for (int s = 0; s < count; ++s) {
        w[s] = widths[perm_host[s]];
        h[s] = heights[perm_host[s]];
    }
    const size_t budget = workspace_room(run);
    int done = 0;
    while (done < count) {
        int piece = count - done;
        OptionLayout layout;
        for (;;) {
            const int granularity = padding == TRINOM_PAD_GLOBAL ? piece
                                    : padding == TRINOM_PAD_BLOCK ? block_size
                                                                  : 32;
            layout = option_layout(w.data() + done, h.data() + done, piece, granularity);
            const size_t need = (2 * layout.q_total + layout.a_total) * sizeof(real) +
                                2 * layout.q_offset.size() * sizeof(long long);
            if (need <= budget) break;
            if (piece == 1) {
                Stage stage("memory");
                throw CudaFailure(TRINOM_ERR_MEMORY, "one option's tree (width " + std::to_string(w[done]) +
                                                         ", height " + std::to_string(h[done]) +
                                                         ") does not fit in the GPU memory budget of " +
                                                         std::to_string(budget) + " bytes");
            }
            piece = (piece + 1) / 2;
        }
        const size_t groups = layout.q_offset.size();
        ctx.workspace.ensure((2 * layout.q_total + layout.a_total) * sizeof(real) + 16);
        ctx.aux.ensure(2 * groups * sizeof(long long));
        long long *d_q = static_cast<long long *>(ctx.aux.ptr);
        long long *d_a = d_q + groups;
        TRINOM_CHECK(cudaMemcpyAsync(d_q, layout.q_offset.data(), groups * sizeof(long long),
                                     cudaMemcpyHostToDevice, ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(d_a, layout.a_offset.data(), groups * sizeof(long long),
                                     cudaMemcpyHostToDevice, ctx.stream));
        auto ev = kernel_begin(run);
        launch_option<real>(cb.params, curve, d_perm + done, piece, d_q, d_a, layout.granularity,
                            static_cast<real *>(ctx.workspace.ptr), layout.q_total, cb.out, block_size, ctx.stream);
        TRINOM_CHECK(cudaEventRecord(ev.second, ctx.stream));
        run.kernels.push_back(ev);
        // The workspace and offsets are reused by the next piece: wait for this one.
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        ++run.timing.chunks;
        done += piece;
    }
}

template <typename real>
void run_multi(Run &run, const ChunkBuffers<real> &cb, DeviceCurve<real> curve, int count,
               const std::vector<int> &widths, const std::vector<int> &heights, int block_size, bool sort) {
    DeviceContext &ctx = run.ctx;
    std::vector<int> order;
    if (sort) {
        order = sort_descending(heights);
    } else {
        order.resize(count);
        std::iota(order.begin(), order.end(), 0);
    }
    std::vector<int> packed, wide;
    packed.reserve(count);
    for (int o : order) (widths[o] > block_size ? wide : packed).push_back(o);
    // Greedy packing in order: a bin takes options while their widths fit in the block.
    std::vector<int> bin_ends;
    std::vector<long long> alpha_size;
    int used = 0, bin_max_h = 0, bin_options = 0;
    for (size_t s = 0; s < packed.size(); ++s) {
        const int w = widths[packed[s]];
        if (used + w > block_size) {
            bin_ends.push_back(static_cast<int>(s));
            alpha_size.push_back(static_cast<long long>(bin_max_h) * bin_options);
            used = 0;
            bin_max_h = 0;
            bin_options = 0;
        }
        used += w;
        bin_max_h = std::max(bin_max_h, heights[packed[s]]);
        ++bin_options;
    }
    if (bin_options) {
        bin_ends.push_back(static_cast<int>(packed.size()));
        alpha_size.push_back(static_cast<long long>(bin_max_h) * bin_options);
    }
    std::vector<int> all(packed);
    all.insert(all.end(), wide.begin(), wide.end());
    TRINOM_CHECK(cudaMemcpyAsync(cb.perm, all.data(), all.size() * sizeof(int), cudaMemcpyHostToDevice, ctx.stream));
    const size_t budget = workspace_room(run);
    const int bins = static_cast<int>(bin_ends.size());
    int b0 = 0;
    while (b0 < bins) {
        // Take bins while their alphas fit.
        int b1 = b0;
        long long total = 0;
        while (b1 < bins && (b1 == b0 || (total + alpha_size[b1]) * static_cast<long long>(sizeof(real)) +
                                                 3 * 8 * (b1 - b0 + 1) <= static_cast<long long>(budget)))
            total += alpha_size[b1++];
        if (total * static_cast<long long>(sizeof(real)) > static_cast<long long>(budget)) {
            Stage stage("memory");
            throw CudaFailure(TRINOM_ERR_MEMORY, "one block's alphas do not fit in the GPU memory budget of " +
                                                     std::to_string(budget) + " bytes");
        }
        const int first = b0 == 0 ? 0 : bin_ends[b0 - 1];
        std::vector<int> ends(b1 - b0);
        std::vector<long long> offsets(b1 - b0);
        long long at = 0;
        for (int b = b0; b < b1; ++b) {
            ends[b - b0] = bin_ends[b] - first;
            offsets[b - b0] = at;
            at += alpha_size[b];
        }
        ctx.workspace.ensure(std::max<long long>(1, at) * sizeof(real));
        const size_t aux_bytes = ends.size() * (sizeof(int) + sizeof(long long)) + 16;
        ctx.aux.ensure(aux_bytes);
        long long *d_offsets = static_cast<long long *>(ctx.aux.ptr);
        int *d_ends = reinterpret_cast<int *>(d_offsets + offsets.size());
        TRINOM_CHECK(cudaMemcpyAsync(d_offsets, offsets.data(), offsets.size() * sizeof(long long),
                                     cudaMemcpyHostToDevice, ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(d_ends, ends.data(), ends.size() * sizeof(int), cudaMemcpyHostToDevice,
                                     ctx.stream));
        auto ev = kernel_begin(run);
        launch_multi<real>(cb.params, curve, cb.perm + first, d_ends, b1 - b0, d_offsets,
                           static_cast<real *>(ctx.workspace.ptr), cb.out, block_size, ctx.stream);
        TRINOM_CHECK(cudaEventRecord(ev.second, ctx.stream));
        run.kernels.push_back(ev);
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        ++run.timing.chunks;
        b0 = b1;
    }
    if (!wide.empty()) {
        run.timing.fallback += static_cast<long long>(wide.size());
        run_option_pieces<real>(run, cb, curve, cb.perm + packed.size(), wide, widths, heights, TRINOM_PAD_WARP, 128);
    }
}

// The options pf[0..count) (pf's arrays start at the chunk: row first_row of the caller's).
template <typename real>
void price_chunk(Run &run, const trinom_portfolio &pf, const OptionCurves &curves, long long first_row, int count,
                 real *prices) {
    DeviceContext &ctx = run.ctx;
    const trinom_run_options &opt = run.opt;
    Stage staging("staging");
    // Scenario entries: the chunk's options' entries, rebased to the chunk's first.
    const long long ent0 = pf.entry_offset ? pf.entry_offset[0] : 0;
    const long long ent_count = pf.entry_offset ? pf.entry_offset[count] - ent0 : -1;
    if (ent_count > INT_MAX / 2) throw CudaFailure(TRINOM_ERR_ARGUMENT, "too many scenario entries in one chunk "
                                                   "(set a smaller chunk_size)", first_row, "entry_offset");
    const int entries = static_cast<int>(ent_count);
    ChunkBuffers<real> cb = chunk_layout<real>(nullptr, count, curves, 0xffu, entries);
    ctx.arena.ensure(cb.bytes);
    ctx.staging.ensure(cb.upload_bytes);
    ctx.info.ensure(kInfoInts * sizeof(int));
    run.chunk_bytes = cb.bytes;

    // Which columns vary inside the chunk (one pass, on several host threads for large chunks).
    const double *reals[kRealColumns] = {pf.strike, pf.maturity, pf.expiry, pf.a, pf.sigma};
    const double *ints[2] = {pf.term_unit, pf.term_steps};
    const int8_t *types = pf.option_type;
    std::vector<unsigned> part_mask(ctx.pool->parts(count, kStagingGrain), 0u);
    ctx.pool->parallel_for(count, kStagingGrain, [&](int part, long long lo, long long hi) {
        unsigned mask = 0;
        auto differs = [&](const double *x) {  // bitwise, so that -0.0 and NaNs count as different
            for (long long i = lo; i < hi; ++i)
                if (std::memcmp(&x[i], &x[0], sizeof(double)) != 0) return true;
            return false;
        };
        for (int k = 0; k < kRealColumns; ++k) mask |= differs(reals[k]) ? 1u << k : 0u;
        for (int k = 0; k < 2; ++k) mask |= differs(ints[k]) ? 1u << (kRealColumns + k) : 0u;
        for (long long i = lo; i < hi; ++i)
            if (types[i] != types[0]) {
                mask |= 1u << (kColumns - 1);
                break;
            }
        part_mask[part] = mask;
    });
    unsigned varying = 0;
    for (unsigned m : part_mask) varying |= m;
    cb = chunk_layout<real>(static_cast<char *>(ctx.arena.ptr), count, curves, varying, entries);

    // Stage the curves and the varying columns in the working precision (as model.py's astype)
    // and upload them at once; constant columns go to the kernel as values.
    char *st = static_cast<char *>(ctx.staging.ptr);
    const char *arena = static_cast<const char *>(ctx.arena.ptr);
    auto staged = [&](const void *device) { return st + (static_cast<const char *>(device) - arena); };
    real *cr = reinterpret_cast<real *>(staged(cb.curve_rates));
    const int nc = curves.points();
    for (int k = 0; k < nc; ++k) cr[k] = static_cast<real>(curves.rates[k]);
    std::memcpy(staged(cb.curve_days), curves.days.data(), nc * sizeof(int));
    std::memcpy(staged(cb.curve_begin), curves.begin.data(), curves.begin.size() * sizeof(int));
    if (curves.indexed) {
        int *index = reinterpret_cast<int *>(staged(cb.curve_index));
        for (int i = 0; i < count; ++i) {
            if (pf.curve_index[i] < 0 || pf.curve_index[i] >= curves.curves())
                throw CudaFailure(TRINOM_ERR_ARGUMENT,
                                  "curve_index " + std::to_string(pf.curve_index[i]) + " is not one of the " +
                                      std::to_string(curves.curves()) + " option curves",
                                  first_row + i, "curve_index");
            index[i] = static_cast<int>(pf.curve_index[i]);
        }
    }
    if (entries >= 0) {
        // On the host threads, by options: an option's entries lie inside the chunk's (checked first), so the
        // parts write apart; the first bad option in row order is the one reported (the pool rethrows the
        // lowest part's exception, and a part stops at its first).
        int *ent_begin = reinterpret_cast<int *>(staged(cb.ent_begin));
        int *ent_curve = reinterpret_cast<int *>(staged(cb.ent_curve));
        const long long ent_end = ent0 + ent_count;
        const int n_curves = curves.curves();
        ctx.pool->parallel_for(count, kStagingGrain, [&](int, long long lo, long long hi) {
            for (long long i = lo; i < hi; ++i) {
                const long long begin = pf.entry_offset[i], end = pf.entry_offset[i + 1];
                if (end < begin)
                    throw CudaFailure(TRINOM_ERR_ARGUMENT, "entry_offset must not decrease", first_row + i,
                                      "entry_offset");
                if (begin < ent0 || end > ent_end)
                    throw CudaFailure(TRINOM_ERR_ARGUMENT, "entry_offset must lie between its first and its last value",
                                      first_row + i, "entry_offset");
                ent_begin[i] = static_cast<int>(begin - ent0);
                for (long long k = begin; k < end; ++k) {
                    const int64_t c = pf.entry_curve[k];
                    if (c < 0 || c >= n_curves)
                        throw CudaFailure(TRINOM_ERR_ARGUMENT,
                                          "scenario entry " + std::to_string(k) + ": curve " + std::to_string(c) +
                                              " is not one of the " + std::to_string(n_curves) + " option curves",
                                          first_row + i, "entry_curve");
                    ent_curve[k - ent0] = static_cast<int>(c);
                }
            }
        });
        ent_begin[count] = entries;
    }
    Inputs<real> inputs{};
    for (int k = 0; k < kRealColumns; ++k) {
        inputs.value[k] = static_cast<real>(reals[k][0]);
        inputs.column[k] = (varying >> k & 1u) ? reinterpret_cast<const real *>(arena + cb.column_offset[k]) : nullptr;
    }
    for (int k = 0; k < 2; ++k) {
        inputs.int_value[k] = static_cast<int>(ints[k][0]);
        inputs.int_column[k] = (varying >> (kRealColumns + k) & 1u)
                                   ? reinterpret_cast<const int *>(arena + cb.column_offset[kRealColumns + k])
                                   : nullptr;
    }
    inputs.type_value = types[0];
    inputs.type_column = (varying >> (kColumns - 1) & 1u)
                             ? reinterpret_cast<const signed char *>(arena + cb.column_offset[kColumns - 1])
                             : nullptr;
    if (varying) {
        ctx.pool->parallel_for(count, kStagingGrain, [&](int, long long lo, long long hi) {
            for (int k = 0; k < kRealColumns; ++k) {
                if (!(varying >> k & 1u)) continue;
                real *dst = reinterpret_cast<real *>(st + cb.column_offset[k]);
                const double *src = reals[k];
                for (long long i = lo; i < hi; ++i) dst[i] = static_cast<real>(src[i]);
            }
            for (int k = 0; k < 2; ++k) {
                if (!(varying >> (kRealColumns + k) & 1u)) continue;
                int *dst = reinterpret_cast<int *>(st + cb.column_offset[kRealColumns + k]);
                const double *src = ints[k];
                for (long long i = lo; i < hi; ++i) dst[i] = static_cast<int>(src[i]);
            }
            if (varying >> (kColumns - 1) & 1u) std::memcpy(st + cb.column_offset[kColumns - 1] + lo, types + lo, hi - lo);
        });
    }

    Stage geometry("geometry");
    cudaEvent_t ev_start = ctx.event(), ev_end = ctx.event();
    TRINOM_CHECK(cudaEventRecord(ev_start, ctx.stream));
    TRINOM_CHECK(cudaMemcpyAsync(ctx.arena.ptr, ctx.staging.ptr, cb.upload_bytes, cudaMemcpyHostToDevice, ctx.stream));
    const bool fast = opt.variant == TRINOM_VARIANT_FAST;
    const bool sort = !opt.no_sort;
    if (fast) TRINOM_CHECK(cudaMemsetAsync(cb.hist, 0, kBins * sizeof(int), ctx.stream));
    TRINOM_CHECK(cudaMemsetAsync(cb.info + kFirstBad, 0x7f, sizeof(int), ctx.stream));
    launch_geometry<real>(inputs, count, cb.params, fast, sort, cb.hist, cb.info + kFirstBad, ctx.stream);
    DeviceCurve<real> curve{cb.curve_rates, cb.curve_days, nc, cb.curve_begin, cb.curve_index};
    int *info = static_cast<int *>(ctx.info.ptr);

    auto check_bad = [&](int first_bad) {
        if (first_bad != 0x7f7f7f7f) refuse_option(pf, first_bad, first_row + first_bad);
    };
    std::vector<int> widths, heights;
    std::vector<int> skipped;  // options too wide for the fast kernel, skipped with opt.skip_wide (entries only)
    auto download_shapes = [&]() {
        std::vector<int> jmax(count);
        heights.resize(count);
        widths.resize(count);
        TRINOM_CHECK(cudaMemcpyAsync(heights.data(), cb.params.n, count * sizeof(int), cudaMemcpyDeviceToHost,
                                     ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(jmax.data(), cb.params.jmax, count * sizeof(int), cudaMemcpyDeviceToHost,
                                     ctx.stream));
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        for (int i = 0; i < count; ++i) {
            widths[i] = 2 * jmax[i] + 1;
            heights[i] += 1;  // levels n + 1
        }
    };

    if (fast) {
        launch_bins<real>(cb.params, count, cb.hist, cb.cursor, cb.info, cb.perm, ctx.stream);
        TRINOM_CHECK(cudaMemcpyAsync(info, cb.info, kInfoInts * sizeof(int), cudaMemcpyDeviceToHost, ctx.stream));
        TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
        check_bad(info[kFirstBad]);
        int begin[kFastClasses + 1], size[kFastClasses + 1];
        for (int c = 0; c <= kFastClasses; ++c) {
            begin[c] = info[c];
            size[c] = info[kFastClasses + 1 + c];
        }
        Stage kernels("kernels");
        auto ev = kernel_begin(run);
        // Classes in parallel streams, the most work first.
        std::vector<int> classes;
        for (int c = 0; c < kFastClasses; ++c)
            if (size[c] > 0) classes.push_back(c);
        std::sort(classes.begin(), classes.end(), [&](int x, int y) { return size[x] * (x + 1LL) > size[y] * (y + 1LL); });
        const OptionEntries option_entries{cb.ent_begin, cb.ent_curve};
        ctx.fan_out(static_cast<int>(classes.size()), ev.first, [&](int q, cudaStream_t s) {
            const int c = classes[q];
            launch_fast<real>(c, cb.params, curve, option_entries, cb.perm, begin[c], size[c], cb.out, opt.block_size,
                              s);
        });
        TRINOM_CHECK(cudaEventRecord(ev.second, ctx.stream));
        run.kernels.push_back(ev);
        ++run.timing.chunks;
        if (size[kFastClasses] > 0) {  // trees wider than 512: cuda-option with warp padding (entries: none)
            std::vector<int> wide(size[kFastClasses]);
            TRINOM_CHECK(cudaMemcpy(wide.data(), cb.perm + begin[kFastClasses], wide.size() * sizeof(int),
                                    cudaMemcpyDeviceToHost));
            if (entries >= 0) {
                if (!opt.skip_wide)
                    throw CudaFailure(TRINOM_ERR_ARGUMENT,
                                      "the option's tree is wider than 512 nodes: scenario entries take the fast "
                                      "kernel's trees only (price it with curve_index)",
                                      first_row + *std::min_element(wide.begin(), wide.end()), "entry_offset");
                skipped = std::move(wide);  // their entries' prices become NaN after the download
            } else {
                run.timing.fallback += size[kFastClasses];
                download_shapes();
                run_option_pieces<real>(run, cb, curve, cb.perm + begin[kFastClasses], wide, widths, heights,
                                        TRINOM_PAD_WARP, 128);
            }
        }
    } else {
        TRINOM_CHECK(cudaMemcpyAsync(info, cb.info + kFirstBad, sizeof(int), cudaMemcpyDeviceToHost, ctx.stream));
        download_shapes();
        check_bad(info[0]);
        Stage kernels("kernels");
        if (opt.variant == TRINOM_VARIANT_OPTION) {
            const int block_size = opt.block_size > 0 ? opt.block_size : 128;
            std::vector<int> perm;
            if (sort) {  // widest first, then tallest first (the thesis' width-descending order)
                const std::vector<int> by_height = sort_descending(heights);
                std::vector<int> width_of(count);
                for (int s = 0; s < count; ++s) width_of[s] = widths[by_height[s]];
                const std::vector<int> order = sort_descending(width_of);  // stable: keeps height order
                perm.resize(count);
                for (int s = 0; s < count; ++s) perm[s] = by_height[order[s]];
            } else {
                perm.resize(count);
                std::iota(perm.begin(), perm.end(), 0);
            }
            TRINOM_CHECK(cudaMemcpyAsync(cb.perm, perm.data(), count * sizeof(int), cudaMemcpyHostToDevice,
                                         ctx.stream));
            run_option_pieces<real>(run, cb, curve, cb.perm, perm, widths, heights, opt.padding, block_size);
        } else {
            const int block_size = opt.block_size > 0 ? opt.block_size : 1024;
            run_multi<real>(run, cb, curve, count, widths, heights, block_size, sort);
        }
    }
    Stage download("download");
    TRINOM_CHECK(cudaMemcpyAsync(prices, cb.out, (entries < 0 ? count : entries) * sizeof(real), cudaMemcpyDeviceToHost,
                                 ctx.stream));
    TRINOM_CHECK(cudaEventRecord(ev_end, ctx.stream));
    TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
    if (!skipped.empty()) {  // never priced: NaN, not what the device memory held
        const int *ent_begin = reinterpret_cast<const int *>(staged(cb.ent_begin));
        for (int o : skipped)
            std::fill(prices + ent_begin[o], prices + ent_begin[o + 1], std::numeric_limits<real>::quiet_NaN());
    }
    for (auto &k : run.kernels) run.timing.kernel_ms += elapsed_ms(k.first, k.second);
    run.timing.device_ms += elapsed_ms(ev_start, ev_end);
    run.kernels.clear();
    ctx.recycle_events();
}

template <typename real>
void price_all(DeviceContext &ctx, const trinom_portfolio &pf, const OptionCurves &curves,
               const trinom_run_options &opt, real *prices, trinom_section_timing &timing) {
    Run run{ctx, opt, timing, {}};
    long long chunk = opt.chunk_size > 0 ? opt.chunk_size : kDefaultChunk;
    chunk = std::min<long long>(chunk, INT_MAX / 8);
    // A chunk's arena takes at most half of what the policy allows it, leaving room for the
    // workspace pieces (workspace_room).
    const size_t room = memory_budget(opt.memory_limit, ctx.arena.size) / 2;
    // Scenario entries add a price and a curve index each: sized by the book's entries per option.
    const size_t per_entry = pf.entry_offset ? (sizeof(real) + sizeof(int)) *
                                                   static_cast<size_t>((pf.entry_offset[pf.count] + pf.count - 1) / pf.count)
                                             : 0;
    while (chunk > 1024 && static_cast<size_t>(chunk) * (arena_bytes_per_option<real>() + per_entry) > room) chunk /= 2;
    for (long long begin = 0; begin < pf.count; begin += chunk) {
        const int count = static_cast<int>(std::min<long long>(chunk, pf.count - begin));
        trinom_portfolio sub = pf;  // the chunk's rows
        sub.strike += begin;
        sub.maturity += begin;
        sub.expiry += begin;
        sub.term_unit += begin;
        sub.term_steps += begin;
        sub.a += begin;
        sub.sigma += begin;
        sub.option_type += begin;
        if (sub.curve_index) sub.curve_index += begin;
        if (sub.entry_offset) sub.entry_offset += begin;  // entry_curve stays: the offsets index it
        sub.count = count;
        price_chunk<real>(run, sub, curves, begin, count, prices + (pf.entry_offset ? pf.entry_offset[begin] : begin));
    }
}

}  // namespace

void price_options(DeviceContext &ctx, const trinom_portfolio &portfolio, const trinom_curve &curve,
                   const trinom_bond_curves &option_curves, const trinom_run_options &options, void *prices,
                   trinom_section_timing &timing) {
    if (portfolio.count <= 0) return;
    const OptionCurves curves = option_curves_of(portfolio, curve, option_curves);
    if (options.precision == TRINOM_F32)
        price_all<float>(ctx, portfolio, curves, options, static_cast<float *>(prices), timing);
    else
        price_all<double>(ctx, portfolio, curves, options, static_cast<double *>(prices), timing);
}

}  // namespace trinom
