-- The way round nested-allocation.fut's limitation, as fut/fast.fut takes it: one `tabulate` per
-- step, choosing per element by a scalar condition, instead of an `if` between two arrays.

entry main [q] (ns: [q]i64) : [q]f64 =
  map (\n -> let w = 2 * n + 1
             let level = tabulate w (\k -> f64.i64 k)
             let level = loop level for i < n do
                           tabulate w (\k -> if i % 2 == 0 then level[k] * 0.5 else level[k] + 1)
             in f64.sum level) ns
