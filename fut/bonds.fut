-- Coupon bonds with an embedded call or put (issue 7, the ARRAY'21 paper's instrument) on a
-- Hull-White trinomial tree: one bond per map element.
--
-- Implements docs/paper-instrument.md §2-§9 (the spec), with the project's decisions: quirks
-- Q1 (a cash flow is added to the nodes |j| <= h only), Q2 (accrued interest uses the previous
-- date's coupon), Q4 (the Bermudan grid follows the cash-flow pointer as it is at the start of
-- a step) and Q5 are kept, and +-inf are mapped as in the spec; Q3 is not: a bond's cash-flow
-- pointer never moves below its own first cash flow, so every bond is priced from its own data.
-- Inputs are validated in Python beforehand (python/trinom/bonds), so nothing is re-checked.
-- The lattice (geometry, probabilities, the forward gather, the backward expectation, the
-- curve lookup) is fut/lattice.fut's under the paper's convention (360-day years, geometry
-- in f64, (3j) M); this file adds the bond: spread, discount tables, cash flows, exercise.
--
-- Floating point follows the spec operation by operation: the forward pass gathers each node
-- from its sources in increasing source order and sums alpha's weights sequentially (loops,
-- not `reduce`), so float64 reproduces the C++ (and the paper's out64) to the last bit.  The
-- module is applied to f64 and f32.  For f32 it follows the paper's float build (§9), which
-- calls the C library's double exp/log/sqrt on float operands: V and dr are f64; M, mdrdt, g,
-- x_j, E_i and alpha are computed in f64 and rounded to f32 where the C++ stores a `real`;
-- P_i = exp(-R(t_i) t_i) is f64 of an f32 product; everything else (the curve lookup, the
-- probabilities, Q, node values, accrued interest) is f32.  bonds32 thereby reproduces the
-- paper's out32 on all 20 sample bonds (to its 9 printed decimals).  For f64 every widening
-- (`d`) and rounding (`r`) is the identity.
--
-- Entry points: `bonds64` and `bonds32` take the spec's 19 arrays (§1; integers as i32, reals as
-- f64 resp. f32) and return one price per bond, in input order:
--   term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons spreads
--   types strikes first_exercise last_exercise frequencies curve_index curve_terms curve_rates
--   curve_days
-- `bonds_listed64` and `bonds_listed32` (the contract with python/trinom/backends/bonds_futhark.py)
-- take three more, the bonds' listed exercise points (docs/paper-instrument.md, "Listed exercise
-- points"): exercise_counts (per bond), exercise_steps and exercise_prices (the bonds' lists
-- concatenated; empty where no bond has any).  At a listed step the value is capped (call) or
-- floored (put) at that point's dirty price, after the window's exercise of the step.
--
-- Tests: futhark test --backend=c fut/bonds.fut; data/bonds-*.in/.out are written by `make data`
-- (the sample's .out is the paper's out64, the others our NumPy reference's prices).
-- ==
-- entry: bonds64
-- compiled input @ ../data/bonds-sample.in output @ ../data/bonds-sample.out
-- compiled input @ ../data/bonds-0_UNIFORM_50.in output @ ../data/bonds-0_UNIFORM_50.out
-- compiled input @ ../data/bonds-1_RAND_50.in output @ ../data/bonds-1_RAND_50.out
-- compiled input @ ../data/bonds-2_RANDCONSTHEIGHT_50.in output @ ../data/bonds-2_RANDCONSTHEIGHT_50.out
-- compiled input @ ../data/bonds-3_RANDCONSTWIDTH_50.in output @ ../data/bonds-3_RANDCONSTWIDTH_50.out
-- compiled input @ ../data/bonds-4_SKEWED_50.in output @ ../data/bonds-4_SKEWED_50.out
-- compiled input @ ../data/bonds-5_SKEWEDCONSTHEIGHT_50.in output @ ../data/bonds-5_SKEWEDCONSTHEIGHT_50.out
-- compiled input @ ../data/bonds-6_SKEWEDCONSTWIDTH_50.in output @ ../data/bonds-6_SKEWEDCONSTWIDTH_50.out

import "constants"
import "lattice"

module coupon_bond (R: float) = {
  module L = lattice paper_convention R
  type real = R.t

  -- | The spec's "double" (f64) and "real" (R) worlds: `d` widens, `r` rounds to R.
  def d (x: real) : f64 = L.d x
  def r (x: f64) : real = L.r x

  def zero : real = L.zero

  -- | Where the spec maps +inf and -inf (§6.6): the largest finite and the smallest positive
  -- normal number of R.
  def max_finite : real = if R.num_bits == 32 then R.f64 3.4028234663852886e38 else R.f64 1.7976931348623157e308
  def min_normal : real = if R.num_bits == 32 then R.f64 1.1754943508222875e-38 else R.f64 2.2250738585072014e-308

  -- | A bond's per-valuation constants (§2): the lattice's geometry under the paper's
  -- convention, computed in f64 as in the NumPy reference (python/trinom/lattice.py), so
  -- that f32 and f64 price the same tree: the height n is the bond's last cash-flow step,
  -- which validation makes equal to ceil((term_steps u) T) in f64 (from T in f32 the product
  -- can round up past an integer: 13/12 years gives 13.0000005 steps), and
  -- jmax = trunc(-0.184 / M) + 1 uses M in f64.  The reals follow §9: V and dr in f64; M,
  -- mdrdt = -dr dt and the spread factor g computed in f64 and rounded to R.
  type geometry = {n: i64, jmax: i64, dt: real, M: real, mdrdt: real, g: real}

  def geometry_of (term_unit: i32) (term_steps: i32) (a: real) (sigma: real) (height: i64)
                  (spread: real) : geometry =
    let lat = L.geometry term_unit term_steps a sigma height
    let dt = lat.dt
    let mdrdt = r (f64.neg lat.dr * d dt)
    let g = r (f64.exp (d (R.neg (spread R./ R.f64 SPREAD_UNIT) R.* dt)))
    in {n = lat.n, jmax = lat.jmax, dt, M = lat.M, mdrdt, g}

  -- | Step i's exercise with its listed point, if it has one (`listed`, at `listed_price`): the
  -- window's flag and price (strike plus accrued interest) become the step's flag and its one
  -- bound, a call's lower and a put's higher (window and point are on the same side).
  def with_listed (kind: i32) (exercise: bool) (price: real) (listed: bool) (listed_price: real) : (bool, real) =
    if !listed then (exercise, price)
    else if !exercise then (true, listed_price)
    else if kind == CALL then (true, if listed_price R.< price then listed_price else price)
    else (true, if listed_price R.> price then listed_price else price)

  -- | Where a bond's walk over its listed steps starts (the index of the last point, -1: none): below
  -- the maturity step n, which the backward pass never exercises (the window is not exercised there
  -- either: step n holds the maturity cash flow).
  def listed_start (step_of: i64 -> i64) (E: i64) (n: i64) : i64 =
    loop q = E - 1 while q >= 0 && step_of q >= n do q - 1

  -- | The zero rate R(t) of §4 on the curve whose `count` points start at `off` (the
  -- lattice's lookup: flat outside the points, linear in days between them).
  def curve_rate [l] (rates: [l]real) (days: [l]i32) (off: i64) (count: i64) (term_unit: i32)
                     (t: real) : real =
    L.rate_at rates days off count term_unit t

  -- | The per-level tables of §3, by node index (index 0 is j = -jmax): x_j = exp(mdrdt j)
  -- and the branching probabilities (pu, pm, pd).
  def tables (geo: geometry) : ([]real, []real, []real, []real) =
    let w = L.width geo.jmax
    let x = tabulate w (\t -> r (f64.exp (d (geo.mdrdt R.* R.i64 (t - geo.jmax)))))
    let (pu, pm, pd) = unzip3 (tabulate w (\t -> L.probabilities geo.M geo.jmax (t - geo.jmax)))
    in (x, pu, pm, pd)

  -- | Forward pass (§5): E_i = exp(-alpha_i dt) for i = 0 .. n-1 (E_n is never used, Q6);
  -- m = max n 1.
  -- Q_i of node t is gathered from the sources t-2 .. t+2 in increasing order (the order of
  -- the C++ scatter), and alpha's sum A_i runs sequentially from the lowest node.
  def forward [w] (m: i64) (geo: geometry) (x: [w]real) (pu: [w]real) (pm: [w]real) (pd: [w]real)
                  (rate_at: real -> real) : [m]real =
    let jmax = geo.jmax
    let dt = geo.dt
    let E0 = r (f64.exp (f64.neg (d (rate_at dt)) * d dt))
    let Es = replicate m zero with [0] = E0
    let Q = tabulate w (\t -> if t == jmax then R.i32 1 else zero)
    let (_, Es) =
      loop (Q, Es) for i_ < geo.n - 1 do
        let i = i_ + 1
        let h = i64.min i jmax
        let E = Es[i - 1]
        let Qx = map2 (\q xj -> (q R.* E) R.* xj) Q x
        let prob (src: i64) (step: i64) : real =
          L.pick_probability jmax src step (pu[src + jmax], pm[src + jmax], pd[src + jmax])
        let Q = tabulate w (\t -> if t < jmax - h || t > jmax + h then zero
                                  else L.forward_node jmax prob (\src -> Qx[src + jmax]) (t - jmax))
        let A = loop A = zero for k < 2 * h + 1 do A R.+ Q[jmax - h + k] R.* x[jmax - h + k]
        let ti = R.i64 (i + 1) R.* dt
        let P = f64.exp (d (R.neg (rate_at ti) R.* ti))
        let alpha = r (f64.log (d A / P) / d dt)
        let Es[i] = r (f64.exp (f64.neg (d alpha) * d dt))
        in (Q, Es)
    in Es

  -- | A flow paid between steps i and i+1 (docs/paper-instrument.md, "Flows between steps"): `flows_at i E_i t c`
  -- is its value c0 + c1 x_j at step i from node j, as two f64 coefficients.
  type^ timed_flows = i64 -> real -> f64 -> real -> (f64, f64)

  -- | Hull-White's zero-coupon bond price fitted to the tree: lambda = B(t - t_i) / B(dt) weighs the tree's own
  -- one-step discount x_j against a constant (exp(-B r) to first order in the node's rate), and the level makes
  -- the tree price the curve's P(0, t) (with the spread) exactly: step i's Arrow-Debreu prices sum to P(0, t_i),
  -- their products with x_j to P(0, t_i+1) / E_i.  `zero_price t` is P(0, t) at a step's time t (in R, as the
  -- forward pass), `zero_price_at` at a flow's time (f64).
  def timed_flow (a: f64) (dt: f64) (spread: f64) (zero_price: real -> f64) (zero_price_at: f64 -> f64)
                 (geo: geometry) (i: i64) (e: real) (t: f64) (c: real) : (f64, f64) =
    let tau = t - f64.i64 i * dt
    let lambda = (1 - f64.exp (-a * tau)) / (1 - f64.exp (-a * dt))
    let before = if i == 0 then 1 else zero_price (R.i64 i R.* geo.dt)
    let after = zero_price (R.i64 (i + 1) R.* geo.dt) / d e
    let level = zero_price_at t * f64.exp (-spread * tau) / ((1 - lambda) * before + lambda * after)
    let amount = d c * level
    in (amount * (1 - lambda), amount * lambda)

  -- | Backward pass (§6) from the maturity to the root; returns the root's value.  The
  -- bond's cash flows are `steps`, `repayments`, `coupons` (its own slice: the pointer p never
  -- leaves it, so Q3 cannot occur), its listed exercise points `listed_steps`, `listed_prices`
  -- (walked from the last down by the pointer q); `Es` comes from `forward`.
  def backward [w] [m] [K] [E] (geo: geometry) (x: [w]real) (pu: [w]real) (pm: [w]real) (pd: [w]real)
                           (Es: [m]real) (steps: [K]i64) (times: [K]f64) (repayments: [K]real) (coupons: [K]real)
                           (kind: i32) (strike: real) (first_ex: i64) (last_ex: i64) (frequency: i64)
                           (listed_steps: [E]i64) (listed_prices: [E]real) (listed_times: [E]f64)
                           (flows_at: timed_flows) : real =
    let n = geo.n
    let jmax = geo.jmax
    let flow (p: i64) : real = repayments[p] R.+ coupons[p]
    -- Step n: the maturity cash flow on every node, then the pointer moves to the one before (a maturity flow
    -- with a time, paid before step n, stays: step n - 1 takes it as a flow between steps).
    let p = K - 1
    let timed_last = !(f64.isnan times[p])
    let Val = replicate w (if timed_last then zero else flow p)
    let left = if timed_last then K else K - 1
    let S = steps[p]
    let (p, S) = if !timed_last && p > 0 && S <= n && left > 0 then (p - 1, steps[p - 1]) else (p, S)
    let q = listed_start (\k -> listed_steps[k]) E n
    let (Val, _, _, _, _) =
      loop (Val, p, S, left, q) for i_ < n do
        let i = n - 1 - i_
        let h = i64.min i jmax
        let e = Es[i]
        -- The exercise test uses S as it is before this step's cash flow (Q4).
        let exercise = first_ex <= i && i <= last_ex && (S - i) % frequency == 0
        -- Step i's listed point, and its date where it is between steps i and i+1 (NaN: at the step).
        let listed = q >= 0 && listed_steps[q] == i
        let date = if listed then listed_times[q] else f64.nan
        -- The cash flows of step i+1: one on the step on the nodes |j| <= h only (Q1); those with a time
        -- (several may share a step) valued at step i on every node, c0 + c1 x_j (`flows_at`), before the step's
        -- exercise, or after it (a0 + a1 x_j) where paid by the listed point's date.
        let (stepped, added, p, S, left, (c0, c1), (a0, a1)) =
          loop (stepped, added, p, S, left, (c0, c1), (a0, a1)) = (false, zero, p, S, left, (0f64, 0f64), (0f64, 0f64))
          while i == S - 1 && left > 0 do
            let c = flow p
            let (stepped, added, before, after) =
              if f64.isnan times[p] then (true, c, (c0, c1), (a0, a1))
              else let (k0, k1) = flows_at i e times[p] c
                   in if times[p] <= date then (stepped, added, (c0, c1), (a0 + k0, a1 + k1))
                      else (stepped, added, (c0 + k0, c1 + k1), (a0, a1))
            let (p, S) = if p > 0 && S <= n then (p - 1, steps[p - 1]) else (p, S)
            in (stepped, added, p, S, left - 1, before, after)
        let Val = if !stepped then Val
                  else tabulate w (\t -> if t < jmax - h || t > jmax + h then Val[t] else Val[t] R.+ added)
        -- Accrued interest since the last cash-flow date, with that date's coupon (Q2).
        let AI = if exercise && S != 0 && left > 0
                 then let next = steps[i64.min (p + 1) (K - 1)]
                      let span = R.i64 (next - S)
                      let remaining = R.i64 (i64.max (next - i) 0)
                      in ((span R.- remaining) R./ span) R.* coupons[p]
                 else zero
        -- A listed point on its date between steps pays its price then: its value from each node, as a flow's.
        let dated = listed && !(f64.isnan date)
        let (e0, e1) = if dated then flows_at i e date listed_prices[q] else (0f64, 0f64)
        let (exercise, exercise_price) =
          with_listed kind exercise (strike R.+ AI) (listed && !dated) (if listed then listed_prices[q] else zero)
        let q = if listed then q - 1 else q
        let bound (v: real) (price: real) : real =
          if kind == CALL then (if v R.> price then price else v) else (if price R.> v then price else v)
        let Val = tabulate w (\t ->
                    if t < jmax - h || t > jmax + h then zero
                    else let ev = L.expected_value jmax (pu[t], pm[t], pd[t]) (\jj -> Val[jj + jmax]) (t - jmax)
                         let cont = ev R.* ((e R.* x[t]) R.* geo.g)
                         let cont = if c0 == 0 && c1 == 0 then cont else cont R.+ r (c0 + c1 * d x[t])
                         let v = if !exercise then cont else bound cont exercise_price
                         let v = if dated then bound v (r (e0 + e1 * d x[t])) else v
                         let v = if a0 == 0 && a1 == 0 then v else v R.+ r (a0 + a1 * d x[t])
                         in if R.isinf v then (if v R.> zero then max_finite else min_normal) else v)
        in (Val, p, S, left, q)
    in Val[jmax]

  -- | Prices of all bonds, in input order (the 19 arrays of §1, then the listed exercise points).
  -- `maturities` is not read: the height comes from the cash-flow schedule (see `geometry_of`).
  def prices [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]real) (sigma: [n]real)
                                 (_maturities: [n]real) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                 (repayments: [k]real) (coupons: [k]real) (spreads: [n]real) (types: [n]i32)
                                 (strikes: [n]real) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                 (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                 (curve_rates: [l]real) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                 (exercise_steps: [e]i32) (exercise_prices: [e]real) (cashflow_times: [k]f64)
                                 (exercise_times: [e]f64) : [n]real =
    let exclusive_scan [m] (xs: [m]i32) : [m]i64 =
      map2 (-) (scan (+) 0 (map i64.i32 xs)) (map i64.i32 xs)
    let cf_offsets = exclusive_scan cashflows
    let ex_offsets = exclusive_scan exercise_counts
    let yc_offsets = exclusive_scan curve_terms
    in map (\v ->
              let (off, K) = (cf_offsets[v], i64.i32 cashflows[v])
              let steps = map i64.i32 cashflow_steps[off:off + K]
              let geo = geometry_of term_units[v] term_steps[v] a[v] sigma[v] steps[K - 1] spreads[v]
              let (x, pu, pm, pd) = tables geo
              let cv = i64.i32 curve_index[v]
              let rate_at = curve_rate curve_rates curve_days yc_offsets[cv] (i64.i32 curve_terms[cv])
                                       term_units[v]
              let Es = forward (i64.max geo.n 1) geo x pu pm pd rate_at
              let (eoff, E) = (ex_offsets[v], i64.i32 exercise_counts[v])
              let zero_price (t: real) = f64.exp (d (R.neg (rate_at t) R.* t))
              let zero_price_at (t: f64) = f64.exp (f64.neg (d (rate_at (r t))) * t)
              let flows_at = timed_flow (d a[v]) (d geo.dt) (d spreads[v] / SPREAD_UNIT) zero_price zero_price_at geo
              in backward geo x pu pm pd Es steps cashflow_times[off:off + K] repayments[off:off + K]
                          coupons[off:off + K] types[v] strikes[v] (i64.i32 first_exercise[v])
                          (i64.i32 last_exercise[v]) (i64.max 1 (i64.i32 frequencies[v]))
                          (map i64.i32 exercise_steps[eoff:eoff + E]) exercise_prices[eoff:eoff + E]
                          exercise_times[eoff:eoff + E] flows_at)
           (iota n)
}

module bonds_f64 = coupon_bond f64
module bonds_f32 = coupon_bond f32

-- | The paper's 19 arrays (no listed exercise points): the file format's contract and the test above.
entry bonds64 [n] [k] [c] [l] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                              (maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                              (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32)
                              (strikes: [n]f64) (first_exercise: [n]i32) (last_exercise: [n]i32)
                              (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                              (curve_rates: [l]f64) (curve_days: [l]i32) : [n]f64 =
  bonds_f64.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days (replicate n 0) (replicate 0 0) (replicate 0 0) (replicate k f64.nan) (replicate 0 0)

entry bonds32 [n] [k] [c] [l] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                              (maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                              (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32)
                              (strikes: [n]f32) (first_exercise: [n]i32) (last_exercise: [n]i32)
                              (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                              (curve_rates: [l]f32) (curve_days: [l]i32) : [n]f32 =
  bonds_f32.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days (replicate n 0) (replicate 0 0) (replicate 0 0) (replicate k f64.nan) (replicate 0 0)

-- | The 19 arrays and the listed exercise points (what python/trinom/backends/bonds_futhark.py calls).
entry bonds_listed64 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                         (maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                         (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32)
                                         (strikes: [n]f64) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                         (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                         (curve_rates: [l]f64) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                         (exercise_steps: [e]i32) (exercise_prices: [e]f64) : [n]f64 =
  bonds_f64.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days exercise_counts exercise_steps exercise_prices (replicate k f64.nan)
                   (replicate e f64.nan)

entry bonds_listed32 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                         (maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                         (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32)
                                         (strikes: [n]f32) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                         (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                         (curve_rates: [l]f32) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                         (exercise_steps: [e]i32) (exercise_prices: [e]f32) : [n]f32 =
  bonds_f32.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days exercise_counts exercise_steps exercise_prices (replicate k f64.nan)
                   (replicate e f64.nan)

-- | The 19 arrays, the listed exercise points, the cash flows' times and the listed points' dates in years (f64; NaN:
-- on its step):
-- what python/trinom/backends/bonds_futhark.py calls for a book with flows between steps.
entry bonds_timed64 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                        (maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                        (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32)
                                        (strikes: [n]f64) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                        (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                        (curve_rates: [l]f64) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                        (exercise_steps: [e]i32) (exercise_prices: [e]f64)
                                        (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f64 =
  bonds_f64.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days exercise_counts exercise_steps exercise_prices cashflow_times exercise_times

entry bonds_timed32 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                        (maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                        (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32)
                                        (strikes: [n]f32) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                        (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                        (curve_rates: [l]f32) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                        (exercise_steps: [e]i32) (exercise_prices: [e]f32)
                                        (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f32 =
  bonds_f32.prices term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons
                   spreads types strikes first_exercise last_exercise frequencies curve_index curve_terms
                   curve_rates curve_days exercise_counts exercise_steps exercise_prices cashflow_times exercise_times
