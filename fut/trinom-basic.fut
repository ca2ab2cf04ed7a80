-- Trinomial option pricing, Futhark-basic: one option per map element.
--
-- `map (trinomialSingle yield_curve) options`, where trinomialSingle (fut/model.fut) has
-- the nested form of the assignment's Figure 1: a forward loop with an inner map and
-- reduce, and a backward loop with an inner map, over arrays of the option's own width.
-- f32 and f64 come from one source (the `hull_white` module is applied to both).
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

import "model"

module pricer (R: real) = {
  module H = hull_white R

  def price [q] [y] (strikes: [q]R.t) (maturities: [q]R.t) (expiries: [q]R.t)
                    (term_units: [q]i32) (term_steps: [q]i32) (a: [q]R.t) (sigma: [q]R.t)
                    (types: [q]i32) (yield_rates: [y]R.t) (yield_days: [y]i32) : [q]R.t =
    let options = H.options strikes maturities expiries term_units term_steps a sigma types
    in map (H.trinomialSingle yield_rates yield_days) options
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
