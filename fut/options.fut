-- The Hull-White trinomial-tree model, once for both Futhark programs.
--
-- `hull_white R` is parameterised over the real type (f32 or f64).  Every formula is
-- evaluated in R, in the order of the thesis' sequential pricer and of the NumPy model
-- (python/trinom/model.py and curve.py), so that f64 prices match the reference outputs
-- to rounding and f32 prices match the thesis' float outputs.  See docs/model.md §1.3-1.9.
--
-- Per option: K = ceil(365/term_unit), n = int(term_steps*K*maturity), dt = K/term_steps,
-- V = sigma^2 (1 - exp(-2 a dt)) / (2a), dr = sqrt(3V), M = exp(-a dt) - 1,
-- jmax = int(-0.184/M) + 1, width = 2 jmax + 1; nodes j in -jmax..jmax sit at index j+jmax.

import "constants"

module hull_white (R: real) = {
  type real = R.t

  -- | One European option on a zero-coupon bond (the thesis' eight fields).
  type option = {strike: real, maturity: real, expiry: real, term_unit: i32,
                 term_steps: i32, a: real, sigma: real, kind: i32}

  -- | Per-option tree constants.
  type tree = {n: i64, jmax: i64, dt: real, dr: real, M: real, expiry_step: i64}

  def zero : real = R.i32 0
  def one : real = R.i32 1

  -- | An option that prices to zero instantly (used to pad arrays of options).
  def no_option : option =
    {strike = zero, maturity = zero, expiry = zero, term_unit = DAYS_IN_YEAR,
     term_steps = 1, a = one, sigma = one, kind = CALL}

  -- | The tree constants of an option (docs/model.md §1.3), computed in R.
  def tree_of (o: option) : tree =
    let terms_per_year = R.ceil (R.i32 DAYS_IN_YEAR R./ R.i32 o.term_unit)
    let steps = R.i32 o.term_steps
    let n = R.to_i64 (steps R.* terms_per_year R.* o.maturity)
    let dt = terms_per_year R./ steps
    let V = R.(o.sigma * o.sigma * (i32 1 - exp (i32 (-2) * o.a * dt)) / (i32 2 * o.a))
    let dr = R.sqrt (R.i32 3 R.* V)
    let M = R.exp (R.neg o.a R.* dt) R.- one
    let jmax = R.to_i64 (R.f64 JMAX_FACTOR R./ M) + 1
    let expiry_step = R.to_i64 (o.expiry R./ dt)
    in {n, jmax, dt, dr, M, expiry_step}

  def width (t: tree) : i64 = 2 * t.jmax + 1

  -- | C's round(): half away from zero, in R.
  def round_half_away (x: real) : i64 =
    R.to_i64 (R.sgn x R.* R.floor (R.abs x R.+ R.f64 0.5))

  -- | Zero rate at t years on a curve of rates at whole days (curve.py `rate_at`): the time
  -- in days is round(t * term_unit); flat before the first and after the last point,
  -- linear in days between points.
  def rate_at [y] (rates: [y]real) (days: [y]i32) (term_unit: i32) (t: real) : real =
    let t_days = round_half_away (t R.* R.i32 term_unit)
    let second = loop s = 0 while s < y && i64.i32 days[s] < t_days do s + 1
    in if second == 0 then rates[0]
       else if second >= y then rates[y - 1]
       else let first = second - 1
            let t1 = i64.i32 days[first]
            let t2 = i64.i32 days[second]
            let coefficient = R.i64 (t_days - t1) R./ R.i64 (t2 - t1)
            in rates[first] R.+ coefficient R.* (rates[second] R.- rates[first])

  -- The three cases of Hull-White's Exhibit 1 for node j, each (pu, pm, pd); `jjMM` is
  -- j*j*M*M and `jM` is j*M.  pu goes to the highest destination, pd to the lowest.
  def half : real = R.f64 0.5
  def sixth : real = one R./ R.i32 6
  def seven_sixths : real = R.i32 7 R./ R.i32 6

  def pu_a (jjMM: real) (jM: real) : real = R.(sixth + (jjMM + jM) * half)
  def pm_a (jjMM: real) (_jM: real) : real = R.(i32 2 / i32 3 - jjMM)
  def pd_a (jjMM: real) (jM: real) : real = R.(sixth + (jjMM - jM) * half)
  def pu_b (jjMM: real) (jM: real) : real = R.(sixth + (jjMM - jM) * half)
  def pm_b (jjMM: real) (jM: real) : real = R.(neg one / i32 3 - jjMM + i32 2 * jM)
  def pd_b (jjMM: real) (jM: real) : real = R.(seven_sixths + (jjMM - i32 3 * jM) * half)
  def pu_c (jjMM: real) (jM: real) : real = R.(seven_sixths + (jjMM + i32 3 * jM) * half)
  def pm_c (jjMM: real) (jM: real) : real = R.(neg one / i32 3 - jjMM - i32 2 * jM)
  def pd_c (jjMM: real) (jM: real) : real = R.(sixth + (jjMM + jM) * half)

  def jj_MM (M: real) (j: i64) : real = R.i64 (j * j) R.* M R.* M
  def j_M (M: real) (j: i64) : real = R.i64 j R.* M

  -- | Branching probabilities (pu, pm, pd) of node j (Exhibits 1A/1B/1C): case B at
  -- j = -jmax (to j+2, j+1, j), case C at j = jmax (to j, j-1, j-2), else A (j+1, j, j-1).
  def probabilities (M: real) (jmax: i64) (j: i64) : (real, real, real) =
    let jjMM = jj_MM M j
    let jM = j_M M j
    in if j == -jmax then (pu_b jjMM jM, pm_b jjMM jM, pd_b jjMM jM)
       else if j == jmax then (pu_c jjMM jM, pm_c jjMM jM, pd_c jjMM jM)
       else (pu_a jjMM jM, pm_a jjMM jM, pd_a jjMM jM)

  -- | Probability of the branch from node `src` to node `src + d`; zero when node `src`
  -- does not branch there.  Computes only the one probability it needs.
  def branch_probability (M: real) (jmax: i64) (src: i64) (d: i64) : real =
    let jjMM = jj_MM M src
    let jM = j_M M src
    in if src == -jmax then (if d == 2 then pu_b jjMM jM else if d == 1 then pm_b jjMM jM
                             else if d == 0 then pd_b jjMM jM else zero)
       else if src == jmax then (if d == 0 then pu_c jjMM jM else if d == -1 then pm_c jjMM jM
                                 else if d == -2 then pd_c jjMM jM else zero)
       else (if d == 1 then pu_a jjMM jM else if d == 0 then pm_a jjMM jM
             else if d == -1 then pd_a jjMM jM else zero)

  -- | The same, with the probabilities of node `src` already at hand.
  def pick_probability (jmax: i64) (src: i64) (d: i64) ((pu, pm, pd): (real, real, real)) : real =
    if src == -jmax then (if d == 2 then pu else if d == 1 then pm else if d == 0 then pd else zero)
    else if src == jmax then (if d == 0 then pu else if d == -1 then pm else if d == -2 then pd else zero)
    else (if d == 1 then pu else if d == 0 then pm else if d == -1 then pd else zero)

  -- | exp(-(alpha + j dr) dt): one step's discount factor at node j.
  def discount (alpha: real) (dr: real) (dt: real) (j: i64) : real =
    R.exp (R.neg (alpha R.+ R.i64 j R.* dr) R.* dt)

  -- | exp(-j dr dt): the weight of node j in the sum that fits the next alpha.
  def level_weight (dr: real) (dt: real) (j: i64) : real =
    R.exp (R.i64 (-j) R.* dr R.* dt)

  -- | Arrow-Debreu price of node j of the next level, gathered from the discounted prices
  -- e(src) = Q[src] exp(-(alpha + src dr) dt) of the nodes src = j-2 .. j+2 of this level.
  -- The terms are added in ascending src, the order in which the sequential scatter adds
  -- them, so the sum is the same to the last bit.  `prob src d` is the probability of the
  -- branch src -> src+d (zero if none); `e` is only called for nodes inside the tree.
  def forward_node (jmax: i64) (prob: i64 -> i64 -> real) (e: i64 -> real) (j: i64) : real =
    let term (src: i64) : real =
      if src < -jmax || src > jmax then zero
      else let p = prob src (j - src)
           in if p R.== zero then zero else p R.* e src
    in term (j - 2) R.+ term (j - 1) R.+ term j R.+ term (j + 1) R.+ term (j + 2)

  -- | pu C[up] + pm C[mid] + pd C[down] at node j (before discounting), `c` giving the
  -- prices of the next level by node.
  def expected_value (jmax: i64) ((pu, pm, pd): (real, real, real)) (c: i64 -> real) (j: i64) : real =
    let (up, mid, down) = if j == -jmax then (j + 2, j + 1, j)
                          else if j == jmax then (j, j - 1, j - 2)
                          else (j + 1, j, j - 1)
    in R.(pu * c up + pm * c mid + pd * c down)

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

  -- | The price of one option (model-spec §1.9, "complete, implementable version"), in the
  -- nested form of the assignment's Figure 1: a forward loop with an inner map and reduce,
  -- then a backward loop with an inner map.  The forward loop stops at alpha[n-1], the
  -- last alpha the backward loop reads.  When maturity <= expiry the payoff step is never
  -- reached and the price is the bond's.
  def trinomialSingle [y] (rates: [y]real) (days: [y]i32) (o: option) : real =
    let t = tree_of o
    let jmax = t.jmax
    let w = width t
    let n = i64.max t.n 1
    let alphas = replicate n zero with [0] = rate_at rates days o.term_unit t.dt
    let Q = tabulate w (\k -> if k == jmax then one else zero)
    let (_, alphas) =
      loop (Q, alphas) for i < n - 1 do
        let alpha = alphas[i]
        let E = tabulate w (\k -> Q[k] R.* discount alpha t.dr t.dt (k - jmax))
        let Qn = tabulate w (\k -> forward_node jmax (branch_probability t.M jmax)
                                                (\src -> E[src + jmax]) (k - jmax))
        let tmps = tabulate w (\k -> Qn[k] R.* level_weight t.dr t.dt (k - jmax))
        let s = reduce (R.+) zero tmps
        let alphas[i + 1] = next_alpha rates days o.term_unit t.dt i s
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
                            else let ev = expected_value jmax (probabilities t.M jmax j)
                                                         (\jj -> C[jj + jmax]) j
                                 in backward_node o t alpha i ev j)
    in C[jmax]

  -- | Options from the ten input arrays' first eight columns.
  def options [q] (strikes: [q]real) (maturities: [q]real) (expiries: [q]real)
                  (term_units: [q]i32) (term_steps: [q]i32) (a: [q]real) (sigma: [q]real)
                  (types: [q]i32) : [q]option =
    map (\i -> {strike = strikes[i], maturity = maturities[i], expiry = expiries[i],
                term_unit = term_units[i], term_steps = term_steps[i], a = a[i],
                sigma = sigma[i], kind = types[i]})
        (iota q)
}
