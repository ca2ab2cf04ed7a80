-- Minimal reproducer of a Futhark 0.25.27 limitation met by fut/fast.fut (issue 13): inside a map
-- whose elements hold arrays of their own size (a tree's level, w = 2n + 1 here), an `if` whose
-- branches each make a new array of that size does not compile for the GPU backends:
--
--   $ futhark cuda --library nested-allocation.fut
--   Known compiler limitation encountered.  Sorry.
--   Cannot handle nested allocation: let {mem_... : mem@device} = alloc(bytes_..., @device)
--
-- (futhark c and multicore compile it.)  fast.fut therefore updates a level with one `tabulate`
-- whose elements choose by a scalar condition, as nested-allocation-workaround.fut does; the
-- test tests/test_futhark_kernels.py compiles both.

entry main [q] (ns: [q]i64) : [q]f64 =
  map (\n -> let w = 2 * n + 1
             let level = tabulate w (\k -> f64.i64 k)
             let level = loop level for i < n do
                           if i % 2 == 0 then map (* 0.5) level else tabulate w (\k -> level[k] + 1)
             in f64.sum level) ns
