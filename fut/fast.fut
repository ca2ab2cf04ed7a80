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
  -- zero, subnormal, infinite or NaN values, which are left alone).  Branch-free: inside a
  -- workgroup an `if` on a scalar costs barriers.
  def exponent (s: real) : i32 =
    let e = i32.u64 ((f64.to_bits (R.to_f64 s) >> 52) & 0x7ff)
    in i32.bool (e != 0) * i32.bool (e != 0x7ff) * (e - 1023)

  -- | The coefficient tables of one tree in the window |j| <= h (index k = j + h + 1).  Forward
  -- gather of node k: G_m1, G_0, G_p1 on nodes k-1, k, k+1, and at the edge nodes j = -jmax+2
  -- (resp. jmax-2) G_m2 (resp. G_p2) on node k-2 (k+2), the second branch of the edge node
  -- -jmax (jmax); those two are scalars, as one node each uses them.  Backward expectation of
  -- node k: B_u, B_m, B_d on its destinations (up, mid, down), k+1, k, k-1 shifted by +1 at
  -- -jmax and -1 at jmax.
  type gathers [w] = {G_m2: real, G_m1: [w]real, G_0: [w]real, G_p1: [w]real, G_p2: real}
  type expectations [w] = {B_u: [w]real, B_m: [w]real, B_d: [w]real}

  def window (t: H.tree) : i64 = i64.min t.jmax (i64.max t.n 1)

  -- | Levels are held in `w` >= 2h+3 nodes: node j at index k = j + h + 1, so that the nodes
  -- |j| <= h have a neighbour on each side inside the array (index 0 and 2h+2 are padding, always
  -- zero or never live) and no read needs a bounds test.
  def centre (h: i64) : i64 = h + 1

  -- | The forward tables (nodes outside |j| <= h get zeros).
  def gathers_of (t: H.tree) (h: i64) (w: i64) : gathers [w] =
    let jmax = t.jmax
    let gather (k: i64) (s: i64) : real =
      let j = k - centre h
      let src = j + s
      in if j < -h || j > h || src < -h || src > h || src < -jmax || src > jmax then zero
         else H.level_weight t.dr t.dt j R.* L.branch_probability t.M jmax src (-s)
    in {G_m2 = gather (centre h + 2 - jmax) (-2), G_m1 = tabulate w (\k -> gather k (-1)),
        G_0 = tabulate w (\k -> gather k 0), G_p1 = tabulate w (\k -> gather k 1),
        G_p2 = gather (centre h + jmax - 2) 2}

  -- | The backward tables, likewise.
  def expectations_of (t: H.tree) (h: i64) (w: i64) : expectations [w] =
    let expect (k: i64) : (real, real, real) =
      let j = k - centre h
      in if j < -h || j > h then (zero, zero, zero)
         else let (pu, pm, pd) = L.probabilities t.M t.jmax j
              let x = H.level_weight t.dr t.dt j
              in (x R.* pu, x R.* pm, x R.* pd)
    let (B_u, B_m, B_d) = unzip3 (tabulate w expect)
    in {B_u, B_m, B_d}

  -- | Node k of the next forward level (`at` reads this level).  The edge terms are branch-free:
  -- a node that takes no second branch (its weight zero) reads itself there.  (With jmax = 2 the
  -- centre node takes both.)
  def forward_node [w] (tb: gathers [w]) (h: i64) (jmax: i64) (at: i64 -> real) (k: i64) : real =
    let j = k - centre h
    let low = h == jmax && j == 2 - jmax
    let high = h == jmax && j == jmax - 2
    let (low_weight, low_source) = if low then (tb.G_m2, k - 2) else (zero, k)
    let (high_weight, high_source) = if high then (tb.G_p2, k + 2) else (zero, k)
    let (below, here, above) = (at (k - 1), at k, at (k + 1))
    let (second_low, second_high) = (at low_source, at high_source)
    in R.(tb.G_m1[k] * below + tb.G_0[k] * here + tb.G_p1[k] * above
          + low_weight * second_low + high_weight * second_high)

  -- | Node k of the previous backward level (`at` reads the level after it).
  def backward_node [w] (tb: expectations [w]) (h: i64) (jmax: i64) (at: i64 -> real) (k: i64) : real =
    let j = k - centre h
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

  -- | One option priced on a level array of size w >= 2 h + 3 (h = window t).
  -- Written with whole-level operations (tabulate, reduce) and no branch that returns an array
  -- (Futhark's GPU backends cannot allocate per-thread arrays of varying size under one), so
  -- that the same code is the sequential per-option loop on the CPU and one workgroup's
  -- parallel level on the GPU.
  def price_one [y] (w: i64) (rates: [y]real) (days: [y]i32) (o: H.option) : real =
    let t = H.tree_of o
    let n = i64.max t.n 1
    let jmax = t.jmax
    let h = window t
    let tg = gathers_of t h w
    let e = t.expiry_step
    let pays = e < n  -- the payoff step is one of the backward pass's steps 0..n-1
    let c = centre h
    -- Only live nodes read, and they read inside the array (see `centre`).
    let at (A: [w]real) (k: i64) : real = A[k]
    -- Is node k live at a level whose live nodes are |j| <= live?  (One unsigned comparison.)
    let is_live (live: i64) (k: i64) = u64.i64 (k - c + live) <= u64.i64 (2 * live)
    -- One forward step from level m (x: the power of two the new level is scaled down by).
    let forward_step (T: [w]real) (m: i64) (x: i32) : [w]real =
      let live = i64.min (m + 1) jmax
      in tabulate w (\k -> if is_live live k then flushed (rescaled x (forward_node tg h jmax (at T) k)) else zero)
    -- `count` forward steps from level m0 (T scaled by 2^-scale): fifteen plain steps, then one that
    -- rescales by the power of two of the centre node, so that values stay in range.
    let forward (T: [w]real, scale: i32) (m0: i64) (count: i64) : ([w]real, i32) =
      let (T, scale) =
        loop (T, scale) for b < count / 16 do
          let m = m0 + 16 * b
          let T = loop T for c < 15 do forward_step T (m + c) 0
          let x = exponent T[c]
          in (forward_step T (m + 15) x, scale + x)
      let m = m0 + 16 * (count / 16)
      in (loop T for c < count % 16 do forward_step T (m + c) 0, scale)
    -- The sums of levels e-1 and n-1 give D_e and D_n (D_m = P_m / sum(level m-1), the sums
    -- carrying their scale 2^scale); a level sum is taken twice per option, not per step.
    let p = if pays then i64.max e 1 else n
    let T0 = tabulate w (\k -> if k == c then one else zero)
    let (T_e, scale_e) = forward (T0, 0i32) 0 (p - 1)
    -- (Sequential sums: a `reduce` would need one more level of local memory on the GPU.)
    let sum_level (A: [w]real) = loop s = zero for k < w do s R.+ A[k]
    let sum_e = sum_level T_e
    let (T_n, scale_n) = forward (T_e, scale_e) (p - 1) (n - p)
    let sum_n = sum_level T_n
    let D_of (m: i64) (s: real) (sc: i32) =
      if m == 0 then one else R.ldexp (discount_at rates days o t m R./ s) (-sc)
    let D_n = D_of n sum_n scale_n
    let D_e = if pays then D_of e sum_e scale_e else D_n
    -- Backward: U_n = 100, levels n-1 .. 0 (scaled by 2^-scale).  One step from level i+1 to i;
    -- `pay`: apply the payoff to the true values (D_n / D_e) 2^scale U_e.
    let tb = expectations_of t h w
    let backward_step (U: [w]real) (i: i64) (x: i32) (pay: bool) (to_true: real) : [w]real =
      let live = i64.min i jmax
      in tabulate w (\k -> if !(is_live live k) then zero
                           else let v = rescaled x (backward_node tb h jmax (at U) k)
                                in if pay then H.payoff o (to_true R.* v) else v)
    -- `count` steps down from level i0, rescaled like the forward pass.
    let backward (U: [w]real, scale: i32) (i0: i64) (count: i64) : ([w]real, i32) =
      let (U, scale) =
        loop (U, scale) for b < count / 16 do
          let i = i0 - 16 * b
          let U = loop U for c < 15 do backward_step U (i - 1 - c) 0 false zero
          let x = exponent U[c]
          in (backward_step U (i - 16) x false zero, scale + x)
      let i = i0 - 16 * (count / 16)
      in (loop U for c < count % 16 do backward_step U (i - 1 - c) 0 false zero, scale)
    -- Levels n-1 .. top+1, then level top (= e, where the payoff applies, if the option pays),
    -- then top-1 .. 0 on true values.
    -- (U0 is written to depend on the option: a `replicate` would be hoisted out of the
    -- workgroup's map and the whole backward pass would run in global memory.)
    let top = if pays then e else 0
    let U0 = tabulate w (\k -> if i64.abs (k - c) <= h then R.f64 FACE_VALUE else zero)
    let (U, scale) = backward (U0, 0i32) n (n - 1 - top)
    let U = backward_step U top 0 pays (R.ldexp (D_n R./ D_e) scale)
    let (U, scale) = backward (U, if pays then 0 else scale) top top
    in R.ldexp (D_e R.* U[c]) scale

  -- | Options one per map element, each on its own window (the CPU shape).
  def prices [q] [y] (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                     (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                     (types: [q]i32) (rates: [y]real) (days: [y]i32) : [q]real =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in map (\o -> price_one (2 * window (H.tree_of o) + 3) rates days o) options

  -- | Options whose windows fit w nodes, one per workgroup (the GPU shape).
  def grouped [q] [y] (w: i64) (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                      (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                      (types: [q]i32) (rates: [y]real) (days: [y]i32) : [q]real =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in #[unsafe] #[incremental_flattening(only_intra)] map (price_one w rates days) options
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

-- | `w`: the common level width (at least 2 min(jmax, n) + 3 of every option: the window and a
-- padding node on each side).
entry grouped64 [q] [y] (w: i64) (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                        (types: [q]i32) (rates: [y]f64) (days: [y]i32) : [q]f64 =
  fast64.grouped w strikes maturities expiries term_units term_steps a sigma types rates days

entry grouped32 [q] [y] (w: i64) (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                        (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                        (types: [q]i32) (rates: [y]f32) (days: [y]i32) : [q]f32 =
  fast32.grouped w strikes maturities expiries term_units term_steps a sigma types rates days
