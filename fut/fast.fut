-- The fast formulation of the Hull-White trinomial pricer (issue 13): the arithmetic of the
-- `cuda` backend, on fut/lattice.fut's lattice, for every Futhark target.
--
-- Exact reorganisation of the thesis' recursions (docs/model.md §1.12); only the rounding
-- differs (float64 within 1e-12 of the reference):
--
-- * The level discount exp(-alpha_i dt) is the same for every node of a level, so it is
--   factored out of both passes.  The node discount that remains, w_j = exp(-j dr dt), and the
--   branching probabilities depend on the node index only: they are tabulated once per tree
--   and folded together into gather (forward) and expectation (backward) coefficients.
--   No `exp` per node and step, no five-way branch per node: three multiply-adds.
-- * Forward: T_0 = delta_0, T_{m+1}[k] = sum_s G_s[k] T_m[k+s] (G = w times the probability of
--   the branch k+s -> k), and the curve fit needs only the level sums: the cumulative level
--   discount D_m = prod_{i<m} exp(-alpha_i dt) is P_m / sum_j T_{m-1}[j].
-- * Backward (options): U_n = 100, U_i[j] = w_j (pu U_{i+1}[up] + pm U_{i+1}[mid] + pd U_{i+1}[down]);
--   the true values are C_i = (D_n / D_i) U_i, so the payoff at step e applies to
--   (D_n / D_e) U_e, after which U restarts from the payoff values and the price is D_e U_0[0].
--   Two level sums (steps e-1 and n-1) and three curve lookups per option.
-- * Only the window |j| <= min(jmax, n) is held (nodes beyond |j| = n are never reached), and
--   at level i only |j| <= min(i, jmax) is live.
-- * Values are rescaled by exact powers of two every 16 steps, so they stay in range.
--
-- Two shapes of the same arithmetic (`tree` below is shared):
--   options64/options32: one option per map element, each with its own window (the CPU shape:
--     c and multicore; also the GPU's one-thread-per-option fallback).
--   grouped64/grouped32: a class of options whose windows fit one common width W (a size the
--     caller picks, options binned by width as `cuda` does), one option per workgroup with the
--     level in local memory: Futhark's intra-group parallelism, forced by attribute.
-- Entry arguments are the thesis' ten arrays (strikes .. types, yield rates, yield days).
--
-- ==
-- entry: options64
-- compiled input @ ../data/book.in output @ ../data/book.out
-- compiled input @ ../data/options-1000.in output @ ../data/options-1000.out
-- compiled input @ ../data/0_UNIFORM_1000.in output @ ../data/0_UNIFORM_1000.out
-- compiled input @ ../data/1_RAND_1000.in output @ ../data/1_RAND_1000.out
-- compiled input @ ../data/2_RANDCONSTHEIGHT_1000.in output @ ../data/2_RANDCONSTHEIGHT_1000.out
-- compiled input @ ../data/3_RANDCONSTWIDTH_1000.in output @ ../data/3_RANDCONSTWIDTH_1000.out

import "constants"
import "lattice"
import "options"

module fast (R: float) = {
  module H = zcb_option R
  module L = H.L
  type real = R.t
  def zero = L.zero
  def one = L.one

  -- | Rescaling: the power-of-two exponent that brings a positive normal value near 1 (0 for
  -- zero, subnormal, infinite or NaN values, which are left alone).
  def exponent (s: real) : i32 =
    let e = i32.u64 ((f64.to_bits (R.to_f64 s) >> 52) & 0x7ff)
    in if e == 0 || e == 0x7ff then 0 else e - 1023

  -- | One option's tree in the window |j| <= h (index k = j + h): the geometry, the payoff step
  -- and the coefficient tables.  Forward gather of node k: G_m1, G_0, G_p1 on nodes k-1, k, k+1,
  -- and at the edge nodes j = -jmax+2 (resp. jmax-2) G_m2 (resp. G_p2) on node k-2 (k+2), the
  -- second branch of the edge node -jmax (jmax).  Backward expectation of node k: B_u, B_m, B_d
  -- on its destinations (up, mid, down), k+1, k, k-1 shifted by `shift` (+1 at -jmax, -1 at jmax).
  type tables [w] = {G_m2: [w]real, G_m1: [w]real, G_0: [w]real, G_p1: [w]real, G_p2: [w]real,
                     B_u: [w]real, B_m: [w]real, B_d: [w]real}

  def window (t: H.tree) : i64 = i64.min t.jmax (i64.max t.n 1)

  -- | The tables of a tree over `w` nodes centred on index `h` (w >= 2h+1; nodes outside
  -- |j| <= h get zeros).
  def tables_of (t: H.tree) (h: i64) (w: i64) : tables [w] =
    let jmax = t.jmax
    let node_weight (j: i64) = H.level_weight t.dr t.dt j
    let gather (k: i64) (s: i64) : real =
      let j = k - h
      let src = j + s
      in if j < -h || j > h || src < -h || src > h || src < -jmax || src > jmax then zero
         else node_weight j R.* L.branch_probability t.M jmax src (-s)
    let expect (k: i64) : (real, real, real) =
      let j = k - h
      in if j < -h || j > h then (zero, zero, zero)
         else let (pu, pm, pd) = L.probabilities t.M jmax j
              let x = node_weight j
              in (x R.* pu, x R.* pm, x R.* pd)
    let (B_u, B_m, B_d) = unzip3 (tabulate w expect)
    in {G_m2 = tabulate w (\k -> gather k (-2)), G_m1 = tabulate w (\k -> gather k (-1)),
        G_0 = tabulate w (\k -> gather k 0), G_p1 = tabulate w (\k -> gather k 1),
        G_p2 = tabulate w (\k -> gather k 2), B_u, B_m, B_d}

  -- | Node k of the next forward level (`at` reads this level, zero outside the window).
  def forward_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (at: i64 -> real) (k: i64) : real =
    let j = k - h
    let (below, above) = (at (k - 1), at (k + 1))
    let base = R.(tb.G_m1[k] * below + tb.G_0[k] * at k + tb.G_p1[k] * above)
    let base = if j == 2 - jmax && h == jmax then base R.+ tb.G_m2[k] R.* at (k - 2) else base
    in if j == jmax - 2 && h == jmax then base R.+ tb.G_p2[k] R.* at (k + 2) else base

  -- | Node k of the previous backward level (`at` reads the level after it).
  def backward_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (at: i64 -> real) (k: i64) : real =
    let j = k - h
    let c = if j == -jmax then k + 1 else if j == jmax then k - 1 else k
    let (up, down) = (at (c + 1), at (c - 1))
    in R.(tb.B_u[k] * up + tb.B_m[k] * at c + tb.B_d[k] * down)

  -- | P_m = exp(-r(t_m) t_m), the curve's discount factor at step m (t_m = m dt, in R as the thesis).
  def discount_at [y] (rates: [y]real) (days: [y]i32) (o: H.option) (t: H.tree) (m: i64) : real =
    let tm = R.i64 m R.* t.dt
    in R.exp (R.neg (H.rate_at rates days o.term_unit tm) R.* tm)

  -- | v times 2^-x (x = 0 on most steps: no rounding, no work).
  def rescaled (x: i32) (v: real) : real = if x == 0 then v else R.ldexp v (-x)

  -- | In f32, forward values below 2^-100 of a level normalised near 1 are flushed to zero: they
  -- cannot change a price at f32's precision, and as subnormals they would make the CPU targets
  -- several times slower (the tails of tall trees reach them).  The identity in f64.
  def flushed (v: real) : real =
    if R.num_bits == 32 && R.abs v R.< R.f64 7.888609052210118e-31 then zero else v

  -- | One option priced on a level array of size w >= 2 h + 1 (h = window t), centred at h.
  -- Written with whole-level operations (tabulate, reduce) and no branch that returns an array
  -- (Futhark's GPU backends cannot allocate per-thread arrays of varying size under one), so
  -- that the same code is the sequential per-option loop on the CPU and one workgroup's
  -- parallel level on the GPU.
  def price_one [y] (w: i64) (rates: [y]real) (days: [y]i32) (o: H.option) : real =
    let t = H.tree_of o
    let n = i64.max t.n 1
    let jmax = t.jmax
    let h = window t
    let tb = tables_of t h w
    let e = t.expiry_step
    let pays = e < n  -- the payoff step is one of the backward pass's steps 0..n-1
    let in_window (k: i64) = k >= 0 && k < w
    -- Forward: levels 0 .. n-1 (T is level m, scaled by 2^-scale); the sums of levels e-1 and
    -- n-1 give D_e and D_n; every 16 steps the next level is rescaled by the sum's power of two.
    let T0 = tabulate w (\k -> if k == h then one else zero)
    let (_, _, sum_e, scale_e, sum_n, scale_n) =
      loop (T, scale, sum_e, scale_e, sum_n, scale_n) = (T0, 0i32, one, 0i32, one, 0i32) for m < n do
        let wanted_e = pays && m == e - 1
        let s = if wanted_e || m == n - 1 || m % 16 == 15 then reduce (R.+) zero T else one
        let (sum_e, scale_e) = if wanted_e then (s, scale) else (sum_e, scale_e)
        let (sum_n, scale_n) = if m == n - 1 then (s, scale) else (sum_n, scale_n)
        let x = if m % 16 == 15 then exponent s else 0
        let live = i64.min (m + 1) jmax
        let T = tabulate w (\k -> let j = k - h
                                  in if j < -live || j > live then zero
                                     else flushed (rescaled x (forward_node tb h jmax
                                                                            (\i -> if in_window i then T[i] else zero) k)))
        in (T, scale + x, sum_e, scale_e, sum_n, scale_n)
    -- D_m = P_m / sum(level m-1); the sums carry their scale 2^scale.
    let D_of (m: i64) (s: real) (sc: i32) =
      if m == 0 then one else R.ldexp (discount_at rates days o t m R./ s) (-sc)
    let D_n = D_of n sum_n scale_n
    let D_e = if pays then D_of e sum_e scale_e else D_n
    -- Backward: U_n = 100, levels n-1 .. 0 (scaled by 2^-scale), the payoff at step e on the true
    -- values (D_n / D_e) U_e, after which U holds true values again.
    let U0 = replicate w (R.f64 FACE_VALUE)
    let (U, scale) =
      loop (U, scale) = (U0, 0i32) for ii < n do
        let i = n - 1 - ii
        let live = i64.min i jmax
        let x = if ii % 16 == 15 then exponent U[h] else 0
        let pay = pays && i == e
        let to_true = R.ldexp (D_n R./ D_e) (scale + x)
        let U = tabulate w (\k -> let j = k - h
                                  in if j < -live || j > live then zero
                                     else let v = rescaled x (backward_node tb h jmax
                                                                            (\q -> if in_window q then U[q] else zero) k)
                                          in if pay then H.payoff o (to_true R.* v) else v)
        in (U, if pay then 0 else scale + x)
    in R.ldexp (D_e R.* U[h]) scale

  -- | Options one per map element, each on its own window (the CPU shape).
  def prices [q] [y] (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                     (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                     (types: [q]i32) (rates: [y]real) (days: [y]i32) : [q]real =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in map (\o -> price_one (2 * window (H.tree_of o) + 1) rates days o) options

  -- | Options whose windows fit w nodes, one per workgroup (the GPU shape).
  def grouped [q] [y] (w: i64) (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                      (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                      (types: [q]i32) (rates: [y]real) (days: [y]i32) : [q]real =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in #[incremental_flattening(only_intra)] map (price_one w rates days) options
}

module fast64 = fast f64
module fast32 = fast f32

entry options64 [q] [y] (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                        (types: [q]i32) (rates: [y]f64) (days: [y]i32) : [q]f64 =
  fast64.prices strikes maturities expiries term_units term_steps a sigma types rates days

entry options32 [q] [y] (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                        (types: [q]i32) (rates: [y]f32) (days: [y]i32) : [q]f32 =
  fast32.prices strikes maturities expiries term_units term_steps a sigma types rates days

-- | `w`: the common window width (odd, at least 2 min(jmax, n) + 1 of every option).
entry grouped64 [q] [y] (w: i64) (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                        (types: [q]i32) (rates: [y]f64) (days: [y]i32) : [q]f64 =
  fast64.grouped w strikes maturities expiries term_units term_steps a sigma types rates days

entry grouped32 [q] [y] (w: i64) (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                        (types: [q]i32) (rates: [y]f32) (days: [y]i32) : [q]f32 =
  fast32.grouped w strikes maturities expiries term_units term_steps a sigma types rates days
