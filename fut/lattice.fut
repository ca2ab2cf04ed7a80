-- The Hull-White one-factor trinomial lattice, defined once for every Futhark program.
--
-- `lattice C R` is the lattice in the real type R (f32 or f64) under the convention C:
-- the tree's geometry (height n, half width jmax, dt, dr, M), the branching probabilities
-- of Hull-White's Exhibits 1A/1B/1C, the branch topology (which node feeds which), the
-- forward gather and the backward expectation, the zero-rate lookup on a yield curve, and
-- the work metric.  The instruments live elsewhere: fut/options.fut (European options on
-- zero-coupon bonds, the thesis') and fut/bonds.fut (coupon bonds with an embedded call or
-- put, the ARRAY'21 paper's).
--
-- Two conventions, each reproducing its source to the last bit: docs/model.md for the thesis,
-- docs/paper-instrument.md §2-§4 and §9 for the paper.  They are the Futhark twins of
-- python/trinom/lattice.py's Convention.THESIS and Convention.PAPER (and curve.py):
--
--                      thesis_convention                  paper_convention
--   used by            trinom-basic.fut, trinom-flat.fut  bonds.fut
--                      (through options.fut), bench-*.fut
--   year               365 days                           360 days
--   u (terms a year)   ceil(365 / term_unit), in R        ceil(360 / term_unit), in f64
--   height n           trunc((term_steps u) T), in R      ceil((term_steps u) T), in f64
--   dt                 u / term_steps, in R               in f64, rounded to R
--   V, dr              in R (dr widened to f64)           in f64, from R products (§9)
--   M = exp(-a dt)-1   in R                               exp in f64, rounded to R
--   jmax               trunc(-0.184 / M) + 1, M in R      the same with M in f64 (from
--                                                         f64 a and the f64 dt)
--   edge multiples     2 (j M), 3 (j M)                   (2 j) M, (3 j) M
--   curve days         round(t term_unit) as              the same as floor(|x|) + 1 when
--                      sgn(x) floor(|x| + 0.5)            |x| - floor(|x|) >= 0.5
--
-- Everything else is common: jjMM = (j*j) M M, pu/pm/pd of case A inside, B at j = -jmax
-- (to j+2, j+1, j), C at j = jmax (to j, j-1, j-2); a node of the next level gathers its
-- sources j-2 .. j+2 in increasing order; the expectation is (pu c_up + pm c_mid) + pd c_down;
-- the curve is flat outside its points and linear in days between them.  For f64 the two
-- conventions differ only in the year, the rounding of n, the edge multiples of 3 and the
-- rounding of curve days: the f64 and R computations of the geometry coincide.  The bond
-- program passes its last cash-flow step as the height (validation makes it equal to the
-- paper's n computed in f64; from an f32 T the product can round up past an integer).
--
-- The conventions are module parameters, so each program's lattice is specialised at
-- compile time; `if C.x then .. else ..` on a convention's flag is a constant condition.

import "constants"

-- | A convention of the lattice: the choices in which the thesis and the paper differ.
module type convention = {
  -- | Days in a year: a year has u = ceil(days_in_year / term_unit) term units.
  val days_in_year : i32
  -- | The height n rounds (term_steps u) T up (ceil) instead of truncating it.
  val height_rounds_up : bool
  -- | u, n, dt, V, dr, M and jmax are computed in f64 (and rounded to R where stored) instead
  -- of in R.
  val geometry_in_f64 : bool
  -- | The edge cases' multiples k j M are (k j) M instead of k (j M).
  val index_multiple_first : bool
  -- | The curve time in days is rounded half away from zero as floor(|x|) plus one when the
  -- fraction is >= 0.5, instead of as floor(|x| + 0.5).
  val round_days_by_fraction : bool
}

-- | The thesis' convention (the sequential C++ pricer, Futhark-basic/flat, trinomialChunk).
module thesis_convention : convention = {
  def days_in_year : i32 = DAYS_IN_YEAR
  def height_rounds_up = false
  def geometry_in_f64 = false
  def index_multiple_first = false
  def round_days_by_fraction = false
}

-- | The ARRAY'21 paper's convention (its C++ and float build, docs/paper-instrument.md).
module paper_convention : convention = {
  def days_in_year : i32 = BOND_DAYS_IN_YEAR
  def height_rounds_up = true
  def geometry_in_f64 = true
  def index_multiple_first = true
  def round_days_by_fraction = true
}

module lattice (C: convention) (R: float) = {
  type real = R.t

  -- | Widening to f64 and rounding to R (both the identity for f64).
  def d (x: real) : f64 = R.to_f64 x
  def r (x: f64) : real = R.f64 x

  def zero : real = R.i32 0
  def one : real = R.i32 1
  def half : real = R.f64 0.5
  def sixth : real = one R./ R.i32 6
  def two_thirds : real = R.i32 2 R./ R.i32 3
  def minus_third : real = R.neg one R./ R.i32 3
  def seven_sixths : real = R.i32 7 R./ R.i32 6

  -- | A tree's constants: n steps (levels 0..n), nodes j in -jmax..jmax (index j + jmax),
  -- time step dt, rate step dr (an f64: the paper keeps it in double; under the thesis'
  -- convention it is computed in R and widened exactly), M = exp(-a dt) - 1.
  type geometry = {n: i64, jmax: i64, dt: real, dr: f64, M: real}

  -- | The height n of a tree for maturity T years (see the table above).
  def height (term_unit: i32) (term_steps: i32) (maturity: real) : i64 =
    if C.geometry_in_f64
    then let u = f64.ceil (f64.i32 C.days_in_year / f64.i32 term_unit)
         let x = (f64.i32 term_steps * u) * d maturity
         in i64.f64 (if C.height_rounds_up then f64.ceil x else x)
    else let u = R.ceil (R.i32 C.days_in_year R./ R.i32 term_unit)
         let x = (R.i32 term_steps R.* u) R.* maturity
         in R.to_i64 (if C.height_rounds_up then R.ceil x else x)

  -- | The geometry of a tree of height n (normally `height term_unit term_steps T`).
  def geometry (term_unit: i32) (term_steps: i32) (a: real) (sigma: real) (n: i64) : geometry =
    if C.geometry_in_f64
    then let u = f64.ceil (f64.i32 C.days_in_year / f64.i32 term_unit)
         let dt64 = u / f64.i32 term_steps
         let dt = r dt64
         let V = (d (sigma R.* sigma) * (1 - f64.exp (d ((R.i32 (-2) R.* a) R.* dt)))) / d (R.i32 2 R.* a)
         let dr = f64.sqrt (3 * V)
         let M = r (f64.exp (d (R.neg a R.* dt)) - 1)
         let jmax = i64.f64 (JMAX_FACTOR / (f64.exp (f64.neg (d a) * dt64) - 1)) + 1
         in {n, jmax, dt, dr, M}
    else let u = R.ceil (R.i32 C.days_in_year R./ R.i32 term_unit)
         let dt = u R./ R.i32 term_steps
         let V = R.(sigma * sigma * (i32 1 - exp (i32 (-2) * a * dt)) / (i32 2 * a))
         let dr = R.sqrt (R.i32 3 R.* V)
         let M = R.exp (R.neg a R.* dt) R.- one
         let jmax = R.to_i64 (R.f64 JMAX_FACTOR R./ M) + 1
         in {n, jmax, dt, dr = d dr, M}

  -- | Tree width 2 jmax + 1.
  def width (jmax: i64) : i64 = 2 * jmax + 1

  -- | Node updates of both passes of one tree: 2 sum_{i<n} (2 min(i, jmax) + 1)
  -- (docs/model.md §1.11, python/trinom/lattice.py `work`; levels below jmax still grow by
  -- two nodes a step).
  def work (n: i64) (jmax: i64) : i64 =
    let k = i64.min n (jmax + 1)
    in 2 * (k * k + (n - k) * width jmax)

  -- | C's round() of a curve time in days: half away from zero, computed in R.
  def round_days (x: real) : i64 =
    if C.round_days_by_fraction
    then let ax = R.abs x
         let f = R.floor ax
         let rounded = if ax R.- f R.>= half then f R.+ one else f
         in if x R.< zero then -(R.to_i64 rounded) else R.to_i64 rounded
    else R.to_i64 (R.sgn x R.* R.floor (R.abs x R.+ half))

  -- | The zero rate at t years on the curve of `count` points (rates at whole days, days
  -- strictly increasing) starting at `off`: the time in days is round(t * term_unit); flat
  -- before the first point and after the last, linear in days between points (a time equal
  -- to a point's day interpolates from the point before, which gives that point's rate).
  def rate_at [l] (rates: [l]real) (days: [l]i32) (off: i64) (count: i64) (term_unit: i32)
                  (t: real) : real =
    let t_days = round_days (t R.* R.i32 term_unit)
    -- the first point at or after t_days (a binary search: curves of a point a day have thousands)
    let (second, _) = loop (lo, hi) = (0, count) while lo < hi do
                        let mid = (lo + hi) / 2
                        in if i64.i32 days[off + mid] < t_days then (mid + 1, hi) else (lo, mid)
    in if second == 0 then rates[off]
       else if second >= count then rates[off + count - 1]
       else let first = off + second - 1
            let t1 = i64.i32 days[first]
            let t2 = i64.i32 days[first + 1]
            let coefficient = R.i64 (t_days - t1) R./ R.i64 (t2 - t1)
            in rates[first] R.+ coefficient R.* (rates[first + 1] R.- rates[first])

  -- The nine probabilities of Hull-White's Exhibit 1 at node j, from jjMM = (j*j) M M and
  -- jM = j M; the edge cases' k j M follow the convention.
  def jj_MM (M: real) (j: i64) : real = R.i64 (j * j) R.* M R.* M
  def j_M (M: real) (j: i64) : real = R.i64 j R.* M
  def multiple (k: i64) (M: real) (j: i64) (jM: real) : real =
    if C.index_multiple_first then R.i64 (k * j) R.* M else R.i64 k R.* jM

  def pu_a (jjMM: real) (jM: real) : real = sixth R.+ (jjMM R.+ jM) R.* half
  def pm_a (jjMM: real) : real = two_thirds R.- jjMM
  def pd_a (jjMM: real) (jM: real) : real = sixth R.+ (jjMM R.- jM) R.* half
  def pu_b (jjMM: real) (jM: real) : real = sixth R.+ (jjMM R.- jM) R.* half
  def pm_b (M: real) (j: i64) (jjMM: real) (jM: real) : real = (minus_third R.- jjMM) R.+ multiple 2 M j jM
  def pd_b (M: real) (j: i64) (jjMM: real) (jM: real) : real =
    seven_sixths R.+ (jjMM R.- multiple 3 M j jM) R.* half
  def pu_c (M: real) (j: i64) (jjMM: real) (jM: real) : real =
    seven_sixths R.+ (jjMM R.+ multiple 3 M j jM) R.* half
  def pm_c (M: real) (j: i64) (jjMM: real) (jM: real) : real = (minus_third R.- jjMM) R.- multiple 2 M j jM
  def pd_c (jjMM: real) (jM: real) : real = sixth R.+ (jjMM R.+ jM) R.* half

  -- | Branching probabilities (pu, pm, pd) of node j: case B at j = -jmax (to j+2, j+1, j),
  -- case C at j = jmax (to j, j-1, j-2), else A (to j+1, j, j-1).  pu goes to the highest
  -- destination, pd to the lowest.
  def probabilities (M: real) (jmax: i64) (j: i64) : (real, real, real) =
    let jjMM = jj_MM M j
    let jM = j_M M j
    in if j == -jmax then (pu_b jjMM jM, pm_b M j jjMM jM, pd_b M j jjMM jM)
       else if j == jmax then (pu_c M j jjMM jM, pm_c M j jjMM jM, pd_c jjMM jM)
       else (pu_a jjMM jM, pm_a jjMM, pd_a jjMM jM)

  -- | `probabilities` at a step whose variance over dx^2 is v (a tree with sigma pieces: each step's own, see
  -- python/trinom/model/piecewise_tree.py): (v + e^2 + e) / 2, 1 - v - e^2, (v + e^2 - e) / 2 with e the mean's
  -- distance from the middle branch, Hull-White's own where v = 1/3.
  def probabilities_v (M: real) (jmax: i64) (j: i64) (v: real) : (real, real, real) =
    let jM = j_M M j
    let jjMM = jM R.* jM
    let hv = v R.* half
    let two = R.i32 2
    let three = R.i32 3
    in if j == -jmax then (hv R.+ (jjMM R.- jM) R.* half, (R.neg v R.- jjMM) R.+ two R.* jM,
                           (one R.+ hv) R.+ (jjMM R.- three R.* jM) R.* half)
       else if j == jmax then ((one R.+ hv) R.+ (jjMM R.+ three R.* jM) R.* half, (R.neg v R.- jjMM) R.- two R.* jM,
                               hv R.+ (jjMM R.+ jM) R.* half)
       else (hv R.+ (jjMM R.+ jM) R.* half, (one R.- v) R.- jjMM, hv R.+ (jjMM R.- jM) R.* half)

  -- | The destinations (up, mid, down) of node j's branches.
  def destinations (jmax: i64) (j: i64) : (i64, i64, i64) =
    if j == -jmax then (j + 2, j + 1, j)
    else if j == jmax then (j, j - 1, j - 2)
    else (j + 1, j, j - 1)

  -- | Probability of the branch from node `src` to node `src + step`; zero when node `src`
  -- does not branch there.  Computes only the one probability it needs.
  def branch_probability (M: real) (jmax: i64) (src: i64) (step: i64) : real =
    let jjMM = jj_MM M src
    let jM = j_M M src
    in if src == -jmax then (if step == 2 then pu_b jjMM jM else if step == 1 then pm_b M src jjMM jM
                             else if step == 0 then pd_b M src jjMM jM else zero)
       else if src == jmax then (if step == 0 then pu_c M src jjMM jM else if step == -1 then pm_c M src jjMM jM
                                 else if step == -2 then pd_c jjMM jM else zero)
       else (if step == 1 then pu_a jjMM jM else if step == 0 then pm_a jjMM
             else if step == -1 then pd_a jjMM jM else zero)

  -- | The same, with the probabilities (pu, pm, pd) of node `src` already at hand.
  def pick_probability (jmax: i64) (src: i64) (step: i64) ((pu, pm, pd): (real, real, real)) : real =
    if src == -jmax then (if step == 2 then pu else if step == 1 then pm else if step == 0 then pd else zero)
    else if src == jmax then (if step == 0 then pu else if step == -1 then pm else if step == -2 then pd else zero)
    else (if step == 1 then pu else if step == 0 then pm else if step == -1 then pd else zero)

  -- | The forward gather: node j of the next level from the values e(src) of the nodes
  -- src = j-2 .. j+2 of this level, sum_src p(src -> j) e(src).  The terms are added in
  -- ascending src, the order in which the sequential scatter adds them, so the sum is the
  -- same to the last bit.  `prob src step` is the probability of the branch src -> src+step
  -- (zero if none); `e` is only called for nodes inside the tree.
  def forward_node (jmax: i64) (prob: i64 -> i64 -> real) (e: i64 -> real) (j: i64) : real =
    let term (src: i64) : real =
      if src < -jmax || src > jmax then zero
      else let p = prob src (j - src)
           in if p R.== zero then zero else p R.* e src
    in term (j - 2) R.+ term (j - 1) R.+ term j R.+ term (j + 1) R.+ term (j + 2)

  -- | The backward expectation at node j, (pu c(up) + pm c(mid)) + pd c(down), before
  -- discounting; `c` gives the next level's values by node.
  def expected_value (jmax: i64) ((pu, pm, pd): (real, real, real)) (c: i64 -> real) (j: i64) : real =
    let (up, mid, down) = destinations jmax j
    in R.(pu * c up + pm * c mid + pd * c down)
}
