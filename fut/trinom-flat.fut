-- Trinomial option pricing, Futhark-flat: the assignment's `trinomialChunk`.
--
-- trinomialChunk prices the options of one chunk with flat parallel operators only: the
-- options' trees lie side by side in flat arrays of length w (one segment of width
-- 2 jmax + 1 per option), their alphas in a flat array of maxOptionsInChunk*(n_max+1)
-- (segment s at offset s*(n_max+1)).  The flag and segment-index descriptors are computed
-- once before the loops; both loops run n_max steps, and steps beyond an option's own
-- height leave its segment untouched.  The options and their trees come from fut/options.fut;
-- the probabilities, the forward gather and the backward expectation from fut/lattice.fut
-- (the thesis' convention).
--
-- Around it:
--   price_chunked: sort the options by decreasing tree height (radix sort), bin-pack them
--     first-fit into chunks of width w (in runs of 256 options, fut/chunking.fut); an option
--     wider than w gets a chunk of its own width.  All chunks are priced side by side with
--     trinomialChunk's flat steps (`forward_step`, `backward_step` on a `layout`): the chunks
--     are ordered by decreasing height, so the chunks still running at a step form a prefix
--     of the flat arrays and each step works on that prefix only; alphas are stored exactly
--     (sum of heights + 1).  Prices come back in input order.
--     Why not `map trinomialChunk chunks`: Futhark 0.25.27 compiles that map (whose loops
--     run to each chunk's own height) to an intra-block GPU kernel that gives wrong results
--     (out-of-bounds indices read from another array's shared memory; seen on an H200 with
--     cuda), or, with global n_max, to per-chunk alphas of chunks*options*(n_max+1) reals.
--     The c and multicore backends priced the map version correctly.
--   price_whole: the whole portfolio as one trinomialChunk (w = sum of widths, n_max = max
--     height): the thesis' Futhark-flat.
--
-- Entry points (the contract with build.py and python/trinom/backends/futhark_flat.py);
-- the ten arrays are strikes, maturities, expiries, term_units, term_steps, a, sigma,
-- types (0 = call, 1 = put), yield_rates, yield_days; prices come back in input order.
--   main, main32                      : price_chunked with w = 256 (the assignment's
--                                       w; default_chunk_width), f64 and f32;
--   price_chunked64, price_chunked32  : (w: i64) then the ten arrays;
--   price_whole64, price_whole32      : the ten arrays, the portfolio as one chunk.
--
-- Tests (futhark test --backend=c fut/trinom-flat.fut); data/NAME.in is the thesis file
-- followed by yield.in, data/NAME.out its float64 reference prices (made by `make data`).
-- Benchmarks on the 65536-option datasets live in fut/bench-flat.fut.
-- ==
-- entry: main
-- compiled input @ ../data/book.in output @ ../data/book.out
-- compiled input @ ../data/options-1000.in output @ ../data/options-1000.out
-- compiled input @ ../data/0_UNIFORM_1000.in output @ ../data/0_UNIFORM_1000.out
-- compiled input @ ../data/1_RAND_1000.in output @ ../data/1_RAND_1000.out
-- compiled input @ ../data/2_RANDCONSTHEIGHT_1000.in output @ ../data/2_RANDCONSTHEIGHT_1000.out
-- compiled input @ ../data/3_RANDCONSTWIDTH_1000.in output @ ../data/3_RANDCONSTWIDTH_1000.out

-- ==
-- entry: price_whole64
-- compiled input @ ../data/book.in output @ ../data/book.out
-- compiled input @ ../data/0_UNIFORM_1000.in output @ ../data/0_UNIFORM_1000.out
-- compiled input @ ../data/2_RANDCONSTHEIGHT_1000.in output @ ../data/2_RANDCONSTHEIGHT_1000.out

import "constants"
import "options"
import "chunking"

-- | The chunk width of `main`/`main32`: the assignment's w = 256.
def default_chunk_width : i64 = 256

module flat_pricer (R: float) = {
  module H = zcb_option R
  module Lat = H.L
  type real = R.t
  def zero = H.zero

  -- | Inclusive scan restarting at every set flag.
  def segmented_scan [n] 't (op: t -> t -> t) (ne: t) (flags: [n]bool) (xs: [n]t) : [n]t =
    let step (f1, x1) (f2, x2) = (f1 || f2, if f2 then x2 else x1 `op` x2)
    in (unzip (scan step (false, ne) (zip flags xs))).1

  -- | Trees side by side in flat arrays of length n, one segment per option slot (m slots):
  -- the flag and segment-index descriptors, each element's node j, and the per-element
  -- constants, all computed once before the loops.  Segment s starts at `starts[s]` and its
  -- alphas at `alpha_at[s]`; slots with `ok[s]` false are empty.  Starts must increase.
  type layout [n] [m] =
    {seg: [n]i64, j: [n]i64, live: [n]bool, head: [n]bool,
     pu: [n]real, pm: [n]real, pd: [n]real, weight: [n]real,
     ok: [m]bool, opts: [m]H.option, trees: [m]H.tree,
     starts: [m]i64, widths: [m]i64, heights: [m]i64, alpha_at: [m]i64}

  def make_layout [m] (n: i64) (ok: [m]bool) (opts: [m]H.option) (starts: [m]i64)
                      (alpha_at: [m]i64) : layout [n] [m] =
    let trees = map H.tree_of opts
    let widths = map2 (\o t -> if o then H.width t else 0) ok trees
    let heights = map2 (\o t -> if o then t.n else 0) ok trees
    let heads = map2 (\o s -> if o then s else -1) ok starts
    let head = scatter (replicate n false) heads (replicate m true)
    let seg = scan i64.max 0 (scatter (replicate n 0) heads (iota m))
    let live = map2 (\k s -> m > 0 && ok[s] && k >= starts[s] && k < starts[s] + widths[s]) (iota n) seg
    let j = map3 (\l k s -> if l then k - starts[s] - trees[s].jmax else 0) live (iota n) seg
    let (pu, pm, pd) = unzip3 (map3 (\l s jj -> if l then Lat.probabilities trees[s].M trees[s].jmax jj
                                                else (zero, zero, zero)) live seg j)
    let weight = map3 (\l s jj -> if l then H.level_weight trees[s].dr trees[s].dt jj else zero) live seg j
    in {seg, j, live, head, pu, pm, pd, weight, ok, opts, trees, starts, widths, heights, alpha_at}

  -- | The first `len` elements of a layout (all its segments kept).
  def prefix [n] [m] (len: i64) (L: layout [n] [m]) : layout [len] [m] =
    {seg = take len L.seg, j = take len L.j, live = take len L.live, head = take len L.head,
     pu = take len L.pu, pm = take len L.pm, pd = take len L.pd, weight = take len L.weight,
     ok = L.ok, opts = L.opts, trees = L.trees, starts = L.starts, widths = L.widths,
     heights = L.heights, alpha_at = L.alpha_at}

  -- | alphas[alpha_at[s]] = the rate at dt of segment s; the rest zero.
  def initial_alphas [n] [m] [y] (rates: [y]real) (days: [y]i32) (L: layout [n] [m]) (size: i64) : *[size]real =
    scatter (replicate size zero)
            (map2 (\o at -> if o then at else -1) L.ok L.alpha_at)
            (map2 (\o t -> H.rate_at rates days o.term_unit t.dt) L.opts L.trees)

  -- | One forward step i on every segment with i < n-1: Arrow-Debreu prices of level i+1
  -- (gathered from level i) and alpha[i+1].  Other segments are left untouched.
  def forward_step [n] [m] [y] [A] (rates: [y]real) (days: [y]i32) (L: layout [n] [m]) (i: i64)
                   (Q: [n]real) (alphas: *[A]real) : (*[n]real, *[A]real) =
    let active = map2 (\l s -> l && i < L.heights[s] - 1) L.live L.seg
    let E = map4 (\a s j q -> if a then q R.* H.discount alphas[L.alpha_at[s] + i] L.trees[s].dr L.trees[s].dt j
                              else zero) active L.seg L.j Q
    let Qn = map (\k -> if !active[k] then Q[k]
                        else let jmax = L.trees[L.seg[k]].jmax
                             let j = L.j[k]
                             let prob src d = Lat.pick_probability jmax src d
                                                (L.pu[k + src - j], L.pm[k + src - j], L.pd[k + src - j])
                             in Lat.forward_node jmax prob (\src -> E[k + src - j]) j)
                 (iota n)
    let tmps = map3 (\a q weight -> if a then q R.* weight else zero) active Qn L.weight
    let sums = segmented_scan (R.+) zero L.head tmps
    let seg_active = map2 (\o h -> o && i < h - 1) L.ok L.heights
    let new_alphas = map (\s -> if !seg_active[s] then zero
                                else H.next_alpha rates days L.opts[s].term_unit L.trees[s].dt i
                                                  sums[L.starts[s] + L.widths[s] - 1])
                         (iota m)
    let targets = map2 (\a s -> if a then L.alpha_at[s] + i + 1 else -1) seg_active (iota m)
    in (Qn, scatter alphas targets new_alphas)

  -- | One backward step i on every segment with i < n: node values of level i from level
  -- i+1, the payoff at the expiry step.  Other segments are left untouched.
  def backward_step [n] [m] [A] (L: layout [n] [m]) (alphas: [A]real) (i: i64) (C: [n]real) : *[n]real =
    map (\k -> if !L.live[k] then zero
               else let s = L.seg[k]
                    let t = L.trees[s]
                    let j = L.j[k]
                    let jhigh = i64.min i t.jmax
                    in if i >= L.heights[s] then C[k]
                       else if j < -jhigh || j > jhigh then zero
                       else let ev = Lat.expected_value t.jmax (L.pu[k], L.pm[k], L.pd[k]) (\jj -> C[k + jj - j]) j
                            in H.backward_node L.opts[s] t alphas[L.alpha_at[s] + i] i ev j)
        (iota n)

  def initial_Q [n] [m] (L: layout [n] [m]) : *[n]real =
    map2 (\l j -> if l && j == 0 then H.one else zero) L.live L.j

  def initial_C [n] [m] (L: layout [n] [m]) : *[n]real =
    map (\l -> if l then R.f64 FACE_VALUE else zero) L.live

  -- | Root value of every segment (zero for empty slots).
  def roots [n] [m] (L: layout [n] [m]) (C: [n]real) : [m]real =
    map3 (\o start t -> if o then C[start + t.jmax] else zero) L.ok L.starts L.trees

  -- | The assignment's trinomialChunk: prices of the options `optionIndices[:optionsInChunk]`
  -- (slots beyond get 0), with flat parallelism of degree w.  Needs the sum of their widths
  -- <= w and their heights <= n_max.  Flat arrays of length w, alphas in
  -- maxOptionsInChunk*(n_max+1) (segment s at s*(n_max+1)); both loops run n_max steps.
  def trinomialChunk [y] [numAllOptions] [maxOptionsInChunk]
      (rates: [y]real) (days: [y]i32) (options: [numAllOptions]H.option)
      (w: i64) (n_max: i64) (optionsInChunk: i64, optionIndices: [maxOptionsInChunk]i64)
      : [maxOptionsInChunk]real =
    let ok = map (< optionsInChunk) (iota maxOptionsInChunk)
    let opts = map2 (\o ind -> if o then options[ind] else H.no_option) ok optionIndices
    let widths = map2 (\o opt -> if o then H.width (H.tree_of opt) else 0) ok opts
    let starts = map2 (-) (scan (+) 0 widths) widths
    let stride = n_max + 1
    let L = make_layout w ok opts starts (map (* stride) (iota maxOptionsInChunk))
    let alphas = initial_alphas rates days L (maxOptionsInChunk * stride)
    let (_, alphas) =
      loop (Q, alphas) = (initial_Q L, alphas) for i < n_max - 1 do
        forward_step rates days L i Q alphas
    let C = loop C = initial_C L for ii < n_max do
              backward_step L alphas (n_max - 1 - ii) C
    in roots L C

  -- | The whole portfolio as one chunk.
  def price_whole [q] [y] (rates: [y]real) (days: [y]i32) (options: [q]H.option) : [q]real =
    let trees = map H.tree_of options
    let w = i64.sum (map H.width trees)
    let n_max = reduce i64.max 0 (map (.n) trees)
    in trinomialChunk rates days options w n_max (q, iota q)

  -- | Sort by decreasing height, pack first-fit into chunks of width w (an option wider than
  -- w gets a chunk of its own width), and price all chunks side by side with the flat steps
  -- of trinomialChunk.  The chunks are ordered by decreasing height, so at every step the
  -- chunks still running form a prefix of the flat arrays: each step works on that prefix
  -- only (the map over chunks, flattened by hand; see the note at the top of the file).
  def price_chunked [q] [y] (w: i64) (rates: [y]real) (days: [y]i32) (options: [q]H.option) : [q]real =
    let trees = map H.tree_of options
    let widths = map H.width trees
    let heights = map (.n) trees
    let tallest = reduce i64.max 0 heights
    -- Options that fit a chunk, tallest first, packed first-fit; wider ones alone.
    let fitting = filter (\o -> widths[o] <= w) (iota q)
    let order = radix_sort_by_key (\o -> tallest - heights[o]) fitting
    let (packed_chunk, offset, num_packed) = first_fit_runs w (map (\o -> widths[o]) order)
    let wide = filter (\o -> widths[o] > w) (iota q)
    let num_chunks = num_packed + length wide
    let chunk_widths = map (\c -> if c < num_packed then w else widths[wide[c - num_packed]]) (iota num_chunks)
    let chunk_heights = hist i64.max 0 num_chunks
                             (concat packed_chunk (map (+ num_packed) (indices wide)))
                             (map (\o -> heights[o]) (concat order wide))
    -- Chunks by decreasing height; each chunk's flat start in that order.
    let ranked = radix_sort_by_key (\c -> tallest - chunk_heights[c]) (iota num_chunks)
    let rank = scatter (replicate num_chunks 0) ranked (iota num_chunks)
    let ends = scan (+) 0 (map (\c -> chunk_widths[c]) ranked)
    let total = if num_chunks == 0 then 0 else ends[num_chunks - 1]
    let chunk_start = map2 (-) ends (map (\c -> chunk_widths[c]) ranked)
    -- Every option's flat start; segments (options) in flat order.
    let option_start = scatter (scatter (replicate q 0) order
                                        (map2 (\c off -> chunk_start[rank[c]] + off) packed_chunk offset))
                               wide (map (\k -> chunk_start[rank[num_packed + k]]) (indices wide))
    let [m] (segment_option: [m]i64) = filter (>= 0) (scatter (replicate total (-1)) option_start (iota q))
    let seg_opts = map (\o -> options[o]) segment_option
    let seg_steps = map (\o -> heights[o] + 1) segment_option
    let alpha_at = map2 (-) (scan (+) 0 seg_steps) seg_steps
    let L = make_layout total (replicate m true) seg_opts (map (\o -> option_start[o]) segment_option) alpha_at
    let alphas = initial_alphas rates days L (i64.sum seg_steps)
    -- running_len[t]: flat length of the chunks of height >= t (a prefix, as they are ranked).
    let at_least = scan (+) 0 (reverse (hist (+) 0 (tallest + 2) (map (\c -> chunk_heights[c]) ranked)
                                                   (replicate num_chunks 1i64)))
    let running_len = map (\t -> let count = at_least[tallest + 1 - t]
                                 in if count == 0 then 0 else ends[count - 1])
                          (iota (tallest + 2))
    let (_, alphas) =
      loop (Q, alphas) = (initial_Q L, alphas) for i < tallest - 1 do
        let len = running_len[i + 2]
        let (Qp, alphas) = forward_step rates days (prefix len L) i (take len Q) alphas
        in (Q with [0:len] = Qp, alphas)
    let C = loop C = initial_C L for ii < tallest do
              let i = tallest - 1 - ii
              let len = running_len[i + 1]
              in C with [0:len] = backward_step (prefix len L) alphas i (take len C)
    in scatter (replicate q zero) segment_option (roots L C)
}

module flat64 = flat_pricer f64
module flat32 = flat_pricer f32

entry price_chunked64 [q] [y] (w: i64) (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                             (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                             (types: [q]i32) (yield_rates: [y]f64) (yield_days: [y]i32) : [q]f64 =
  flat64.price_chunked w yield_rates yield_days
                       (flat64.H.options strikes maturities expiries term_units term_steps a sigma types)

entry price_chunked32 [q] [y] (w: i64) (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                             (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                             (types: [q]i32) (yield_rates: [y]f32) (yield_days: [y]i32) : [q]f32 =
  flat32.price_chunked w yield_rates yield_days
                       (flat32.H.options strikes maturities expiries term_units term_steps a sigma types)

entry price_whole64 [q] [y] (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                           (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                           (types: [q]i32) (yield_rates: [y]f64) (yield_days: [y]i32) : [q]f64 =
  flat64.price_whole yield_rates yield_days
                     (flat64.H.options strikes maturities expiries term_units term_steps a sigma types)

entry price_whole32 [q] [y] (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                           (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                           (types: [q]i32) (yield_rates: [y]f32) (yield_days: [y]i32) : [q]f32 =
  flat32.price_whole yield_rates yield_days
                     (flat32.H.options strikes maturities expiries term_units term_steps a sigma types)

entry main [q] [y] (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                   (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                   (types: [q]i32) (yield_rates: [y]f64) (yield_days: [y]i32) : [q]f64 =
  let options = flat64.H.options strikes maturities expiries term_units term_steps a sigma types
  in flat64.price_chunked default_chunk_width yield_rates yield_days options

entry main32 [q] [y] (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                     (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                     (types: [q]i32) (yield_rates: [y]f32) (yield_days: [y]i32) : [q]f32 =
  let options = flat32.H.options strikes maturities expiries term_units term_steps a sigma types
  in flat32.price_chunked default_chunk_width yield_rates yield_days options
