-- The fast formulation (fut/fast.fut, docs/model.md §1.12) for coupon bonds with an embedded
-- call or put (issue 13; the ARRAY'21 paper's instrument, docs/paper-instrument.md), on the
-- paper's lattice: bonds.fut's geometry, curve lookup and quirks, fast.fut's level operations.
-- A program of its own so that the options' kernels are compiled alone (Futhark's allocation of
-- their local memory changed when the two shared a program: one level more per workgroup).
--
-- Entry points, all taking bonds.fut's 19 arrays and then, but for `bonds64`/`bonds32`, the bonds'
-- listed exercise points (bonds.fut's `bonds_listed64`): `bonds_shared64`/`bonds_shared32` (the CPU
-- targets: one bond per map element, one forward pass per lattice, levels in place; the lattice
-- numbers, heads and step count first), `bonds_grouped64`/`bonds_grouped32` (one bond per
-- workgroup: the GPU targets; python/trinom/backends/bonds_futhark_fast.py bins bonds by level
-- width and height; the level width `w` and step count `N` first; each bond's offset into the
-- listed points before them), `bonds_stepped64`/`bonds_stepped32` (the GPU targets' bonds too wide for a
-- workgroup: the steps an outer loop, each step one map over every bond's nodes; the level width `w`, the
-- lattices and their heads first) and `bonds_listed64`/`bonds_listed32` (one bond per map element with
-- its own forward pass and mapped levels).  `bonds64`/`bonds32`
-- are `bonds_listed64`/`bonds_listed32` without listed points: the paper's 19 arrays (the test
-- below).
--
-- ==
-- entry: bonds64
-- compiled input @ ../data/bonds-sample.in output @ ../data/bonds-sample.out
-- compiled input @ ../data/bonds-0_UNIFORM_50.in output @ ../data/bonds-0_UNIFORM_50.out
-- compiled input @ ../data/bonds-1_RAND_50.in output @ ../data/bonds-1_RAND_50.out
-- compiled input @ ../data/bonds-4_SKEWED_50.in output @ ../data/bonds-4_SKEWED_50.out

import "constants"
import "lattice"
import "bonds"
import "fast"

-- | Coupon bonds with an embedded call or put (docs/paper-instrument.md) in the same formulation,
-- on the paper's lattice (bonds.fut's geometry, curve and quirks).  Forward, with x_j the node
-- discount and U_i = Q_i x / D_i (D_i the product of E_m = exp(-alpha_m dt) for m < i):
-- U_0 = delta_0, U_{i+1}[k] = x_k sum_s p(k+s -> k) U_i[k+s], and with S_i = sum U_i
-- E_0 = P_1, E_i = (P_{i+1} / P_i) (S_{i-1} / S_i): no log and no exp per step.  The backward
-- pass keeps true values (exercise against strike plus accrued interest and the cash flows need
-- them): V_i[j] = (pu V_u + pm V_m + pd V_d) ((E_i x_j) g), the spec's order, with the step's cash
-- flow added to the next level's nodes |j| <= min(i, jmax) as it is read (quirk Q1).  Levels are
-- held like the options' (`fast.centre`), and E_i in an array of the bond's height.
module fast_bond (R: float) = {
  module F = fast R
  module B = coupon_bond R
  module L = B.L
  type real = R.t
  def zero = L.zero
  def one = L.one

  def window (geo: B.geometry) : i64 = i64.min geo.jmax (i64.max geo.n 1)

  -- | One bond per map element, on its own window and height (the CPU shape).
  def own_shape (geo: B.geometry) : (i64, i64) = (2 * window geo + 3, i64.max geo.n 1 + 1)

  -- | x_j = exp(mdrdt j), as the spec computes it (§9).
  def node_discount (geo: B.geometry) (j: i64) : real = B.r (f64.exp (B.d (geo.mdrdt R.* R.i64 j)))

  -- | The backward tables: pu and pd (pm = 1 - pu - pd: the three sum to one in every case of the
  -- lattice, and one level less lets trees of 513 nodes fit OpenCL's 48 KiB of local memory in
  -- float64) and x_j (kept out of the probabilities, as in the spec, which keeps float32 from
  -- overflowing where the reference does not).
  type tables [w] = {pu: [w]real, pd: [w]real, x: [w]real}

  def tables_of (geo: B.geometry) (h: i64) (w: i64) : tables [w] =
    let node (k: i64) : (real, real, real) =
      let j = k - F.centre h
      in if j < -h || j > h then (zero, zero, zero)
         else let (pu, _, pd) = L.probabilities geo.M geo.jmax j
              in (pu, pd, node_discount geo j)
    let (pu, pd, x) = unzip3 (tabulate w node)
    in {pu, pd, x}

  def pm_of [w] (tb: tables [w]) (k: i64) : real = one R.- tb.pu[k] R.- tb.pd[k]

  -- | Node k (node j = k - centre h) of the next forward level, x_j sum_s p(j+s -> j) U[k+s], with
  -- the branch probabilities of the sources read from the tables.  A source at -jmax branches +2,
  -- +1, 0 (pu, pm, pd), at jmax 0, -1, -2, elsewhere +1, 0, -1.  A node that takes no second
  -- branch reads itself there with weight zero.
  def forward_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (U: [w]real) (k: i64) : real =
    let j = k - F.centre h
    let from_below = if j - 1 == -jmax then pm_of tb (k - 1) else tb.pu[k - 1]
    let from_here = if j == -jmax then tb.pd[k] else if j == jmax then tb.pu[k] else pm_of tb k
    let from_above = if j + 1 == jmax then pm_of tb (k + 1) else tb.pd[k + 1]
    let (low_weight, low_source) = if h == jmax && j == 2 - jmax then (tb.pu[k - 2], k - 2) else (zero, k)
    let (high_weight, high_source) = if h == jmax && j == jmax - 2 then (tb.pd[k + 2], k + 2) else (zero, k)
    let (below, here, above) = (U[k - 1], U[k], U[k + 1])
    let (second_low, second_high) = (U[low_source], U[high_source])
    let sum = R.(from_below * below + from_here * here + from_above * above
                 + low_weight * second_low + high_weight * second_high)
    in tb.x[k] R.* sum

  -- | Node k of the previous backward level, (pu V_up + pm V_mid) + pd V_down (the spec's order;
  -- `at` reads the level after it).
  def backward_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (at: i64 -> real) (k: i64) : real =
    let j = k - F.centre h
    let c = if j == -jmax then k + 1 else if j == jmax then k - 1 else k
    let (up, mid, down) = (at (c + 1), at c, at (c - 1))
    in R.(tb.pu[k] * up + pm_of tb k * mid + tb.pd[k] * down)

  -- | The per-step table of N entries, held as [w][N/w] (entry i at [i % w, i / w]) so that on a
  -- GPU each thread of the workgroup makes its own column and the workgroup stays w threads (a flat
  -- [N] array would make it N threads, beyond the 1024 a workgroup may have).  `ratio i` is the f64
  -- factor of entry i >= 1, and entry 0 is `first`.
  def step_table (w: i64) (N: i64) (first: f64) (ratio: i64 -> f64) : *[w][]f64 =
    let depth = (N + w - 1) / w
    in tabulate w (\t -> #[sequential] tabulate depth (\u -> let i = u * w + t
                                                           in if i == 0 then first else ratio i))

  -- | P_{i+1} / P_i of the bond's curve (P_i = exp(-R(t_i) t_i) in f64, §5; 1 beyond the tree).
  def curve_ratio (geo: B.geometry) (rate_at: real -> real) (i: i64) : f64 =
    let P (i: i64) : f64 = if i == 0 || i > i64.max geo.n 1 then 1f64
                           else let ti = R.i64 i R.* geo.dt in f64.exp (B.d (R.neg (rate_at ti) R.* ti))
    in P (i + 1) / P i

  -- The passes walk the table with a (column, row) cursor: a 64-bit division per step would cost
  -- more than the step itself.
  def next (w: i64) (col: i64, row: i64) = if col == w - 1 then (0, row + 1) else (col + 1, row)
  def previous (w: i64) (col: i64, row: i64) = if col == 0 then (w - 1, row - 1) else (col - 1, row)

  -- | The power of two a forward level is rescaled by, from the previous level's sum S: S's exponent where it has
  -- left [2^-16, 2^16], else none.
  def rescaling (S: real) : i32 = let e = F.exponent S in i32.bool (i32.abs e > 16) * e

  -- | The forward pass on levels of w >= 2 window + 3 nodes: entry i >= 1 of `steps` (a factor r_i
  -- on entry) becomes E_i = r_i (S_{i-1} / S_i), so P_{i+1} / P_i there give the bond's E_i, and ones
  -- give the ratios S_{i-1} / S_i alone, which depend on the lattice only (a, sigma, dt), not on the
  -- curve, the spread or the cash flows: `ratios_of` shares them among the bonds of one lattice.
  -- U is level i-1 and S its sum, both in the current scale.  Whenever S leaves [2^-16, 2^16] the
  -- next level is rescaled by S's power of two (levels drift by up to exp(alpha dt) a step: far more
  -- than float32's range over a tree), and the ratio S_{i-1} / S_i takes the rescaling back.
  def forward [w] [depth] 'levels (start: *[w]real -> *levels)
              (level: *levels -> i64 -> i64 -> i32 -> (*levels, real)) (geo: B.geometry)
              (steps: *[w][depth]f64) : *[w][depth]f64 =
    let c = F.centre (window geo)
    let (_, _, steps, _) =
      loop (U, S, steps, (col, row)) = (start (tabulate w (\q -> if q == c then one else zero)), one, steps,
                                        next w (0, 0))
      for i_ < i64.max geo.n 1 - 1 do
        let i = i_ + 1
        let x = rescaling S
        let (U, S_i) = level U i (i64.min i geo.jmax) x  -- level i, from level i - 1
        let E = B.r (steps[col, row] * B.d (R.ldexp (S R./ S_i) (-x)))
        in (U, S_i, steps with [col, row] = B.d E, next w (col, row))
    in steps

  -- | Node q of `forward_mapped`'s level.
  def forward_mapped_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (U: [w]real) (live: i64) (x: i32) (q: i64) : real =
    let c = F.centre h
    in if u64.i64 (q - c + live) <= u64.i64 (2 * live) then F.rescaled x (forward_node tb h jmax U q) else zero

  -- | One forward level (the nodes |j| <= live, rescaled by 2^-x) and its sum, as a map over the w
  -- nodes (the GPU shape).  (No flushing of tiny values as for options: U_i[j] = Q_i[j] x_j / D_i
  -- spans the range of x_j, which on the paper's trees is wide, so a tiny U can carry real mass.)
  def forward_mapped [w] (tb: tables [w]) (h: i64) (jmax: i64) (U: *[w]real) (live: i64) (x: i32)
                         : (*[w]real, real) =
    let U = tabulate w (forward_mapped_node tb h jmax U live x)
    let sum = copy (reduce (R.+) zero U)
    in (U, sum)

  -- | The same level in place on the CPU, with `pm` as a table: the nodes |j| <= jmax - 3 (three
  -- sources, no second branch) are a loop that the C compiler vectorises, the up to three nodes at
  -- either edge take `forward_node`, and the sum runs over the live nodes in order.  Both levels
  -- start as zeros and the live window only grows, so the nodes just outside it stay zero.
  def forward_in_place [w] (tb: tables [w]) (pm: [w]real) (h: i64) (jmax: i64) ((U, out): (*[w]real, *[w]real))
                           (live: i64) (x: i32) : ((*[w]real, *[w]real), real) =
    let c = F.centre h
    let inner = i64.min live (jmax - 3)
    let out = #[unsafe] loop out for t < 2 * i64.max inner (-1) + 1 do
                let q = c - inner + t
                let (below, here, above) = (U[q - 1], U[q], U[q + 1])
                let (from_below, from_above) = (tb.pu[q - 1], tb.pd[q + 1])
                in out with [q] = copy (F.rescaled x
                                          R.(tb.x[q] * ((from_below * below + pm[q] * here) + from_above * above)))
    let edges = i64.max 0 (live - i64.max inner (-1))
    let out = #[unsafe] loop out for t < 2 * edges do
                let q = if t < edges then c - live + t else c + inner + 1 + (t - edges)
                in out with [q] = copy (F.rescaled x (forward_node tb h jmax U q))
    let sum = copy (#[unsafe] loop sum = zero for t < 2 * live + 1 do sum R.+ out[c - live + t])
    in ((out, U), sum)


  -- | A backward value as the spec keeps it: +inf becomes the largest finite value and -inf the
  -- smallest normal one (NaN stays).
  def clamped (v: real) : real =
    if v R.> B.max_finite then B.max_finite else if v R.< R.neg B.max_finite then B.min_normal else v

  -- | A node value with flows between steps (c0 + c1 x_j, bonds.fut's `timed_flow`).
  def with_timed ((c0, c1): (f64, f64)) (x: real) (v: real) : real =
    if c0 == 0 && c1 == 0 then v else v R.+ B.r (c0 + c1 * B.d x)

  -- | What a step holds between steps (bonds.fut's backward): the flows valued before its exercise, a listed point on
  -- its date between steps (`dated`, its price's value `point`) and the flows paid by that date (after exercise).
  type between = {before: (f64, f64), dated: bool, point: (f64, f64), after: (f64, f64)}

  -- | Node q's value at an exercise date or not: the continuation `cont` against the exercise price
  -- (a call caps it, a put floors it), clamped: a step with nothing between steps.
  def exercised (kind: i32) (exercise: bool) (exercise_price: real) (cont: real) : real =
    clamped (if !exercise then cont
             else if kind == CALL then (if cont R.> exercise_price then exercise_price else cont)
             else (if exercise_price R.> cont then exercise_price else cont))

  -- | Whether a step holds nothing between steps (its levels then take `exercised`, a loop the C compiler
  -- vectorises as before flows had times).
  def plain (bt: between) : bool = !bt.dated && bt.before == (0, 0) && bt.after == (0, 0)

  -- | Node q's value from its continuation `cont` with x_q: the flows before exercise, the window's or an undated
  -- listed point's exercise (`exercised`), a dated point's, then the flows paid by its date, clamped.
  def settle (kind: i32) (exercise: bool) (exercise_price: real) (bt: between) (x: real) (cont: real) : real =
    let v = with_timed bt.before x cont
    let v = if !exercise then v
            else if kind == CALL then (if v R.> exercise_price then exercise_price else v)
            else (if exercise_price R.> v then exercise_price else v)
    let v = if !bt.dated then v
            else let price = B.r (bt.point.0 + bt.point.1 * B.d x)
                 in if kind == CALL then (if v R.> price then price else v) else (if price R.> v then price else v)
    in clamped (with_timed bt.after x v)

  -- | What one step of the walk gives its level: the live half width `hh`, the cash flow `added` to the next level's
  -- live nodes as they are read, the flows and dated point `bt` between steps, the exercise flag and price.
  type events = {hh: i64, added: real, bt: between, exercise: bool, exercise_price: real, step: i64}

  -- | Node q of `level_mapped`'s level, with the step's events `ev`.
  def level_mapped_node [w] (tb: tables [w]) (h: i64) (jmax: i64) (kind: i32) (g: real) (Val: [w]real) (ev: events)
                            (e: real) (q: i64) : real =
    let c = F.centre h
    let is_live (q: i64) = u64.i64 (q - c + ev.hh) <= u64.i64 (2 * ev.hh)
    let at (q: i64) : real = if is_live q then Val[q] R.+ ev.added else Val[q]
    in if !(is_live q) then zero
       else settle kind ev.exercise ev.exercise_price ev.bt tb.x[q]
                   (backward_node tb h jmax at q R.* ((e R.* tb.x[q]) R.* g))

  -- | `level_mapped_node` with `extra x_q` added to each node's continuation before the step's events (a bond's
  -- options on coupon rates at the step, `options_value`).
  def level_mapped_node_with [w] (any: bool) (extra: real -> real) (tb: tables [w]) (h: i64) (jmax: i64) (kind: i32)
                                 (g: real) (Val: [w]real) (ev: events) (e: real) (q: i64) : real =
    let c = F.centre h
    let is_live (q: i64) = u64.i64 (q - c + ev.hh) <= u64.i64 (2 * ev.hh)
    let at (q: i64) : real = if is_live q then Val[q] R.+ ev.added else Val[q]
    in if !(is_live q) then zero
       else let cont = backward_node tb h jmax at q R.* ((e R.* tb.x[q]) R.* g)
            in settle kind ev.exercise ev.exercise_price ev.bt tb.x[q] (if any then cont R.+ extra tb.x[q] else cont)

  -- | The standard normal distribution function.
  def normal_cdf (x: f64) : f64 = 0.5 * f64.erfc (-x / f64.sqrt 2)

  -- | The options on coupon rates `lo` to `hi - 1` of `terms` (python/trinom/engines/coupon_option_terms.py: ln C and
  -- beta of the fixing and of the payment date, the deviation, the strike, the amount, the side) from a node whose
  -- factor is `d` (x_j): each amount times Hull and White's option on P(s, e) from the node, summed in order.
  def options_value [o] (terms: [o][8]f64) (lo: i64) (hi: i64) (d: f64) : f64 =
    let ln_d = f64.log d
    in loop acc = 0f64 for k < hi - lo do
         let t (c: i64) : f64 = #[unsafe] terms[lo + k, c]
         let p_s = f64.exp (t 0 + t 1 * ln_d)
         let p_e = f64.exp (t 2 + t 3 * ln_d)
         let sd = t 4
         let K = t 5 * p_s
         let call = t 7 != 0
         let v = if sd > 0
                 then let d1 = f64.log (p_e / K) / sd + 0.5 * sd
                      in if call then p_e * normal_cdf d1 - K * normal_cdf (d1 - sd)
                         else K * normal_cdf (sd - d1) - p_e * normal_cdf (-d1)
                 else if call then f64.max (p_e - K) 0 else f64.max (K - p_e) 0
         in acc + t 6 * (if f64.isnan v || f64.isinf v then 0 else v)

  -- | One backward level, as a map over the w nodes (the GPU shape: a thread a node): the nodes
  -- |j| <= hh of `Val` (level i+1) take the step's cash flow `added` as they are read, each live
  -- node of level i is its continuation times (e x_j) g, exercised; the others are zero.
  def level_mapped [w] (tb: tables [w]) (h: i64) (jmax: i64) (kind: i32) (g: real) (Val: *[w]real) (ev: events)
                       (e: real) : *[w]real =
    tabulate w (level_mapped_node tb h jmax kind g Val ev e)

  -- | The same level in place on the CPU, with `pm` as a table: the cash flow is added to level i+1
  -- first, then the interior nodes are a loop without branches or gathers that the C compiler
  -- vectorises, and the two edge nodes |j| = jmax (which branch from j -+ 1) come after it.  Nodes
  -- outside the live window keep stale values: no live node reads them.
  def level_in_place [w] (tb: tables [w]) (pm: [w]real) (h: i64) (jmax: i64) (kind: i32) (g: real)
                         ((Val, out): (*[w]real, *[w]real)) (ev: events) (e: real) : (*[w]real, *[w]real) =
    let (hh, added, bt, exercise, exercise_price) = (ev.hh, ev.added, ev.bt, ev.exercise, ev.exercise_price)
    let c = F.centre h
    let Val = if added R.== zero then Val
              else loop Val for t < 2 * hh + 1 do let q = c - hh + t in Val with [q] = copy (Val[q] R.+ added)
    let edge = i64.bool (hh == jmax)
    let finish (q: i64) (sum: real) =
      settle kind exercise exercise_price bt tb.x[q] (sum R.* ((e R.* tb.x[q]) R.* g))
    let interior (finish: i64 -> real -> real) (out: *[w]real) : *[w]real =
      loop out for t < 2 * (hh - edge) + 1 do
        let q = c - hh + edge + t
        let (up, mid, down) = (Val[q + 1], Val[q], Val[q - 1])
        in out with [q] = copy (finish q R.((tb.pu[q] * up + pm[q] * mid) + tb.pd[q] * down))
    let out = if plain bt
              then interior (\q sum -> exercised kind exercise exercise_price (sum R.* ((e R.* tb.x[q]) R.* g))) out
              else interior finish out
    let out = if edge == 0 then out
              else let (low, high) = (c - jmax, c + jmax)
                   in out with [low] = copy (finish low (backward_node tb h jmax (\q -> Val[q]) low))
                          with [high] = copy (finish high (backward_node tb h jmax (\q -> Val[q]) high))
    in (out, Val)

  -- | A bond's listed exercise points: the global arrays and the bond's `offset` and `count` into them
  -- (read in place, as the cash flows are).
  type listed [e] = {steps: [e]i32, prices: [e]real, times: [e]f64, offset: i64, count: i64}

  -- | Where a bond's backward walk stands between steps: its next cash flow `p` (at step `S`), the cash flows `left`
  -- to take, and its next listed exercise point `q` (-1: none).
  type cursor = {p: i64, S: i64, left: i64, q: i64}

  -- | A bond's walk as `backward` takes it: its cash flows `flows` of the global arrays (read in place: a per-bond
  -- slice would be an allocation of varying size inside a workgroup), its listed exercise points likewise (`lx`,
  -- walked from the last down as in bonds.fut), its exercise window and its flows between steps (`flows_at`).
  type^ walk [k] [e] = {cashflow_steps: [k]i32, cashflow_times: [k]f64, repayments: [k]real, coupons: [k]real,
                       off: i64, K: i64, geo: B.geometry, kind: i32, strike: real, first_ex: i64, last_ex: i64,
                       frequency: i64, lx: listed [e], flows_at: B.timed_flows}

  def flow_of [k] [e] (wk: walk [k] [e]) (p: i64) : real = wk.repayments[wk.off + p] R.+ wk.coupons[wk.off + p]

  -- | The walk's start (the pointer logic of bonds.fut: step n holds the maturity cash flow): the value of the
  -- maturity level's live nodes (zero where the last flow is paid before step n: it is taken at step n - 1) and the
  -- cursor.
  def walk_start [k] [e] (wk: walk [k] [e]) : (real, cursor) =
    let step_of (p: i64) : i64 = i64.i32 wk.cashflow_steps[wk.off + p]
    let p = wk.K - 1
    let timed_last = !(f64.isnan wk.cashflow_times[wk.off + p])
    let left = if timed_last then wk.K else wk.K - 1
    let S = step_of p
    let (p', S) = if !timed_last && p > 0 && S <= wk.geo.n && left > 0 then (p - 1, step_of (p - 1)) else (p, S)
    let listed_step (q: i64) : i64 = i64.i32 wk.lx.steps[wk.lx.offset + q]
    let q = B.listed_start listed_step wk.lx.count wk.geo.n
    in (if timed_last then zero else flow_of wk p, {p = p', S, left, q})

  -- | Step i of the walk (E_i = `e`): the level's events and the cursor for step i - 1.
  def walk_step [k] [m] (wk: walk [k] [m]) (i: i64) (e: real) (cur: cursor) : (events, cursor) =
    let n = wk.geo.n
    let step_of (p: i64) : i64 = i64.i32 wk.cashflow_steps[wk.off + p]
    let (p, S, left, q) = (cur.p, cur.S, cur.left, cur.q)
    let hh = i64.min i wk.geo.jmax
    let exercise = wk.first_ex <= i && i <= wk.last_ex && i32.i64 (S - i) % i32.i64 wk.frequency == 0
    let listed = q >= 0 && i64.i32 wk.lx.steps[wk.lx.offset + q] == i
    let date = if listed then wk.lx.times[wk.lx.offset + q] else f64.nan  -- a date between steps i and i+1
    -- The cash flow of step i+1, added to the nodes |j| <= hh as they are read (Q1), and those with a
    -- time between steps i and i+1 (several may share the step), valued at step i: c0 + c1 x_j, before the
    -- step's exercise or after it (paid by the listed point's date).
    let (added, (before, after), p, S, left) =
      loop (added, ((c0, c1), (a0, a1)), p, S, left) = (zero, ((0f64, 0f64), (0f64, 0f64)), p, S, left)
      while i == S - 1 && left > 0 do
        let t = wk.cashflow_times[wk.off + p]
        let (added, sums) = if f64.isnan t then (flow_of wk p, ((c0, c1), (a0, a1)))
                            else let (k0, k1) = wk.flows_at i e t (flow_of wk p)
                                 in if t <= date then (added, ((c0, c1), (a0 + k0, a1 + k1)))
                                    else (added, ((c0 + k0, c1 + k1), (a0, a1)))
        let (p, S) = if p > 0 && S <= n then (p - 1, step_of (p - 1)) else (p, S)
        in (added, sums, p, S, left - 1)
    -- Accrued interest since the last cash-flow date, with that date's coupon (Q2).
    let AI = if exercise && S != 0 && left > 0
             then let next = step_of (i64.min (p + 1) (wk.K - 1))
                  let span = R.i64 (next - S)
                  let remaining = R.i64 (i64.max (next - i) 0)
                  in ((span R.- remaining) R./ span) R.* wk.coupons[wk.off + p]
             else zero
    let price = if listed then wk.lx.prices[wk.lx.offset + q] else zero
    let dated = listed && !(f64.isnan date)
    let bt = {before, dated, point = if dated then wk.flows_at i e date price else (0, 0), after}
    let (exercise, exercise_price) = B.with_listed wk.kind exercise (wk.strike R.+ AI) (listed && !dated) price
    let q = if listed then q - 1 else q
    in ({hh, added, bt, exercise, exercise_price, step = i}, {p, S, left, q})

  -- | The backward pass (§6) of one bond with the E_i in `steps` (as `forward` leaves them) and
  -- levels `start` makes from the maturity's values and `level` steps back.
  def backward [k] [w] [depth] [e] 'levels (start: *[w]real -> *levels)
               (level: *levels -> events -> real -> *levels)
               (root: levels -> [w]real) (steps: [w][depth]f64) (wk: walk [k] [e]) : real =
    let n = wk.geo.n
    let h = window wk.geo
    let c = F.centre h
    let (last, cur) = walk_start wk
    let levels = start (tabulate w (\q -> if i64.abs (q - c) <= h then last else zero))
    let (levels, _, _) =
      loop (levels, cur, (col, row)) = (levels, cur, ((n - 1) % w, (n - 1) / w)) for i_ < n do
        let i = n - 1 - i_
        let e = B.r steps[col, row]
        let (ev, cur) = walk_step wk i e cur
        in (level levels ev e, cur, previous w (col, row))
    in (root levels)[c]

  -- | `backward` with mapped levels (the GPU shape).
  def backward_mapped [k] [w] [depth] [e] (tb: tables [w]) (steps: [w][depth]f64) (wk: walk [k] [e]) : real =
    let fresh (Val: *[w]real) : *[w]real = Val
    let same (Val: [w]real) : [w]real = Val
    in backward fresh (level_mapped tb (window wk.geo) wk.geo.jmax wk.kind wk.geo.g) same steps wk

  -- | `backward` with levels in place (the CPU shape).
  def backward_in_place [k] [w] [depth] [e] (tb: tables [w]) (steps: [w][depth]f64) (wk: walk [k] [e]) : real =
    let pair (Val: *[w]real) : (*[w]real, *[w]real) = (Val, copy Val)
    let first ((Val, _): ([w]real, [w]real)) : [w]real = Val
    in backward pair (level_in_place tb (tabulate w (pm_of tb)) (window wk.geo) wk.geo.jmax wk.kind wk.geo.g) first
                steps wk

  -- | E_i of one bond from its own forward pass (mapped levels), on levels of w >= 2 window + 3 nodes
  -- (the tables `tb`) and step arrays of N >= max(n, 1) + 1 entries (E_0 = P_1).
  def own_steps [w] (tb: tables [w]) (N: i64) (geo: B.geometry) (rate_at: real -> real) : *[w][]f64 =
    let fresh (U: *[w]real) : *[w]real = U
    let level (U: *[w]real) (_: i64) (live: i64) (x: i32) : (*[w]real, real) =
      forward_mapped tb (window geo) geo.jmax U live x
    in forward fresh level geo
               (step_table w N (B.d (B.r (curve_ratio geo rate_at 0))) (curve_ratio geo rate_at))

  -- | The lattice's ratios S_{i-1} / S_i (entry i, i = 1 .. max(n, 1) - 1; ones elsewhere) of a tree
  -- of this geometry, as f64 in `M` entries: the forward pass of every shorter tree of the lattice
  -- is a prefix of it (its live nodes are the same; the wider window only adds zeros).
  def ratios_of (M: i64) (geo: B.geometry) : [M]f64 =
    let (w, N) = own_shape geo
    let h = window geo
    let tb = tables_of geo h w
    let pair (U: *[w]real) : (*[w]real, *[w]real) = (U, replicate w zero)
    let pm = tabulate w (pm_of tb)
    let level ((U, out): (*[w]real, *[w]real)) (_: i64) (live: i64) (x: i32) : ((*[w]real, *[w]real), real) =
      forward_in_place tb pm h geo.jmax (U, out) live x
    let table = forward pair level geo (step_table w N 1 (\_ -> 1))
    in tabulate M (\i -> if i > 0 && i < N then table[i % w, i / w] else 1)

  -- | E_i of a bond from its lattice's ratio at step i (`ratio`, i >= 1): P_1 at step 0, P_{i+1} / P_i times the
  -- ratio below the bond's height, rounded as the bond's own forward pass rounds it; 1 beyond.
  def shared_E (geo: B.geometry) (rate_at: real -> real) (ratio: i64 -> f64) (i: i64) : f64 =
    if i == 0 then B.d (B.r (curve_ratio geo rate_at 0))
    else if i < i64.max geo.n 1 then B.d (B.r (curve_ratio geo rate_at i * ratio i)) else 1

  -- | E_i of one bond from its lattice's ratios (`ratios_of`, at least max(n, 1) entries): P_{i+1} /
  -- P_i times the ratio, rounded as the bond's own forward pass rounds it.
  def shared_steps [M] (w: i64) (N: i64) (ratios: [M]f64) (geo: B.geometry) (rate_at: real -> real) : *[w][]f64 =
    let E = shared_E geo rate_at (\i -> ratios[i])
    in step_table w N (E 0) E

  def exclusive_scan [m] (xs: [m]i32) : [m]i64 = map2 (-) (scan (+) 0 (map i64.i32 xs)) (map i64.i32 xs)

  -- | Bond v's geometry (its height from its last cash-flow step).
  def geometry_at [n] [k] (cf_offsets: [n]i64) (term_units: [n]i32) (term_steps: [n]i32) (a: [n]real)
                          (sigma: [n]real) (cashflows: [n]i32) (cashflow_steps: [k]i32) (spreads: [n]real)
                          (v: i64) : B.geometry =
    let last = cashflow_steps[cf_offsets[v] + i64.i32 cashflows[v] - 1]
    in B.geometry_of term_units[v] term_steps[v] a[v] sigma[v] (i64.i32 last) spreads[v]

  -- | Bond v's walk (`walk`) from the global arrays, with its geometry and its curve's zero rates `rate_at`.
  def walk_of [n] [k] [e] (cf_offsets: [n]i64) (cashflows: [n]i32) (cashflow_steps: [k]i32) (repayments: [k]real)
                          (coupons: [k]real) (spreads: [n]real) (types: [n]i32) (strikes: [n]real)
                          (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32) (ex_offsets: [n]i64)
                          (exercise_counts: [n]i32) (exercise_steps: [e]i32) (exercise_prices: [e]real)
                          (cashflow_times: [k]f64) (exercise_times: [e]f64) (a: [n]real) (geo: B.geometry)
                          (rate_at: real -> real) (v: i64) : walk [k] [e] =
    let lx = {steps = exercise_steps, prices = exercise_prices, times = exercise_times, offset = ex_offsets[v],
              count = i64.i32 exercise_counts[v]}
    let zero_price (t: real) = f64.exp (B.d (R.neg (rate_at t) R.* t))
    let zero_price_at (t: f64) = f64.exp (f64.neg (B.d (rate_at (B.r t))) * t)
    let flows_at = B.timed_flow (B.d a[v]) (B.d geo.dt) (B.d spreads[v] / SPREAD_UNIT) zero_price zero_price_at geo
    in {cashflow_steps, cashflow_times, repayments, coupons, off = cf_offsets[v], K = i64.i32 cashflows[v], geo,
        kind = types[v], strike = strikes[v], first_ex = i64.i32 first_exercise[v],
        last_ex = i64.i32 last_exercise[v], frequency = i64.max 1 (i64.i32 frequencies[v]), lx, flows_at}

  -- | Prices of all bonds (the 19 arrays of §1; `maturities` is not read, as in bonds.fut; then the
  -- listed exercise points, bond v's at `ex_offsets[v]`), the map
  -- run as `run` says (plain on the CPU, one bond per workgroup on GPUs), each bond on levels and
  -- step arrays of the width and height `shape` gives for its geometry.  The forward pass is the
  -- bond's own unless `shared`: then bond v's lattice is `lattice[v]` and its ratios `ratios`'
  -- row (`ratios_of`).  The levels are mapped (GPUs) unless `in_place` (CPUs).  (`shared` and
  -- `in_place` are constants at every call, so each entry holds one path.)
  def prices_with [n] [k] [c] [l] [g] [M] [e] (run: (i64 -> real) -> [n]i64 -> [n]real)
                                          (shape: B.geometry -> (i64, i64)) (shared: bool) (lattice: [n]i64)
                                          (ratios: [g][M]f64) (in_place: bool) (cf_offsets: [n]i64)
                                          (term_units: [n]i32) (term_steps: [n]i32) (a: [n]real) (sigma: [n]real)
                                          (cashflows: [n]i32) (cashflow_steps: [k]i32) (repayments: [k]real)
                                          (coupons: [k]real) (spreads: [n]real) (types: [n]i32) (strikes: [n]real)
                                          (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                          (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]real)
                                          (curve_days: [l]i32) (ex_offsets: [n]i64) (exercise_counts: [n]i32)
                                          (exercise_steps: [e]i32) (exercise_prices: [e]real)
                                          (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]real =
    let yc_offsets = exclusive_scan curve_terms
    let one_bond (v: i64) : real =
      let geo = geometry_at cf_offsets term_units term_steps a sigma cashflows cashflow_steps spreads v
      let cv = i64.i32 curve_index[v]
      let rate_at = B.curve_rate curve_rates curve_days yc_offsets[cv] (i64.i32 curve_terms[cv]) term_units[v]
      let (w, N) = shape geo
      let h = window geo
      let tb = tables_of geo h w
      let steps = if shared then shared_steps w N ratios[lattice[v]] geo rate_at else own_steps tb N geo rate_at
      let wk = walk_of cf_offsets cashflows cashflow_steps repayments coupons spreads types strikes first_exercise
                       last_exercise frequencies ex_offsets exercise_counts exercise_steps exercise_prices
                       cashflow_times exercise_times a geo rate_at v
      in if in_place then backward_in_place tb steps wk else backward_mapped tb steps wk
    in run one_bond (iota n)

  -- | The tables of a tree with sigma pieces at a step whose V / dx^2 is `v` (its node discounts `x`, made once).
  def tables_v [w] (geo: B.geometry) (h: i64) (x: [w]real) (v: real) : tables [w] =
    let node (k: i64) : (real, real) =
      let j = k - F.centre h
      in if j < -h || j > h then (zero, zero)
         else let (pu, _, pd) = L.probabilities_v geo.M geo.jmax j v in (pu, pd)
    let (pu, pd) = unzip (tabulate w node)
    in {pu, pd, x}

  -- | Bonds with sigma pieces (python/trinom/model/piecewise_tree.py), one per map element with its own forward
  -- pass and mapped levels (`prices_with`'s one-bond shape): bond v's grid is `jmax_over[v]` and `mdrdt_over[v]`
  -- (the widest piece sets it) and its step i's branching takes the v of its piece: `piece_v[piece_offsets[v] +
  -- k]` from step `piece_steps[...]` on (the first piece from step 0), each step's tables made from it.  A bond
  -- without pieces (`piece_counts[v] == 0`) is `prices_with`'s.
  def pieces_prices [n] [k] [c] [l] [e] [p] [o] (cf_offsets: [n]i64) (term_units: [n]i32) (term_steps: [n]i32)
                                            (a: [n]real) (sigma: [n]real) (cashflows: [n]i32)
                                            (cashflow_steps: [k]i32) (repayments: [k]real) (coupons: [k]real)
                                            (spreads: [n]real) (types: [n]i32) (strikes: [n]real)
                                            (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                            (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]real)
                                            (curve_days: [l]i32) (ex_offsets: [n]i64) (exercise_counts: [n]i32)
                                            (exercise_steps: [e]i32) (exercise_prices: [e]real)
                                            (cashflow_times: [k]f64) (exercise_times: [e]f64) (jmax_over: [n]i64)
                                            (mdrdt_over: [n]real) (piece_offsets: [n]i64) (piece_counts: [n]i32)
                                            (piece_steps: [p]i32) (piece_v: [p]f64) (option_offsets: [n]i64)
                                            (option_counts: [n]i32) (option_steps: [o]i32) (option_terms: [o][8]f64)
                                            : [n]real =
    let yc_offsets = exclusive_scan curve_terms
    let one_bond (v: i64) : real =
      let own = geometry_at cf_offsets term_units term_steps a sigma cashflows cashflow_steps spreads v
      let count = i64.i32 piece_counts[v]
      let geo = if count == 0 then own else own with jmax = jmax_over[v] with mdrdt = mdrdt_over[v]
      let cv = i64.i32 curve_index[v]
      let rate_at = B.curve_rate curve_rates curve_days yc_offsets[cv] (i64.i32 curve_terms[cv]) term_units[v]
      let (w, N) = own_shape geo
      let h = window geo
      let tb = tables_of geo h w
      let off = piece_offsets[v]
      let v_at (i: i64) : real =
        let at = loop at = 0 while at + 1 < count && i64.i32 piece_steps[off + at + 1] <= i do at + 1
        in B.r piece_v[off + at]
      let tables_at (i: i64) : tables [w] = if count == 0 then tb else tables_v geo h tb.x (v_at i)
      let fresh (U: *[w]real) : *[w]real = U
      let same (Val: [w]real) : [w]real = Val
      let forward_level (U: *[w]real) (i: i64) (live: i64) (x: i32) : (*[w]real, real) =
        forward_mapped (tables_at (i - 1)) h geo.jmax U live x
      let steps = forward fresh forward_level geo
                          (step_table w N (B.d (B.r (curve_ratio geo rate_at 0))) (curve_ratio geo rate_at))
      let wk = walk_of cf_offsets cashflows cashflow_steps repayments coupons spreads types strikes first_exercise
                       last_exercise frequencies ex_offsets exercise_counts exercise_steps exercise_prices
                       cashflow_times exercise_times a geo rate_at v
      let ooff = option_offsets[v]
      let ocount = i64.i32 option_counts[v]
      -- The bond's options on coupon rates at step i (ascending steps): a range of `option_terms`.
      let options_at (i: i64) : (i64, i64) =
        let lo = loop lo = 0 while lo < ocount && i64.i32 option_steps[ooff + lo] < i do lo + 1
        let hi = loop hi = lo while hi < ocount && i64.i32 option_steps[ooff + hi] == i do hi + 1
        in (ooff + lo, ooff + hi)
      let backward_level (Val: *[w]real) (ev: events) (e: real) : *[w]real =
        let (lo, hi) = if ocount == 0 then (0, 0) else options_at ev.step
        let extra (x: real) : real = B.r (options_value option_terms lo hi (B.d x))
        in tabulate w (level_mapped_node_with (lo < hi) extra (tables_at ev.step) h geo.jmax wk.kind geo.g Val ev e)
      in backward fresh backward_level same steps wk
    in map one_bond (iota n)

  -- | The stepped shape (GPUs, for trees too wide for a workgroup): every bond of a call on levels of `w` nodes (at
  -- least 2 window + 3 of each), the steps an outer loop and each step one map over all bonds' nodes, so a step is a
  -- few kernels however few bonds there are.  The forward pass runs once per lattice on its tallest bond (`heads`,
  -- bond v's lattice `lattice[v]`: as `shared_prices`, or every bond its own), all lattices side by side; then each
  -- bond's walk gives its events for every step at once (a thread a bond), and the backward passes run from the
  -- maturities down, a bond idle until its own height is reached: one kernel a step.
  def stepped_prices [n] [k] [c] [l] [g] [e] (w: i64) (lattice: [n]i64) (heads: [g]i64) (cf_offsets: [n]i64)
                                          (term_units: [n]i32) (term_steps: [n]i32) (a: [n]real) (sigma: [n]real)
                                          (cashflows: [n]i32) (cashflow_steps: [k]i32) (repayments: [k]real)
                                          (coupons: [k]real) (spreads: [n]real) (types: [n]i32) (strikes: [n]real)
                                          (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                          (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]real)
                                          (curve_days: [l]i32) (ex_offsets: [n]i64) (exercise_counts: [n]i32)
                                          (exercise_steps: [e]i32) (exercise_prices: [e]real)
                                          (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]real =
    let yc_offsets = exclusive_scan curve_terms
    let geos = tabulate n (geometry_at cf_offsets term_units term_steps a sigma cashflows cashflow_steps spreads)
    let rate_at (v: i64) : real -> real =
      let cv = i64.i32 curve_index[v]
      in B.curve_rate curve_rates curve_days yc_offsets[cv] (i64.i32 curve_terms[cv]) term_units[v]
    let (pus, pds, xs) = unzip3 (map (\geo -> let tb = tables_of geo (window geo) w in (tb.pu, tb.pd, tb.x)) geos)
    let tables_at (v: i64) : tables [w] = {pu = pus[v], pd = pds[v], x = xs[v]}
    -- The forward pass of the heads: ratios[i, u] = S_{i-1} / S_i of head u (as `ratios_of`; ones beyond its height).
    -- A step is its level's map and the levels' sums (the rescaling exponent is each node's to find from S).
    let tops = map (\v -> i64.max geos[v].n 1) heads
    let head_geos = map (\v -> geos[v]) heads
    let Nf = i64.maximum tops
    let U = tabulate_2d g w (\u q -> if q == F.centre (window head_geos[u]) then one else zero)
    let (_, _, ratios) =
      loop (U, S, ratios) = (U, replicate g one, replicate Nf (replicate g 1f64)) for i_ < Nf - 1 do
        let i = i_ + 1
        let step (u: i64) (q: i64) : real =
          let geo = head_geos[u]
          in if i < tops[u] then forward_mapped_node (tables_at heads[u]) (window geo) geo.jmax U[u] (i64.min i geo.jmax)
                                                     (rescaling S[u]) q
             else U[u, q]
        let U = #[unsafe] tabulate_2d g w step
        let sums = map (reduce (R.+) zero) U
        let next (u: i64) (s: real) (t: real) : (real, f64) =
          if i < tops[u] then (t, B.d (R.ldexp (s R./ t) (-(rescaling s)))) else (s, 1)
        let (S, row) = unzip (map3 next (iota g) S sums)
        in (U, S, ratios with [i] = row)
    -- Every bond's events, all steps at once (its walk reads nothing of its levels), E_i as `shared_steps` makes it.
    let E (v: i64) (i: i64) : real = B.r (shared_E geos[v] (rate_at v) (\i -> ratios[i, lattice[v]]) i)
    let idle : events = {hh = 0, added = zero, bt = {before = (0, 0), dated = false, point = (0, 0), after = (0, 0)},
                         exercise = false, exercise_price = zero, step = 0}
    let Nb = i64.maximum (map (.n) geos)
    let walk (v: i64) : (real, [Nb]events, [Nb]real) =
      let wk = walk_of cf_offsets cashflows cashflow_steps repayments coupons spreads types strikes first_exercise
                       last_exercise frequencies ex_offsets exercise_counts exercise_steps exercise_prices
                       cashflow_times exercise_times a geos[v] (rate_at v) v
      let (last, cur) = walk_start wk
      let (_, evs, es) =
        loop (cur, evs, es) = (cur, replicate Nb idle, replicate Nb one) for i_ < Nb do
          let i = Nb - 1 - i_
          in if i < geos[v].n then let e = E v i
                                   let (ev, cur) = walk_step wk i e cur
                                   in (cur, evs with [i] = ev, es with [i] = e)
             else (cur, evs, es)
      in (last, evs, es)
    let (lasts, evs, es) = unzip3 (#[unsafe] map walk (iota n))
    -- The backward passes: a step is its level's map.
    let V = tabulate_2d n w (\v q -> let h = window geos[v] in if i64.abs (q - F.centre h) <= h then lasts[v] else zero)
    let V =
      loop V for i_ < Nb do
        let i = Nb - 1 - i_
        let node (v: i64) (q: i64) : real =
          let geo = geos[v]
          in if i < geo.n
             then level_mapped_node (tables_at v) (window geo) geo.jmax types[v] geo.g V[v] evs[v, i] es[v, i] q
             else V[v, q]
        in #[unsafe] tabulate_2d n w node
    in tabulate n (\v -> V[v, F.centre (window geos[v])])

  -- | The CPU shape with the forward pass shared by the bonds of one lattice: bond v belongs to
  -- lattice `lattice[v]`, whose longest tree is bond `heads[lattice[v]]` (at most M - 1 steps); the
  -- forward pass runs once per lattice (`ratios_of`) and each bond makes its E_i from its curve.
  def shared_prices [n] [k] [c] [l] [g] [e] (lattice: [n]i64) (heads: [g]i64) (M: i64) (term_units: [n]i32)
                                        (term_steps: [n]i32) (a: [n]real) (sigma: [n]real) (cashflows: [n]i32)
                                        (cashflow_steps: [k]i32) (repayments: [k]real) (coupons: [k]real)
                                        (spreads: [n]real) (types: [n]i32) (strikes: [n]real)
                                        (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                        (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]real)
                                        (curve_days: [l]i32) (exercise_counts: [n]i32) (exercise_steps: [e]i32)
                                        (exercise_prices: [e]real) (cashflow_times: [k]f64) (exercise_times: [e]f64)
                                        : [n]real =
    let cf_offsets = exclusive_scan cashflows
    let ratios = #[unsafe] map (\v -> ratios_of M (geometry_at cf_offsets term_units term_steps a sigma cashflows
                                                      cashflow_steps spreads v))
                     heads
    in prices_with (\f xs -> #[unsafe] map f xs) own_shape true lattice ratios true cf_offsets term_units
                   term_steps a sigma cashflows cashflow_steps repayments coupons spreads types strikes
                   first_exercise last_exercise frequencies curve_index curve_terms curve_rates curve_days
                   (exclusive_scan exercise_counts) exercise_counts exercise_steps exercise_prices cashflow_times
                   exercise_times
}


module fast_bond64 = fast_bond f64
module fast_bond32 = fast_bond f32

-- | Bonds, one per map element with its own forward pass (mapped levels): bonds.fut's 19 arrays
-- (docs/paper-instrument.md §1) and the listed exercise points (bonds.fut's `bonds_listed64`).
entry bonds_listed64 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                         (_maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                         (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32)
                                         (strikes: [n]f64) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                         (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                         (curve_rates: [l]f64) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                         (exercise_steps: [e]i32) (exercise_prices: [e]f64)
                                         (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f64 =
  fast_bond64.prices_with map fast_bond64.own_shape false (replicate n 0) (replicate 0 (replicate 0 0f64)) false
                          (fast_bond64.exclusive_scan cashflows)
                          term_units term_steps a sigma cashflows cashflow_steps repayments coupons spreads
                          types strikes first_exercise last_exercise frequencies curve_index curve_terms
                          curve_rates curve_days (fast_bond64.exclusive_scan exercise_counts) exercise_counts
                          exercise_steps exercise_prices cashflow_times exercise_times

-- | Bonds with sigma pieces or options on coupon rates (`fast_bond.pieces_prices`): `bonds_listed64`'s arrays, then
-- per bond its grid (`jmax_over`, `mdrdt_over`) and its pieces (`piece_counts` of them, the first from step 0: their
-- first steps and their V / dx^2), then its options on coupon rates (`option_counts` of them: their steps,
-- ascending, and their terms).
entry bonds_pieces64 [n] [k] [c] [l] [e] [p] [o] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                             (_maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                             (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64)
                                             (types: [n]i32) (strikes: [n]f64) (first_exercise: [n]i32)
                                             (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                             (curve_terms: [c]i32) (curve_rates: [l]f64) (curve_days: [l]i32)
                                             (exercise_counts: [n]i32) (exercise_steps: [e]i32)
                                             (exercise_prices: [e]f64) (cashflow_times: [k]f64)
                                             (exercise_times: [e]f64) (jmax_over: [n]i64) (mdrdt_over: [n]f64)
                                             (piece_counts: [n]i32) (piece_steps: [p]i32) (piece_v: [p]f64)
                                             (option_counts: [n]i32) (option_steps: [o]i32)
                                             (option_terms: [o][8]f64) : [n]f64 =
  fast_bond64.pieces_prices (fast_bond64.exclusive_scan cashflows) term_units term_steps a sigma cashflows
                            cashflow_steps repayments coupons spreads types strikes first_exercise last_exercise
                            frequencies curve_index curve_terms curve_rates curve_days
                            (fast_bond64.exclusive_scan exercise_counts) exercise_counts exercise_steps exercise_prices
                            cashflow_times exercise_times jmax_over mdrdt_over
                            (fast_bond64.exclusive_scan piece_counts) piece_counts piece_steps piece_v
                            (fast_bond64.exclusive_scan option_counts) option_counts option_steps option_terms

-- | `bonds_pieces64` in float32.
entry bonds_pieces32 [n] [k] [c] [l] [e] [p] [o] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                             (_maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                             (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32)
                                             (types: [n]i32) (strikes: [n]f32) (first_exercise: [n]i32)
                                             (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                             (curve_terms: [c]i32) (curve_rates: [l]f32) (curve_days: [l]i32)
                                             (exercise_counts: [n]i32) (exercise_steps: [e]i32)
                                             (exercise_prices: [e]f32) (cashflow_times: [k]f64)
                                             (exercise_times: [e]f64) (jmax_over: [n]i64) (mdrdt_over: [n]f32)
                                             (piece_counts: [n]i32) (piece_steps: [p]i32) (piece_v: [p]f64)
                                             (option_counts: [n]i32) (option_steps: [o]i32)
                                             (option_terms: [o][8]f64) : [n]f32 =
  fast_bond32.pieces_prices (fast_bond32.exclusive_scan cashflows) term_units term_steps a sigma cashflows
                            cashflow_steps repayments coupons spreads types strikes first_exercise last_exercise
                            frequencies curve_index curve_terms curve_rates curve_days
                            (fast_bond32.exclusive_scan exercise_counts) exercise_counts exercise_steps exercise_prices
                            cashflow_times exercise_times jmax_over mdrdt_over
                            (fast_bond32.exclusive_scan piece_counts) piece_counts piece_steps piece_v
                            (fast_bond32.exclusive_scan option_counts) option_counts option_steps option_terms

-- | `bonds_listed64` without listed exercise points: the paper's 19 arrays (the test above).
entry bonds64 [n] [k] [c] [l] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                              (maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                              (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32)
                              (strikes: [n]f64) (first_exercise: [n]i32) (last_exercise: [n]i32)
                              (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                              (curve_rates: [l]f64) (curve_days: [l]i32) : [n]f64 =
  bonds_listed64 term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons spreads
                 types strikes first_exercise last_exercise frequencies curve_index curve_terms curve_rates
                 curve_days (replicate n 0) (replicate 0 0) (replicate 0 0)
                 (replicate k f64.nan) (replicate 0 0)

-- | Bonds, one per map element with its own forward pass (mapped levels): bonds.fut's 19 arrays
-- (docs/paper-instrument.md §1) and the listed exercise points (bonds.fut's `bonds_listed32`).
entry bonds_listed32 [n] [k] [c] [l] [e] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                         (_maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                         (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32)
                                         (strikes: [n]f32) (first_exercise: [n]i32) (last_exercise: [n]i32)
                                         (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                                         (curve_rates: [l]f32) (curve_days: [l]i32) (exercise_counts: [n]i32)
                                         (exercise_steps: [e]i32) (exercise_prices: [e]f32)
                                         (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f32 =
  fast_bond32.prices_with map fast_bond32.own_shape false (replicate n 0) (replicate 0 (replicate 0 0f64)) false
                          (fast_bond32.exclusive_scan cashflows)
                          term_units term_steps a sigma cashflows cashflow_steps repayments coupons spreads
                          types strikes first_exercise last_exercise frequencies curve_index curve_terms
                          curve_rates curve_days (fast_bond32.exclusive_scan exercise_counts) exercise_counts
                          exercise_steps exercise_prices cashflow_times exercise_times

-- | `bonds_listed32` without listed exercise points: the paper's 19 arrays (the test above).
entry bonds32 [n] [k] [c] [l] (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                              (maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                              (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32)
                              (strikes: [n]f32) (first_exercise: [n]i32) (last_exercise: [n]i32)
                              (frequencies: [n]i32) (curve_index: [n]i32) (curve_terms: [c]i32)
                              (curve_rates: [l]f32) (curve_days: [l]i32) : [n]f32 =
  bonds_listed32 term_units term_steps a sigma maturities cashflows cashflow_steps repayments coupons spreads
                 types strikes first_exercise last_exercise frequencies curve_index curve_terms curve_rates
                 curve_days (replicate n 0) (replicate 0 0) (replicate 0 0)
                 (replicate k f64.nan) (replicate 0 0)

-- | The CPU shape with one forward pass per lattice (`shared_prices`): `lattice` numbers each bond's
-- lattice (its term unit, steps per unit, a and sigma), `heads` names the tallest bond of each and
-- `M` is at least max(n, 1) + 1 of every bond; then bonds.fut's 19 arrays and the listed exercise points.
entry bonds_shared64 [n] [k] [c] [l] [g] [e] (lattice: [n]i64) (heads: [g]i64) (M: i64) (term_units: [n]i32)
                                             (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64) (_maturities: [n]f64)
                                             (cashflows: [n]i32) (cashflow_steps: [k]i32) (repayments: [k]f64)
                                             (coupons: [k]f64) (spreads: [n]f64) (types: [n]i32) (strikes: [n]f64)
                                             (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                             (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]f64)
                                             (curve_days: [l]i32) (exercise_counts: [n]i32) (exercise_steps: [e]i32)
                                             (exercise_prices: [e]f64) (cashflow_times: [k]f64)
                                             (exercise_times: [e]f64) : [n]f64 =
  fast_bond64.shared_prices lattice heads M term_units term_steps a sigma cashflows cashflow_steps repayments
                            coupons spreads types strikes first_exercise last_exercise frequencies curve_index
                            curve_terms curve_rates curve_days exercise_counts exercise_steps exercise_prices cashflow_times
                            exercise_times

entry bonds_shared32 [n] [k] [c] [l] [g] [e] (lattice: [n]i64) (heads: [g]i64) (M: i64) (term_units: [n]i32)
                                             (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32) (_maturities: [n]f32)
                                             (cashflows: [n]i32) (cashflow_steps: [k]i32) (repayments: [k]f32)
                                             (coupons: [k]f32) (spreads: [n]f32) (types: [n]i32) (strikes: [n]f32)
                                             (first_exercise: [n]i32) (last_exercise: [n]i32) (frequencies: [n]i32)
                                             (curve_index: [n]i32) (curve_terms: [c]i32) (curve_rates: [l]f32)
                                             (curve_days: [l]i32) (exercise_counts: [n]i32) (exercise_steps: [e]i32)
                                             (exercise_prices: [e]f32) (cashflow_times: [k]f64)
                                             (exercise_times: [e]f64) : [n]f32 =
  fast_bond32.shared_prices lattice heads M term_units term_steps a sigma cashflows cashflow_steps repayments
                            coupons spreads types strikes first_exercise last_exercise frequencies curve_index
                            curve_terms curve_rates curve_days exercise_counts exercise_steps exercise_prices cashflow_times
                            exercise_times

-- | Bonds one per workgroup (the GPU shape): levels of `w` nodes (at least 2 min(jmax, n) + 3 of
-- every bond) and `N` steps (at least n + 1 of every bond).  `cashflow_offsets`: where each bond's
-- cash flows start in the cash-flow arrays, which may hold other bonds' too (so that a class of a
-- book is priced from the book's cash-flow arrays, without copying them); `cashflows` still
-- counts each bond's.  `exercise_offsets` and `exercise_counts` locate each bond's listed exercise
-- points in `exercise_steps` and `exercise_prices` the same way.
entry bonds_grouped64 [n] [k] [c] [l] [e] (w: i64) (N: i64) (cashflow_offsets: [n]i64)
                                          (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                          (_maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                          (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64)
                                          (types: [n]i32) (strikes: [n]f64) (first_exercise: [n]i32)
                                          (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                          (curve_terms: [c]i32) (curve_rates: [l]f64) (curve_days: [l]i32)
                                          (exercise_offsets: [n]i64) (exercise_counts: [n]i32)
                                          (exercise_steps: [e]i32) (exercise_prices: [e]f64)
                                          (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f64 =
  fast_bond64.prices_with (\f xs -> #[unsafe] #[incremental_flattening(only_intra)] map f xs)
                          (\_ -> (w, N)) false (replicate n 0) (replicate 0 (replicate 0 0f64)) false
                          cashflow_offsets term_units term_steps a sigma cashflows cashflow_steps repayments
                          coupons spreads types strikes first_exercise last_exercise frequencies curve_index
                          curve_terms curve_rates curve_days exercise_offsets exercise_counts exercise_steps
                          exercise_prices cashflow_times exercise_times

entry bonds_grouped32 [n] [k] [c] [l] [e] (w: i64) (N: i64) (cashflow_offsets: [n]i64)
                                          (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                          (_maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                          (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32)
                                          (types: [n]i32) (strikes: [n]f32) (first_exercise: [n]i32)
                                          (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                          (curve_terms: [c]i32) (curve_rates: [l]f32) (curve_days: [l]i32)
                                          (exercise_offsets: [n]i64) (exercise_counts: [n]i32)
                                          (exercise_steps: [e]i32) (exercise_prices: [e]f32)
                                          (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f32 =
  fast_bond32.prices_with (\f xs -> #[unsafe] #[incremental_flattening(only_intra)] map f xs)
                          (\_ -> (w, N)) false (replicate n 0) (replicate 0 (replicate 0 0f64)) false
                          cashflow_offsets term_units term_steps a sigma cashflows cashflow_steps repayments
                          coupons spreads types strikes first_exercise last_exercise frequencies curve_index
                          curve_terms curve_rates curve_days exercise_offsets exercise_counts exercise_steps
                          exercise_prices cashflow_times exercise_times

-- | Bonds in the stepped shape (`stepped_prices`: the GPU targets' shape for trees too wide for a workgroup): levels of
-- `w` nodes (at least 2 min(jmax, n) + 3 of every bond), bond v's lattice `lattice[v]` and the tallest bond of each
-- lattice `heads` (as `bonds_shared64`), then `bonds_grouped64`'s offsets, 19 arrays and listed exercise points.
entry bonds_stepped64 [n] [k] [c] [l] [g] [e] (w: i64) (lattice: [n]i64) (heads: [g]i64) (cashflow_offsets: [n]i64)
                                              (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f64) (sigma: [n]f64)
                                              (_maturities: [n]f64) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                              (repayments: [k]f64) (coupons: [k]f64) (spreads: [n]f64)
                                              (types: [n]i32) (strikes: [n]f64) (first_exercise: [n]i32)
                                              (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                              (curve_terms: [c]i32) (curve_rates: [l]f64) (curve_days: [l]i32)
                                              (exercise_offsets: [n]i64) (exercise_counts: [n]i32)
                                              (exercise_steps: [e]i32) (exercise_prices: [e]f64)
                                              (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f64 =
  fast_bond64.stepped_prices w lattice heads cashflow_offsets term_units term_steps a sigma cashflows cashflow_steps
                             repayments coupons spreads types strikes first_exercise last_exercise frequencies
                             curve_index curve_terms curve_rates curve_days exercise_offsets exercise_counts
                             exercise_steps exercise_prices cashflow_times exercise_times

entry bonds_stepped32 [n] [k] [c] [l] [g] [e] (w: i64) (lattice: [n]i64) (heads: [g]i64) (cashflow_offsets: [n]i64)
                                              (term_units: [n]i32) (term_steps: [n]i32) (a: [n]f32) (sigma: [n]f32)
                                              (_maturities: [n]f32) (cashflows: [n]i32) (cashflow_steps: [k]i32)
                                              (repayments: [k]f32) (coupons: [k]f32) (spreads: [n]f32)
                                              (types: [n]i32) (strikes: [n]f32) (first_exercise: [n]i32)
                                              (last_exercise: [n]i32) (frequencies: [n]i32) (curve_index: [n]i32)
                                              (curve_terms: [c]i32) (curve_rates: [l]f32) (curve_days: [l]i32)
                                              (exercise_offsets: [n]i64) (exercise_counts: [n]i32)
                                              (exercise_steps: [e]i32) (exercise_prices: [e]f32)
                                              (cashflow_times: [k]f64) (exercise_times: [e]f64) : [n]f32 =
  fast_bond32.stepped_prices w lattice heads cashflow_offsets term_units term_steps a sigma cashflows cashflow_steps
                             repayments coupons spreads types strikes first_exercise last_exercise frequencies
                             curve_index curve_terms curve_rates curve_days exercise_offsets exercise_counts
                             exercise_steps exercise_prices cashflow_times exercise_times
