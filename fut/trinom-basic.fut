-- Trinomial option pricing, Futhark-basic: one option per map element.
--
-- `map (trinomialSingle yield_curve) options`, where trinomialSingle (below) has the nested
-- form of the assignment's Figure 1: a forward loop with an inner map and reduce, and a
-- backward loop with an inner map, over arrays of the option's own width.  The option and
-- its tree come from fut/options.fut, the lattice (geometry, probabilities, the forward
-- gather, the curve) from fut/lattice.fut under the thesis' convention.  f32 and f64 come
-- from one source (the `pricer` module is applied to both).
--
-- Entry points (the contract with build.py and python/trinom/backends/futhark_basic.py):
--   main   : the ten input arrays in f64 -> prices in f64, in input order;
--   main32 : the same in f32.
-- The ten arrays: strikes, maturities, expiries, term_units, term_steps, a, sigma, types
-- (0 = call, 1 = put), yield_rates, yield_days.
--
-- Tests (futhark test --backend=c fut/trinom-basic.fut); data/NAME.in is the thesis file
-- followed by yield.in, data/NAME.out its float64 reference prices (made by `make data`).
-- Benchmarks on the 65536-option datasets live in fut/bench-basic.fut.
-- ==
-- entry: main
-- compiled input @ ../data/book.in output @ ../data/book.out
-- compiled input @ ../data/options-1000.in output @ ../data/options-1000.out
-- compiled input @ ../data/0_UNIFORM_1000.in output @ ../data/0_UNIFORM_1000.out
-- compiled input @ ../data/1_RAND_1000.in output @ ../data/1_RAND_1000.out
-- compiled input @ ../data/2_RANDCONSTHEIGHT_1000.in output @ ../data/2_RANDCONSTHEIGHT_1000.out
-- compiled input @ ../data/3_RANDCONSTWIDTH_1000.in output @ ../data/3_RANDCONSTWIDTH_1000.out

import "constants"
import "options"

module pricer (R: float) = {
  module H = zcb_option R
  module Lat = H.L
  type real = R.t
  def zero = H.zero

  -- | The price of one option (docs/model.md §1.9), in the nested form of the assignment's
  -- Figure 1: a forward loop with an inner map and reduce, then a backward loop with an
  -- inner map.  The forward loop stops at alpha[n-1], the last alpha the backward loop
  -- reads.  When maturity <= expiry the payoff step is never reached and the price is the
  -- bond's.
  def trinomialSingle [y] (rates: [y]real) (days: [y]i32) (o: H.option) : real =
    let t = H.tree_of o
    let jmax = t.jmax
    let w = H.width t
    let n = i64.max t.n 1
    let alphas = replicate n zero with [0] = H.rate_at rates days o.term_unit t.dt
    let Q = tabulate w (\k -> if k == jmax then H.one else zero)
    let (_, alphas) =
      loop (Q, alphas) for i < n - 1 do
        let alpha = alphas[i]
        let E = tabulate w (\k -> Q[k] R.* H.discount alpha t.dr t.dt (k - jmax))
        let Qn = tabulate w (\k -> Lat.forward_node jmax (Lat.branch_probability t.M jmax)
                                                (\src -> E[src + jmax]) (k - jmax))
        let tmps = tabulate w (\k -> Qn[k] R.* H.level_weight t.dr t.dt (k - jmax))
        let s = reduce (R.+) zero tmps
        let alphas[i + 1] = H.next_alpha rates days o.term_unit t.dt i s
        in (Qn, alphas)
    let C = replicate w (R.f64 FACE_VALUE)
    let C =
      loop C for ii < n do
        let i = n - 1 - ii
        let jhigh = i64.min i jmax
        let alpha = alphas[i]
        in tabulate w (\k ->
                         let j = k - jmax
                         in if j < -jhigh || j > jhigh then zero
                            else let ev = Lat.expected_value jmax (Lat.probabilities t.M jmax j)
                                                         (\jj -> C[jj + jmax]) j
                                 in H.backward_node o t alpha i ev j)
    in C[jmax]

  def price [q] [y] (strikes: [q]R.t) (maturities: [q]R.t) (expiries: [q]R.t)
                    (term_units: [q]i32) (term_steps: [q]i32) (a: [q]R.t) (sigma: [q]R.t)
                    (types: [q]i32) (yield_rates: [y]R.t) (yield_days: [y]i32) : [q]R.t =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in map (trinomialSingle yield_rates yield_days) options
}

module pricer64 = pricer f64
module pricer32 = pricer f32

entry main [q] [y] (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                   (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                   (types: [q]i32) (yield_rates: [y]f64) (yield_days: [y]i32) : [q]f64 =
  pricer64.price strikes maturities expiries term_units term_steps a sigma types
                 yield_rates yield_days

entry main32 [q] [y] (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                     (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                     (types: [q]i32) (yield_rates: [y]f32) (yield_days: [y]i32) : [q]f32 =
  pricer32.price strikes maturities expiries term_units term_steps a sigma types
                 yield_rates yield_days
