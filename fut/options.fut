-- European options on zero-coupon bonds (the thesis' instrument) on the Hull-White lattice
-- of fut/lattice.fut under the thesis' convention; used by trinom-basic.fut and
-- trinom-flat.fut.
--
-- `zcb_option R` is parameterised over the real type (f32 or f64).  Every formula is
-- evaluated in R, in the order of the thesis' sequential pricer and of the NumPy model
-- (python/trinom/lattice.py and curve.py), so that f64 prices match the reference outputs
-- to rounding and f32 prices match the thesis' float outputs.  See docs/model.md §1.3-1.9.
--
-- Per option: K = ceil(365/term_unit), n = int(term_steps*K*maturity), dt = K/term_steps,
-- V = sigma^2 (1 - exp(-2 a dt)) / (2a), dr = sqrt(3V), M = exp(-a dt) - 1,
-- jmax = int(-0.184/M) + 1, width = 2 jmax + 1 (the lattice's); nodes j in -jmax..jmax sit
-- at index j+jmax; the payoff applies at step int(expiry/dt).

import "constants"
import "lattice"

module zcb_option (R: float) = {
  module L = lattice thesis_convention R
  type real = R.t

  -- | One European option on a zero-coupon bond (the thesis' eight fields).
  type option = {strike: real, maturity: real, expiry: real, term_unit: i32,
                 term_steps: i32, a: real, sigma: real, kind: i32}

  -- | Per-option tree constants: the lattice's geometry (dr in R) and the payoff step.
  type tree = {n: i64, jmax: i64, dt: real, dr: real, M: real, expiry_step: i64}

  def zero : real = L.zero
  def one : real = L.one

  -- | An option that prices to zero instantly (used to pad arrays of options).
  def no_option : option =
    {strike = zero, maturity = zero, expiry = zero, term_unit = DAYS_IN_YEAR,
     term_steps = 1, a = one, sigma = one, kind = CALL}

  -- | The tree constants of an option (docs/model.md §1.3), computed in R.  dr is computed in
  -- R by the lattice and comes back exactly from its f64 widening.
  def tree_of (o: option) : tree =
    let g = L.geometry o.term_unit o.term_steps o.a o.sigma (L.height o.term_unit o.term_steps o.maturity)
    let expiry_step = R.to_i64 (o.expiry R./ g.dt)
    in {n = g.n, jmax = g.jmax, dt = g.dt, dr = R.f64 g.dr, M = g.M, expiry_step}

  def width (t: tree) : i64 = L.width t.jmax

  -- | Zero rate at t years on the thesis' single curve (the lattice's lookup).
  def rate_at [y] (rates: [y]real) (days: [y]i32) (term_unit: i32) (t: real) : real =
    L.rate_at rates days 0 y term_unit t

  -- | exp(-(alpha + j dr) dt): one step's discount factor at node j.
  def discount (alpha: real) (dr: real) (dt: real) (j: i64) : real =
    R.exp (R.neg (alpha R.+ R.i64 j R.* dr) R.* dt)

  -- | exp(-j dr dt): the weight of node j in the sum that fits the next alpha.
  def level_weight (dr: real) (dt: real) (j: i64) : real =
    R.exp (R.i64 (-j) R.* dr R.* dt)

  -- | The option's payoff on the rolled-back bond price r.
  def payoff (o: option) (r: real) : real =
    if o.kind == PUT then R.max (o.strike R.- r) zero else R.max (r R.- o.strike) zero

  -- | alpha[i+1] = ln(s / P(0, (i+2) dt)) / dt, with s the weighted sum of level i+1.
  def next_alpha [y] (rates: [y]real) (days: [y]i32) (term_unit: i32) (dt: real) (i: i64) (s: real) : real =
    let ti = R.i64 (i + 2) R.* dt
    let P = R.exp (R.neg (rate_at rates days term_unit ti) R.* ti)
    in R.log (s R./ P) R./ dt

  -- | Node value at step i: discounted expectation, replaced by the payoff at the expiry step.
  def backward_node (o: option) (t: tree) (alpha: real) (i: i64) (expectation: real) (j: i64) : real =
    let r = expectation R.* discount alpha t.dr t.dt j
    in if i == t.expiry_step then payoff o r else r

  -- | Options from the ten input arrays' first eight columns.
  def options [q] (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                  (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                  (types: [q]i32) : [q]option =
    map (\i -> {strike = strikes[i], maturity = maturities[i], expiry = expiries[i],
                term_unit = term_units[i], term_steps = term_steps[i], a = a[i],
                sigma = sigma[i], kind = types[i]})
        (iota q)
}
