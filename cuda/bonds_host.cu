// The bond section of a book (pricing.cuh): the bonds are priced in chunks that fit the memory
// budget; per chunk, the tree shapes and width classes on the host threads, a stable counting
// sort by (class, height), the per-step scratch layout, one upload of the staged inputs, the
// kernels (classes side by side on streams), one download.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "memory_policy.cuh"
#include "pricing.cuh"
#include "trinom_bonds.cuh"

namespace trinom {
namespace {

constexpr int kWide = kFastClasses;    // group of the wide-tree kernel in global memory (after the fast classes)
constexpr int kBlock = kWide + 1;      // groups kBlock + c: the block kernel's width class c (trinom_bonds.cuh)
constexpr int kGroups = kBlock + kBlockClasses;
constexpr long long kMaxSteps = 1 << 24;    // tree heights beyond this are refused (memory)
constexpr long long kDefaultChunk = 1LL << 20;  // bonds per chunk unless the caller says
constexpr long long kStagingGrain = 16384;      // bonds (or cash flows) per host thread

// The block kernel's variant per width class (trinom_bonds.cuh), by how many trees the class holds: a class with too
// few trees to fill the GPU's SMs runs each tree on the widest block (the tree's latency decides); a class that fills
// them runs several trees an SM, each block with its own barrier (variants 11-14: one H200, 2000 trees 513-2048 wide
// at 420 Gnode/s against 316, 1000 trees 4479 wide at 487 against 304; one tree alone 1.4x slower). The rule: the
// second set once the class has trees for half of its blocks' places (SMs x blocks an SM). TRINOM_BLOCK_VARIANTS (up
// to five variant numbers, one per class, for benchmarks and tests; read at each call) overrides both; a variant too
// narrow for its class keeps the default.
int block_variant(int cls, long long trees, int sms) {
    constexpr int few[kBlockClasses] = {7, 8, 9, 10, 10};
    constexpr int many[kBlockClasses] = {11, 12, 13, 14, 10};
    constexpr int blocks_an_sm[kBlockClasses] = {8, 4, 2, 2, 1};
    int v[kBlockClasses];
    for (int c = 0; c < kBlockClasses; ++c) v[c] = 2 * trees >= (long long)sms * blocks_an_sm[c] ? many[c] : few[c];
    if (const char *text = std::getenv("TRINOM_BLOCK_VARIANTS")) {
        int c = 0;
        for (const char *p = text; *p && c < kBlockClasses; ++c) {
            const int chosen = std::atoi(p);
            if (chosen >= 0 && chosen < kBlockVariants && block_variant_width(chosen) >= block_class_width(c))
                v[c] = chosen;
            while (*p && *p != ',') ++p;
            if (*p == ',') ++p;
        }
    }
    return v[cls];
}

[[noreturn]] void refuse(int code, long long row, const std::string &what, const std::string &field = {}) {
    throw CudaFailure(code, what, row, field);
}


// ---- the plan of one chunk ----------------------------------------------------------------------
struct ChunkPlan {
    long long first_row = 0;  // the chunk's first bond in the caller's arrays
    int count = 0;
    std::vector<int> n, jmax;            // per bond, chunk order
    std::vector<int> perm;               // sorted position -> bond
    int begin[kGroups] = {}, size[kGroups] = {};
    std::vector<long long> at;           // scratch offsets: per warp of each fast class, per wide bond
    int at_begin[kGroups] = {};
    // The block classes' shared forward passes (trinom_bonds.cuh's BlockShare; plan_block_classes): class c's
    // lead_size trees that run them (one a model) at plan.perm[lead_begin ..) (past the chunk's count) with their
    // scratch offsets at plan.at[lead_at ..); every tree's two ratio offsets at plan.at[ratio_at ..).
    int lead_begin[kBlockClasses] = {}, lead_size[kBlockClasses] = {}, lead_at[kBlockClasses] = {},
        ratio_at[kBlockClasses] = {};
    bool shared = false;  // some block-class trees share a model: the leads' launches run before all others
    long long scratch = 0;               // reals
    long long cf_first = 0;              // the chunk's first cash flow in the caller's arrays
    int cashflows = 0;
    bool scenarios = false;              // the bonds have scenario entries (trinom_bonds::entry_offset)
    long long ent_first = 0;             // the chunk's first entry in the caller's arrays
    int entries = 0;                     // prices the chunk writes: its entries, else its bonds
    bool search = false;                 // a spread search per bond (trinom_bonds::search)
    bool listed = false;                 // the chunk has listed exercise points (trinom_bonds::exercise_offset)
    bool timed = false;                  // the cash flows have times (trinom_bonds::cashflow_time)
    bool dated = false;                  // the chunk's listed points have dates (trinom_bonds::exercise_time)
    long long ex_first = 0;              // the chunk's first listed point in the caller's arrays
    int points = 0;                      // the chunk's listed points
    bool pieced = false;                 // the chunk has sigma pieces (trinom_bonds::piece_offset)
    long long pc_first = 0;              // the chunk's first piece in the caller's arrays
    int pieces = 0;
    bool optioned = false;               // the chunk has options on coupon rates (trinom_bonds::option_offset)
    long long co_first = 0;              // the chunk's first option in the caller's arrays
    int options = 0;
};

// Where bond b's tree has sigma pieces or options on coupon rates: it takes the global-memory kernel.
bool special_tree(const trinom_bonds &bd, long long b) {
    return (bd.piece_offset && bd.piece_offset[b + 1] > bd.piece_offset[b]) ||
           (bd.option_offset && bd.option_offset[b + 1] > bd.option_offset[b]);
}

// Tree height and half width (§2), in float64 as trinom.bonds.model.bond_geometry.
bool tree_shape(int64_t term_unit, int64_t term_steps, double a, double maturity, int &n, int &jmax) {
    if (term_unit < 1 || term_steps < 1 || !(a > 0.0) || !std::isfinite(a) || !(maturity > 0.0) ||
        !std::isfinite(maturity))
        return false;
    const double u = std::ceil(double(BOND_DAYS_IN_YEAR) / double(term_unit));
    const double height = std::ceil((double(term_steps) * u) * maturity);
    const double dt = u / double(term_steps);
    const double M = std::exp(-a * dt) - 1.0;
    const double half = std::trunc(JMAX_FACTOR / M);
    if (!(height >= 1.0 && height <= double(kMaxSteps)) || !(half >= 0.0)) return false;
    n = static_cast<int>(height);
    jmax = half >= double(1 << 30) ? 1 << 30 : static_cast<int>(half) + 1;  // beyond n it never matters
    return true;
}

// The field that makes bond b give no valid tree (tree_shape's test), as far as one field tells.
std::string tree_fault(const trinom_bonds &bd, long long b) {
    if (bd.term_unit[b] < 1 || bd.term_unit[b] > INT_MAX) return "term_unit";
    if (bd.term_steps[b] < 1 || bd.term_steps[b] > INT_MAX) return "term_steps";
    if (!(bd.a[b] > 0.0) || !std::isfinite(bd.a[b])) return "a";
    return "maturity";  // no step, or more than kMaxSteps
}

// The block classes' scratch and, where trees share a model (trinom_bonds.cuh's BlockShare: the same term unit,
// steps, a and sigma), their forward passes: the tallest tree of each model (in its own width class) runs the forward
// pass for all of them, a shorter tree (a narrower one, in another class, where it is shorter than jmax) reading the
// first n ratios. With no model shared, each tree keeps 3 n reals and runs both passes in one launch, as before.
void plan_block_classes(const trinom_bonds &bd, ChunkPlan &plan) {
    using Model = std::tuple<int64_t, int64_t, double, double>;
    std::map<Model, int> index;     // model -> its number k
    std::vector<int> lead;          // k -> its tallest tree (a bond of the chunk)
    std::vector<int> model_of(plan.count, -1);
    int trees = 0;
    for (int g = kBlock; g < kGroups; ++g) {
        for (int s = 0; s < plan.size[g]; ++s, ++trees) {
            const int o = plan.perm[plan.begin[g] + s];
            const long long b = plan.first_row + o;
            const auto [it, added] =
                index.emplace(Model{bd.term_unit[b], bd.term_steps[b], bd.a[b], bd.sigma[b]}, int(lead.size()));
            if (added) lead.push_back(o);
            else if (plan.n[o] > plan.n[lead[it->second]]) lead[it->second] = o;
            model_of[o] = it->second;
        }
    }
    // TRINOM_BLOCK_SHARE=0 (read at each call, for benchmarks and tests) runs every tree's own forward pass.
    const char *share = std::getenv("TRINOM_BLOCK_SHARE");
    plan.shared = static_cast<int>(lead.size()) < trees && !(share && std::strcmp(share, "0") == 0);
    std::vector<long long> base(lead.size(), -1);  // k -> the lead's scratch (3 n reals)
    std::vector<bool> leads(plan.count, false);
    for (int o : lead) leads[o] = true;
    for (int c = 0; c < kBlockClasses; ++c) {
        const int g = kBlock + c;
        plan.at_begin[g] = static_cast<int>(plan.at.size());
        plan.lead_size[c] = 0;
        for (int s = 0; s < plan.size[g]; ++s) {
            const int o = plan.perm[plan.begin[g] + s];
            if (!plan.shared || leads[o]) {
                base[model_of[o]] = plan.scratch;
                plan.at.push_back(plan.shared ? plan.scratch + 2LL * plan.n[o] : plan.scratch);
                plan.scratch += 3LL * plan.n[o];
            } else {
                plan.at.push_back(plan.scratch);
                plan.scratch += plan.n[o];
            }
        }
    }
    if (!plan.shared) return;
    // The leads' launches (their scratch as a tree of its own), then every tree's two ratio offsets.
    for (int c = 0; c < kBlockClasses; ++c) {
        const int g = kBlock + c;
        plan.lead_begin[c] = static_cast<int>(plan.perm.size());
        plan.lead_at[c] = static_cast<int>(plan.at.size());
        for (int s = 0; s < plan.size[g]; ++s) {
            const int o = plan.perm[plan.begin[g] + s];
            if (!leads[o]) continue;
            plan.perm.push_back(o);
            plan.at.push_back(base[model_of[o]]);
            ++plan.lead_size[c];
        }
    }
    for (int c = 0; c < kBlockClasses; ++c) {
        const int g = kBlock + c;
        plan.ratio_at[c] = static_cast<int>(plan.at.size());
        for (int s = 0; s < plan.size[g]; ++s) {
            const int k = model_of[plan.perm[plan.begin[g] + s]];
            plan.at.push_back(base[k]);
            plan.at.push_back(base[k] + plan.n[lead[k]]);
        }
    }
}

void plan_chunk(HostPool &pool, const trinom_bonds &bd, int64_t curves, long long first_row, int count, bool sort,
                int wide_only, ChunkPlan &plan) {
    plan.first_row = first_row;
    plan.count = count;
    plan.n.assign(count, 0);
    plan.jmax.assign(count, 0);
    plan.cf_first = bd.cashflow_offset[first_row];
    const long long cf_end = bd.cashflow_offset[first_row + count];
    if (cf_end - plan.cf_first > INT_MAX / 2)
        refuse(TRINOM_ERR_ARGUMENT, first_row, "too many cash flows in one chunk (set a smaller chunk_size)");
    plan.cashflows = static_cast<int>(cf_end - plan.cf_first);
    plan.scenarios = bd.entry_offset != nullptr;
    plan.ent_first = plan.scenarios ? bd.entry_offset[first_row] : first_row;
    const long long ent_end = plan.scenarios ? bd.entry_offset[first_row + count] : first_row + count;
    if (ent_end - plan.ent_first > INT_MAX / 2 || ent_end < plan.ent_first)
        refuse(TRINOM_ERR_ARGUMENT, first_row, "too many scenario entries in one chunk (set a smaller chunk_size)");
    plan.entries = static_cast<int>(ent_end - plan.ent_first);
    plan.search = bd.search != nullptr;
    plan.listed = bd.exercise_offset != nullptr;
    plan.timed = bd.cashflow_time != nullptr;
    plan.ex_first = plan.listed ? bd.exercise_offset[first_row] : 0;
    const long long ex_end = plan.listed ? bd.exercise_offset[first_row + count] : 0;
    if (ex_end - plan.ex_first > INT_MAX / 2 || ex_end < plan.ex_first)
        refuse(TRINOM_ERR_ARGUMENT, first_row, "too many listed exercise points in one chunk (set a smaller chunk_size)");
    plan.points = static_cast<int>(ex_end - plan.ex_first);
    plan.listed = plan.points > 0;  // a chunk without points runs as if no bond had any (null arrays)
    plan.dated = plan.listed && bd.exercise_time != nullptr;
    plan.pc_first = bd.piece_offset ? bd.piece_offset[first_row] : 0;
    const long long pc_end = bd.piece_offset ? bd.piece_offset[first_row + count] : 0;
    plan.co_first = bd.option_offset ? bd.option_offset[first_row] : 0;
    const long long co_end = bd.option_offset ? bd.option_offset[first_row + count] : 0;
    if (pc_end - plan.pc_first > INT_MAX / 2 || pc_end < plan.pc_first || co_end - plan.co_first > INT_MAX / 16 ||
        co_end < plan.co_first)
        refuse(TRINOM_ERR_ARGUMENT, first_row, "too many sigma pieces or coupon options in one chunk (set a smaller "
               "chunk_size)");
    plan.pieces = static_cast<int>(pc_end - plan.pc_first);
    plan.pieced = plan.pieces > 0;
    plan.options = static_cast<int>(co_end - plan.co_first);
    plan.optioned = plan.options > 0;
    std::vector<int> key(count);
    pool.parallel_for(count, kStagingGrain, [&](int, long long lo, long long hi) {
        for (int i = static_cast<int>(lo); i < hi; ++i) {
            const long long b = first_row + i;
            // Checks that keep the kernels inside their arrays (the values were validated in Python).
            if (bd.cashflow_offset[b + 1] - bd.cashflow_offset[b] < 1)
                refuse(TRINOM_ERR_ARGUMENT, b, "a bond needs at least one cash flow", "cashflow_count");
            if (bd.curve_index[b] < 0 || bd.curve_index[b] >= curves)
                refuse(TRINOM_ERR_ARGUMENT, b,
                       "curve_index " + std::to_string(bd.curve_index[b]) + " is not one of the " +
                           std::to_string(curves) + " curves",
                       "curve_index");
            if (plan.scenarios) {
                if (bd.entry_offset[b + 1] < bd.entry_offset[b])
                    refuse(TRINOM_ERR_ARGUMENT, b, "entry_offset must not decrease", "entry_offset");
                for (long long k = bd.entry_offset[b]; k < bd.entry_offset[b + 1]; ++k)
                    if (bd.entry_curve[k] < 0 || bd.entry_curve[k] >= curves)
                        refuse(TRINOM_ERR_ARGUMENT, b,
                               "scenario entry " + std::to_string(k) + ": curve " + std::to_string(bd.entry_curve[k]) +
                                   " is not one of the " + std::to_string(curves) + " curves",
                               "entry_curve");
            }
            if (bd.exercise_offset && bd.exercise_offset[b + 1] < bd.exercise_offset[b])
                refuse(TRINOM_ERR_ARGUMENT, b, "exercise_offset must not decrease", "exercise_offset");
            if (bd.exercise_frequency[b] < 1 || bd.exercise_frequency[b] > INT_MAX)
                refuse(TRINOM_ERR_ARGUMENT, b, "exercise_frequency must be in 1..2^31-1", "exercise_frequency");
            if (bd.option_type[b] != CALL && bd.option_type[b] != PUT)
                refuse(TRINOM_ERR_ARGUMENT, b, "option_type must be 0 (call) or 1 (put)", "option_type");
            if (bd.term_unit[b] > INT_MAX || bd.term_steps[b] > INT_MAX ||
                !tree_shape(bd.term_unit[b], bd.term_steps[b], bd.a[b], bd.maturity[b], plan.n[i], plan.jmax[i]))
                refuse(TRINOM_ERR_ARGUMENT, b, "the bond gives no valid tree (check term_unit, term_steps, a and maturity)",
                       tree_fault(bd, b));
            const bool pieced = bd.piece_offset && bd.piece_offset[b + 1] > bd.piece_offset[b];
            if (pieced) {  // its grid is the pieces' (a widened tree)
                if (bd.piece_jmax[b] < 1 || bd.piece_jmax[b] > (1 << 30) || bd.piece_step[bd.piece_offset[b]] != 0)
                    refuse(TRINOM_ERR_ARGUMENT, b, "sigma pieces need a half width >= 1 and a first piece from step 0",
                           "piece_jmax");
                plan.jmax[i] = static_cast<int>(bd.piece_jmax[b]);
            }
            if (bd.option_offset)
                for (long long k = bd.option_offset[b]; k < bd.option_offset[b + 1]; ++k)
                    if (bd.option_step[k] < 0 || bd.option_step[k] >= plan.n[i] ||
                        (k > bd.option_offset[b] && bd.option_step[k] < bd.option_step[k - 1]))
                        refuse(TRINOM_ERR_ARGUMENT, b, "coupon options' steps must ascend in 0..height-1",
                               "option_step");
            if (plan.scenarios && bd.checkpoint_step && bd.checkpoint_step[b] != -1) {
                const int64_t cp = bd.checkpoint_step[b];
                if (cp < 1 || cp >= plan.n[i] || bd.entry_offset[b + 1] - bd.entry_offset[b] < 2)
                    refuse(TRINOM_ERR_ARGUMENT, b,
                           "checkpoint_step " + std::to_string(cp) +
                               " must be -1 or in 1..height-1, with two entries or more",
                           "checkpoint_step");
            }
            const int half = std::min(plan.jmax[i], plan.n[i]);
            const int width = 2 * half + 1;
            // Trees wider than the fast classes (or every tree, with wide_only) take the block kernel of their width
            // class; spread searches, trees wider than its classes and wide_only 2 take the global-memory kernel.
            int group = wide_only ? kWide : fast_class(width);
            const bool special = special_tree(bd, b);  // sigma pieces or coupon options: the global-memory kernel
            if (special) group = kWide;
            if (group == kWide && wide_only != 2 && !plan.search && !special && block_class(width) < kBlockClasses)
                group = kBlock + block_class(width);
            int bucket = 0;
            if (sort) {  // heights in descending order: eight buckets per octave
                const int level = std::min(kFastBuckets - 1, static_cast<int>(8.0 * std::log2(double(plan.n[i]))));
                bucket = kFastBuckets - 1 - level;
            }
            key[i] = group * kFastBuckets + bucket;
        }
    });
    const int top = count ? *std::max_element(key.begin(), key.end()) : 0;
    // Stable counting sort by key, ascending.
    std::vector<int> start(top + 2, 0);
    for (int k : key) ++start[k + 1];
    for (int k = 1; k <= top + 1; ++k) start[k] += start[k - 1];
    plan.perm.assign(count, 0);
    std::vector<int> cursor(start.begin(), start.end() - 1);
    for (int i = 0; i < count; ++i) plan.perm[cursor[key[i]]++] = i;
    for (int g = 0; g < kGroups; ++g) {
        const int lo = std::min(g * kFastBuckets, top + 1), hi = std::min((g + 1) * kFastBuckets, top + 1);
        plan.begin[g] = start[lo];
        plan.size[g] = start[hi] - start[lo];
    }
    // Scratch: the per-step factors of each warp's G bonds interleaved (G columns of the warp's
    // tallest height), for each wide bond 3 W + n reals (5 W + n for a search), and 3 n reals for each bond of the
    // block kernel.
    plan.at.clear();
    plan.scratch = 0;
    for (int g = 0; g < kGroups; ++g) {
        plan.at_begin[g] = static_cast<int>(plan.at.size());
        const int *sorted = plan.perm.data() + plan.begin[g];
        if (g < kWide) {
            const int G = 32 / class_lanes(g);
            for (int w = 0; w * G < plan.size[g]; ++w) {
                int n_max = 0;
                for (int s = w * G; s < std::min(plan.size[g], (w + 1) * G); ++s)
                    n_max = std::max(n_max, plan.n[sorted[s]]);
                plan.at.push_back(plan.scratch);
                plan.scratch += static_cast<long long>(G) * n_max;
                if (plan.scenarios) plan.scratch += 32LL * class_nodes(g);  // the first entries' checkpoint
            }
        } else if (g >= kBlock) {
            break;  // the block classes: plan_block_classes, below
        } else {
            for (int s = 0; s < plan.size[g]; ++s) {
                const int o = sorted[s];
                plan.at.push_back(plan.scratch);
                plan.scratch += (plan.search ? 5LL : 3LL) * (2 * std::min(plan.jmax[o], plan.n[o]) + 1) + plan.n[o];
            }
        }
    }
    plan_block_classes(bd, plan);
}

// ---- device layout of one chunk: the upload region first, then the outputs and the scratch ----
enum IntArray { kN, kJmax, kTermUnit, kTermSteps, kFirst, kLast, kFreq, kCurve, kCfBegin, kCfStep, kCurveBegin,
                kCurveDays, kPerm, kEntBegin, kEntCurve, kCpStep, kEntResume, kExBegin, kExStep, kPcBegin, kPcStep,
                kCoBegin, kCoStep, kIntArrays };
enum RealArray { kA, kSigma, kSpread, kStrike, kPaid, kCoupon, kRates, kEntSpread, kExPrice, kRealArrays };

template <typename real> struct ChunkLayout {
    size_t ints[kIntArrays], reals[kRealArrays], times, dates, type, at, target, upload, out, found_spread,
        found_iterations, found_status, scratch, cf_terms, ex_terms, pc_v, pc_mdrdt, co_terms, total;
};

template <typename real> ChunkLayout<real> chunk_layout(const ChunkPlan &plan, int curves, int points) {
    Layout l;
    ChunkLayout<real> c;
    const size_t count = plan.count;
    const size_t entries = plan.scenarios ? size_t(plan.entries) : 0;
    const size_t listed = plan.listed ? size_t(plan.points) : 0;
    const size_t int_sizes[kIntArrays] = {count, count, count, count, count, count, count, count, count + 1,
                                          size_t(plan.cashflows), size_t(curves) + 1, size_t(points), plan.perm.size(),
                                          plan.scenarios ? count + 1 : 0, entries, plan.scenarios ? count : 0,
                                          entries, plan.listed ? count + 1 : 0, listed,
                                          plan.pieced ? count + 1 : 0, size_t(plan.pieced ? plan.pieces : 0),
                                          plan.optioned ? count + 1 : 0, size_t(plan.optioned ? plan.options : 0)};
    const size_t real_sizes[kRealArrays] = {count, count, count, count, size_t(plan.cashflows), size_t(plan.cashflows),
                                            size_t(points), entries, listed};
    for (int k = 0; k < kIntArrays; ++k) c.ints[k] = l.take(int_sizes[k] * sizeof(int));
    for (int k = 0; k < kRealArrays; ++k) c.reals[k] = l.take(real_sizes[k] * sizeof(real));
    c.times = l.take((plan.timed ? size_t(plan.cashflows) : 0) * sizeof(double));
    c.dates = l.take((plan.dated ? size_t(plan.points) : 0) * sizeof(double));
    c.type = l.take(count);
    c.pc_v = l.take((plan.pieced ? size_t(plan.pieces) : 0) * sizeof(double));
    c.pc_mdrdt = l.take((plan.pieced ? count : 0) * sizeof(double));
    c.co_terms = l.take((plan.optioned ? size_t(plan.options) * 8 * size_t(curves) : 0) * sizeof(double));
    c.at = l.take(plan.at.size() * sizeof(long long));
    const size_t searched = plan.search ? count : 0;
    c.target = l.take(searched * sizeof(double));
    c.upload = l.bytes;
    c.out = l.take(size_t(plan.entries) * sizeof(real));
    c.found_spread = l.take(searched * sizeof(double));
    c.found_iterations = l.take(searched * sizeof(int));
    c.found_status = l.take(searched * sizeof(int));
    c.scratch = l.take(static_cast<size_t>(plan.scratch) * sizeof(real));
    c.cf_terms = l.take((plan.timed ? size_t(plan.cashflows) * kFlowTerms : 0) * sizeof(double));
    c.ex_terms = l.take((plan.dated ? size_t(plan.points) * kFlowTerms : 0) * sizeof(double));
    c.total = l.bytes;
    return c;
}

template <typename real>
void price_chunk(DeviceContext &ctx, const trinom_bonds &bd, const trinom_bond_curves &curves, const ChunkPlan &plan,
                 int block_size, real *prices, trinom_section_timing &timing) {
    Stage staging("staging");
    int points = 0;
    for (int64_t c = 0; c < curves.count; ++c) points += static_cast<int>(curves.terms[c]);
    const int nc = static_cast<int>(curves.count);
    const ChunkLayout<real> lay = chunk_layout<real>(plan, nc, points);
    ctx.arena.ensure(lay.total);
    ctx.staging.ensure(lay.upload);

    // Stage the upload region: the chunk's bonds in input order, converted to the device types.
    char *st = static_cast<char *>(ctx.staging.ptr);
    auto ints = [&](int k) { return reinterpret_cast<int *>(st + lay.ints[k]); };
    auto reals = [&](int k) { return reinterpret_cast<real *>(st + lay.reals[k]); };
    const long long b0 = plan.first_row;
    const int count = plan.count;
    std::memcpy(ints(kN), plan.n.data(), count * sizeof(int));
    std::memcpy(ints(kJmax), plan.jmax.data(), count * sizeof(int));
    std::memcpy(ints(kPerm), plan.perm.data(), plan.perm.size() * sizeof(int));
    ctx.pool->parallel_for(count, kStagingGrain, [&](int, long long lo, long long hi) {
        for (long long i = lo; i < hi; ++i) {
            const long long b = b0 + i;
            ints(kTermUnit)[i] = static_cast<int>(bd.term_unit[b]);
            ints(kTermSteps)[i] = static_cast<int>(bd.term_steps[b]);
            ints(kFirst)[i] = clamp_int(bd.first_exercise[b]);
            ints(kLast)[i] = clamp_int(bd.last_exercise[b]);
            ints(kFreq)[i] = static_cast<int>(bd.exercise_frequency[b]);
            ints(kCurve)[i] = static_cast<int>(bd.curve_index[b]);
            ints(kCfBegin)[i] = static_cast<int>(bd.cashflow_offset[b] - plan.cf_first);
            reals(kA)[i] = static_cast<real>(bd.a[b]);
            reals(kSigma)[i] = static_cast<real>(bd.sigma[b]);
            reals(kSpread)[i] = static_cast<real>(bd.spread[b]);
            reals(kStrike)[i] = static_cast<real>(bd.strike[b]);
        }
    });
    ints(kCfBegin)[count] = plan.cashflows;
    std::memcpy(st + lay.type, bd.option_type + b0, count);
    ctx.pool->parallel_for(plan.cashflows, kStagingGrain, [&](int, long long lo, long long hi) {
        for (long long k = lo; k < hi; ++k) {
            const long long f = plan.cf_first + k;
            ints(kCfStep)[k] = clamp_int(bd.cashflow_step[f]);
            // repayment + coupon added in the working precision, as the paper's code does
            reals(kPaid)[k] = static_cast<real>(bd.repayment[f]) + static_cast<real>(bd.coupon[f]);
            reals(kCoupon)[k] = static_cast<real>(bd.coupon[f]);
        }
    });
    if (plan.timed)
        std::memcpy(st + lay.times, bd.cashflow_time + plan.cf_first, size_t(plan.cashflows) * sizeof(double));
    int at = 0;
    for (int c = 0; c < nc; ++c) {
        ints(kCurveBegin)[c] = at;
        at += static_cast<int>(curves.terms[c]);
    }
    ints(kCurveBegin)[nc] = at;
    for (int k = 0; k < points; ++k) {
        ints(kCurveDays)[k] = clamp_int(curves.days[k]);
        reals(kRates)[k] = static_cast<real>(curves.rates[k]);
    }
    if (plan.listed) {
        for (int i = 0; i <= count; ++i)
            ints(kExBegin)[i] = static_cast<int>(bd.exercise_offset[b0 + i] - plan.ex_first);
        ctx.pool->parallel_for(plan.points, kStagingGrain, [&](int, long long lo, long long hi) {
            for (long long k = lo; k < hi; ++k) {
                ints(kExStep)[k] = clamp_int(bd.exercise_step[plan.ex_first + k]);
                reals(kExPrice)[k] = static_cast<real>(bd.exercise_price[plan.ex_first + k]);
            }
        });
        if (plan.dated)
            std::memcpy(st + lay.dates, bd.exercise_time + plan.ex_first, size_t(plan.points) * sizeof(double));
    }
    if (plan.pieced) {
        for (int i = 0; i <= count; ++i) ints(kPcBegin)[i] = static_cast<int>(bd.piece_offset[b0 + i] - plan.pc_first);
        double *v = reinterpret_cast<double *>(st + lay.pc_v), *mdrdt = reinterpret_cast<double *>(st + lay.pc_mdrdt);
        for (int k = 0; k < plan.pieces; ++k) {
            ints(kPcStep)[k] = clamp_int(bd.piece_step[plan.pc_first + k]);
            v[k] = bd.piece_v[plan.pc_first + k];
        }
        for (int i = 0; i < count; ++i) mdrdt[i] = bd.piece_mdrdt[b0 + i];
    }
    if (plan.optioned) {  // the terms on every curve, the chunk's options of each curve together
        for (int i = 0; i <= count; ++i) ints(kCoBegin)[i] = static_cast<int>(bd.option_offset[b0 + i] - plan.co_first);
        for (int k = 0; k < plan.options; ++k) ints(kCoStep)[k] = clamp_int(bd.option_step[plan.co_first + k]);
        const long long total = bd.option_offset[bd.count];
        double *terms = reinterpret_cast<double *>(st + lay.co_terms);
        for (int c = 0; c < nc; ++c)
            std::memcpy(terms + size_t(c) * plan.options * 8, bd.option_terms + (c * total + plan.co_first) * 8,
                        size_t(plan.options) * 8 * sizeof(double));
    }
    std::memcpy(st + lay.at, plan.at.data(), plan.at.size() * sizeof(long long));
    if (plan.search) std::memcpy(st + lay.target, bd.search->target + b0, count * sizeof(double));
    if (plan.scenarios) {
        for (int i = 0; i <= count; ++i) ints(kEntBegin)[i] = static_cast<int>(bd.entry_offset[b0 + i] - plan.ent_first);
        ctx.pool->parallel_for(plan.entries, kStagingGrain, [&](int, long long lo, long long hi) {
            for (long long k = lo; k < hi; ++k) {
                ints(kEntCurve)[k] = static_cast<int>(bd.entry_curve[plan.ent_first + k]);
                reals(kEntSpread)[k] = static_cast<real>(bd.entry_spread[plan.ent_first + k]);
                ints(kEntResume)[k] = bd.entry_resume ? bd.entry_resume[plan.ent_first + k] != 0 : 0;
            }
        });
        for (int i = 0; i < count; ++i) ints(kCpStep)[i] = bd.checkpoint_step ? clamp_int(bd.checkpoint_step[b0 + i]) : -1;
    }

    // Device pointers.
    char *dev = static_cast<char *>(ctx.arena.ptr);
    auto d_ints = [&](int k) { return reinterpret_cast<const int *>(dev + lay.ints[k]); };
    auto d_reals = [&](int k) { return reinterpret_cast<const real *>(dev + lay.reals[k]); };
    BondArgs<real> args;
    args.n = d_ints(kN);
    args.jmax = d_ints(kJmax);
    args.term_unit = d_ints(kTermUnit);
    args.term_steps = d_ints(kTermSteps);
    args.a = d_reals(kA);
    args.sigma = d_reals(kSigma);
    args.spread = d_reals(kSpread);
    args.strike = d_reals(kStrike);
    args.first = d_ints(kFirst);
    args.last = d_ints(kLast);
    args.freq = d_ints(kFreq);
    args.curve = d_ints(kCurve);
    args.type = reinterpret_cast<const signed char *>(dev + lay.type);
    args.cf_begin = d_ints(kCfBegin);
    args.cf_step = d_ints(kCfStep);
    args.cf_paid = d_reals(kPaid);
    args.cf_coupon = d_reals(kCoupon);
    args.curve_begin = d_ints(kCurveBegin);
    args.curve_rates = d_reals(kRates);
    args.curve_days = d_ints(kCurveDays);
    args.scratch = reinterpret_cast<real *>(dev + lay.scratch);
    args.ent_begin = plan.scenarios ? d_ints(kEntBegin) : nullptr;
    args.ent_curve = plan.scenarios ? d_ints(kEntCurve) : nullptr;
    args.ent_spread = plan.scenarios ? d_reals(kEntSpread) : nullptr;
    args.cp_step = plan.scenarios ? d_ints(kCpStep) : nullptr;
    args.ent_resume = plan.scenarios ? d_ints(kEntResume) : nullptr;
    args.ex_begin = plan.listed ? d_ints(kExBegin) : nullptr;
    args.ex_step = plan.listed ? d_ints(kExStep) : nullptr;
    args.ex_price = plan.listed ? d_reals(kExPrice) : nullptr;
    args.cf_time = plan.timed ? reinterpret_cast<const double *>(dev + lay.times) : nullptr;
    args.ex_time = plan.dated ? reinterpret_cast<const double *>(dev + lay.dates) : nullptr;
    args.cf_terms = plan.timed ? reinterpret_cast<const double *>(dev + lay.cf_terms) : nullptr;
    args.ex_terms = plan.dated ? reinterpret_cast<const double *>(dev + lay.ex_terms) : nullptr;
    args.target = plan.search ? reinterpret_cast<const double *>(dev + lay.target) : nullptr;
    args.search_low = plan.search ? bd.search->low : 0.0;
    args.search_high = plan.search ? bd.search->high : 0.0;
    args.search_tolerance = plan.search ? bd.search->tolerance : 0.0;
    args.search_relative = plan.search ? bd.search->relative_tolerance : 0.0;
    args.search_max = plan.search ? bd.search->max_iterations : 0;
    args.found_spread = reinterpret_cast<double *>(dev + lay.found_spread);
    args.found_iterations = reinterpret_cast<int *>(dev + lay.found_iterations);
    args.found_status = reinterpret_cast<int *>(dev + lay.found_status);
    args.pc_begin = plan.pieced ? d_ints(kPcBegin) : nullptr;
    args.pc_step = plan.pieced ? d_ints(kPcStep) : nullptr;
    args.pc_v = plan.pieced ? reinterpret_cast<const double *>(dev + lay.pc_v) : nullptr;
    args.pc_mdrdt = plan.pieced ? reinterpret_cast<const double *>(dev + lay.pc_mdrdt) : nullptr;
    args.co_begin = plan.optioned ? d_ints(kCoBegin) : nullptr;
    args.co_step = plan.optioned ? d_ints(kCoStep) : nullptr;
    args.co_terms = plan.optioned ? reinterpret_cast<const double *>(dev + lay.co_terms) : nullptr;
    args.co_count = plan.optioned ? plan.options : 0;
    const int *perm = d_ints(kPerm);
    const long long *d_at = reinterpret_cast<const long long *>(dev + lay.at);
    real *out = reinterpret_cast<real *>(dev + lay.out);

    // upload starts, kernels start, kernels end, download ends
    const cudaEvent_t mark[4] = {ctx.event(), ctx.event(), ctx.event(), ctx.event()};
    Stage kernels("kernels");
    TRINOM_CHECK(cudaEventRecord(mark[0], ctx.stream));
    TRINOM_CHECK(cudaMemcpyAsync(dev, st, lay.upload, cudaMemcpyHostToDevice, ctx.stream));
    TRINOM_CHECK(cudaEventRecord(mark[1], ctx.stream));
    // The curve terms of the flows and listed points with dates first (flow_terms_kernel): every pricing kernel
    // reads them.
    const bool terms = plan.timed || plan.dated;
    const cudaEvent_t ready = terms ? ctx.event() : mark[1];
    if (terms) {
        launch_flow_terms<real>(args, count, plan.cashflows, plan.dated ? plan.points : 0, ctx.stream);
        TRINOM_CHECK(cudaEventRecord(ready, ctx.stream));
    }
    // The groups side by side, the most work first (the wide kernel counts as the most).
    std::vector<int> groups;
    for (int g = 0; g < kGroups; ++g)
        if (plan.size[g] > 0) groups.push_back(g);
    std::sort(groups.begin(), groups.end(),
              [&](int x, int y) { return plan.size[x] * (x + 1LL) > plan.size[y] * (y + 1LL); });
    int sms = 1;
    TRINOM_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
    // Where the block classes' trees share models (plan_block_classes), the models' forward passes first, each class's
    // leads with the class's variant; then every group, the block classes' trees reading their model's ratios.
    cudaEvent_t start = ready;
    if (plan.shared) {
        std::vector<int> leading;
        for (int c = 0; c < kBlockClasses; ++c)
            if (plan.lead_size[c] > 0) leading.push_back(c);
        ctx.fan_out(static_cast<int>(leading.size()), ready, [&](int q, cudaStream_t s) {
            const int c = leading[q];
            launch_bonds_block<real>(block_variant(c, plan.size[kBlock + c], sms), args, perm, plan.lead_begin[c],
                                     plan.lead_size[c], d_at + plan.lead_at[c], BlockShare{kForwardOnly, nullptr}, out,
                                     s);
        });
        start = ctx.event();
        TRINOM_CHECK(cudaEventRecord(start, ctx.stream));
    }
    ctx.fan_out(static_cast<int>(groups.size()), start, [&](int q, cudaStream_t s) {
        const int g = groups[q];
        if (g == kWide)
            launch_bonds_wide<real>(args, perm, plan.begin[g], plan.size[g], d_at + plan.at_begin[g], out, s);
        else if (g >= kBlock)
            launch_bonds_block<real>(block_variant(g - kBlock, plan.size[g], sms), args, perm, plan.begin[g],
                                     plan.size[g], d_at + plan.at_begin[g],
                                     plan.shared ? BlockShare{kBackwardOnly, d_at + plan.ratio_at[g - kBlock]}
                                                 : BlockShare{},
                                     out, s);
        else
            launch_bonds<real>(g, args, perm, plan.begin[g], plan.size[g], d_at + plan.at_begin[g], out, block_size, s);
    });
    TRINOM_CHECK(cudaEventRecord(mark[2], ctx.stream));
    Stage download("download");
    TRINOM_CHECK(cudaMemcpyAsync(prices, out, size_t(plan.entries) * sizeof(real), cudaMemcpyDeviceToHost, ctx.stream));
    if (plan.search) {
        const trinom_spread_search &search = *bd.search;
        TRINOM_CHECK(cudaMemcpyAsync(search.spread + b0, dev + lay.found_spread, count * sizeof(double),
                                     cudaMemcpyDeviceToHost, ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(search.iterations + b0, dev + lay.found_iterations, count * sizeof(int),
                                     cudaMemcpyDeviceToHost, ctx.stream));
        TRINOM_CHECK(cudaMemcpyAsync(search.status + b0, dev + lay.found_status, count * sizeof(int),
                                     cudaMemcpyDeviceToHost, ctx.stream));
    }
    TRINOM_CHECK(cudaEventRecord(mark[3], ctx.stream));
    TRINOM_CHECK(cudaStreamSynchronize(ctx.stream));
    timing.kernel_ms += elapsed_ms(mark[1], mark[2]);
    timing.device_ms += elapsed_ms(mark[0], mark[3]);
    timing.chunks += 1;
    for (int g = kWide; g < kGroups; ++g) timing.fallback += plan.size[g];
    ctx.recycle_events();
}

template <typename real>
void price_all(DeviceContext &ctx, const trinom_bonds &bd, const trinom_bond_curves &curves,
               const trinom_run_options &opt, real *prices, trinom_section_timing &timing) {
    long long chunk = opt.bond_chunk_size > 0 ? opt.bond_chunk_size : kDefaultChunk;
    chunk = std::min<long long>(chunk, INT_MAX / 8);
    const size_t budget = memory_budget(opt.memory_limit, ctx.arena.size);
    int points = 0;
    for (int64_t c = 0; c < curves.count; ++c) points += static_cast<int>(curves.terms[c]);
    ChunkPlan plan;
    for (long long begin = 0; begin < bd.count;) {
        int count = static_cast<int>(std::min<long long>(chunk, bd.count - begin));
        for (;;) {  // halve the chunk until its buffers fit the budget
            Stage stage("plan");
            plan_chunk(*ctx.pool, bd, curves.count, begin, count, !opt.no_sort, opt.bond_wide_only, plan);
            const size_t need = chunk_layout<real>(plan, static_cast<int>(curves.count), points).total;
            if (need <= budget) break;
            if (count == 1) {
                Stage memory("memory");
                refuse(TRINOM_ERR_MEMORY, begin, "the bond's tree needs " + std::to_string(need) +
                                                     " bytes of GPU memory, more than the budget of " +
                                                     std::to_string(budget));
            }
            count = (count + 1) / 2;
        }
        const int block_size = opt.bond_block_size > 0 ? opt.bond_block_size : 128;
        price_chunk<real>(ctx, bd, curves, plan, block_size, prices + plan.ent_first, timing);
        begin += count;
    }
}

}  // namespace

void price_bonds(DeviceContext &ctx, const trinom_bonds &bonds, const trinom_bond_curves &curves,
                 const trinom_run_options &options, void *prices, trinom_section_timing &timing) {
    if (bonds.count <= 0) return;
    if (options.precision == TRINOM_F32)
        price_all<float>(ctx, bonds, curves, options, static_cast<float *>(prices), timing);
    else
        price_all<double>(ctx, bonds, curves, options, static_cast<double *>(prices), timing);
}

}  // namespace trinom
