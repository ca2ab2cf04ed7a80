-- Benchmarks of fut/trinom-basic.fut on the thesis' seven 65536-option datasets.
--
-- A separate file so that `futhark test fut/trinom-basic.fut fut/trinom-flat.fut` never
-- runs these large datasets; the entry points are trinom-basic's own, re-exported.
-- Run: futhark bench --backend=cuda --json=OUT.json fut/bench-basic.fut
-- (data/NAME.in: the thesis file followed by yield.in; data/NAME.out: f64 reference.)
-- ==
-- entry: main
-- compiled input @ ../data/0_UNIFORM.in output @ ../data/0_UNIFORM.out
-- compiled input @ ../data/1_RAND.in output @ ../data/1_RAND.out
-- compiled input @ ../data/2_RANDCONSTHEIGHT.in output @ ../data/2_RANDCONSTHEIGHT.out
-- compiled input @ ../data/3_RANDCONSTWIDTH.in output @ ../data/3_RANDCONSTWIDTH.out
-- compiled input @ ../data/4_SKEWED.in output @ ../data/4_SKEWED.out
-- compiled input @ ../data/5_SKEWEDCONSTHEIGHT.in output @ ../data/5_SKEWEDCONSTHEIGHT.out
-- compiled input @ ../data/6_SKEWEDCONSTWIDTH.in output @ ../data/6_SKEWEDCONSTWIDTH.out

-- ==
-- entry: main32
-- compiled input @ ../data/0_UNIFORM.in
-- compiled input @ ../data/1_RAND.in
-- compiled input @ ../data/2_RANDCONSTHEIGHT.in
-- compiled input @ ../data/3_RANDCONSTWIDTH.in
-- compiled input @ ../data/4_SKEWED.in
-- compiled input @ ../data/5_SKEWEDCONSTHEIGHT.in
-- compiled input @ ../data/6_SKEWEDCONSTWIDTH.in

module program = import "trinom-basic"

entry main [q] [y] (strikes: [q]f64) (maturities: [q]f64) (expiries: [q]f64)
                   (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f64) (sigma: [q]f64)
                   (types: [q]i32) (yield_rates: [y]f64) (yield_days: [y]i32) : [q]f64 =
  program.main strikes maturities expiries term_units term_steps a sigma types yield_rates yield_days

entry main32 [q] [y] (strikes: [q]f32) (maturities: [q]f32) (expiries: [q]f32)
                     (term_units: [q]i32) (term_steps: [q]i32) (a: [q]f32) (sigma: [q]f32)
                     (types: [q]i32) (yield_rates: [y]f32) (yield_days: [y]i32) : [q]f32 =
  program.main32 strikes maturities expiries term_units term_steps a sigma types yield_rates yield_days
