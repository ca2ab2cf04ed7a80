-- Per-trade Hull-White calibration (issue 26): every trade's (a, sigma) fitted to its basket of
-- European swaptions by a bounded Levenberg-Marquardt, one trade per map element.
--
-- The arithmetic is python/trinom/model's, step for step:
--
-- * a swaption's price and its derivatives in a and sigma are `jamshidian_swaption` with
--   root="exact" and gradient=True (model/hull_white.py): the root x* of
--   sum_i w_i exp(-beta_i x - gamma_i) = N by Newton's method from x = 0 (`_jamshidian_root`: steps
--   clipped to [-1, 1], stop on a negligible step or a residual within its rounding, at most 60
--   iterations, NaN otherwise), then the gathered form of the price and the bond options' vegas
--   times d v_i / d a and d v_i / d sigma (`bond_factor`, `short_rate_variance`, `_dlog_bond_factor`
--   with its series below a tau = 1e-3);
-- * the solver is `levenberg_marquardt` (model/calibration.py) for k = 2: the undamped Gauss-Newton
--   step (pseudo-inverse, singular values below 1e-15 of the largest dropped) on the free parameters
--   not blocked at a bound decides convergence ("gradient") and the polish rule; the damped step
--   solves (J'J + mu max(diag J'J, floor)) d = -J'r, is projected onto the bounds and accepted where
--   rho > 1e-4 and the cost does not rise; Nielsen's damping update; "step", "cost" and "stalled"
--   stops; codes CONVERGED 0, MAX_ITERATIONS 1, NOT_FINITE 2, NOT_RUN 3.
--
-- Only the rounding differs from NumPy: sums run in order here (NumPy sums pairwise), and expm1 is a
-- series (Futhark has none).
--
-- Structure: a map over trades; in each a while loop of LM iterations whose residual function is a
-- sequential loop over the trade's quotes and their cash flows, so that one trade is one thread on
-- every target (the quotes are few, the trades many).  A swaption's bond factors B(T, t_i) are
-- computed once per evaluation into a per-thread row and shared by the Newton iterations and the
-- price.
--
-- The cash flows come per trade, not per quote: a trade's co-terminal swaptions share their fixed
-- leg's dates (quote k's leg is the `len` flows of its trade's table from `first`), so that the
-- table is one schedule for a trade whose exercise dates lie on it and the input grows with the
-- trade's periods rather than with quotes times periods.  A quote's cash flows are made here as
-- NumPy makes them (K tau_i N, the notional added to the last).
--
-- Entry point `calibrate64` (python/trinom/model/calibration_kernel.py is its caller):
--   max_iterations tolerance x_scale damping
--   x0 lower upper ([n][2] f64: a, sigma; bounds may be -inf/inf) free ([n][2] i8: 1 = free)
--   per quote ([n][q]): valid (i8), expiry T, start t0, discount_start P(0, t0), notional N,
--     payer (i8), market price, scale (the residual's: 1 / market for relative_price, 1 for price),
--     fixed rate K, first (i64: its leg's first flow in the trade's table), len (i64: the leg's flows)
--   per trade cash flow ([n][f]): pay time t_i, accrual fraction tau_i, P(0, t_i)
-- It returns [n][11 + 2q] f64: a, sigma, cost, code, reason (0 none, 1 gradient, 2 step, 3 cost,
-- 4 stalled), iterations, at_lower (a, sigma), at_upper (a, sigma), moving (1 where a free
-- parameter moves some quote's residual at the end: 0 is a flat objective), then the q residuals
-- and the q model prices at the end (0 in empty slots).
--
-- Entry point `calibrate_scenarios64`: the same fits of many scenarios of the same trades (a risk
-- run's recalibration), without restaging what the scenarios share.  Rows are (scenario, trade)
-- pairs; per trade, once: its q slots' quotes (`quote`, an index into the per-quote arrays, -1 for
-- an empty slot; quotes that are alike may share one index), their legs (first, len) and the
-- trade's table of flows (pay time, accrual fraction, and `date`: the flow's index into each
-- scenario's discount factors); per quote, once: expiry T (= start t0), notional N, payer; per
-- scenario and quote ([S][v]): valid, market price, scale, fixed rate K, P(0, t0); per scenario
-- ([S][u]): the discount factors the tables' dates index; per row ([S][n][2]): x0, lower, upper,
-- free.  It returns [S][n][11] (with_model: [S][n][11 + q], the model prices per slot after the
-- eleven): the fit of calibrate64 on the same quotes.  A slot whose quote is not valid in a
-- scenario adds exact zeros to the sums, as calibrate64's empty slots do, so the fits are the bits
-- calibrate64 gives for the same quotes compacted.
--
-- The test below: two trades whose quotes are Hull-White prices (an exact fit): three payer
-- swaptions at a = 0.04, sigma = 0.011 (a free from 0.05), and one receiver at sigma = 0.009 with
-- a fixed at 0.02 (one empty slot); tolerance 1e-10; each quote's leg its own segment of its
-- trade's table (its cash flows as accruals at a rate of 1).  NumPy's levenberg_marquardt on
-- Swaptions.price takes the same iterations and stops to the same parameters (within 1e-11).
-- futhark test compares reals only to 0.002 of the largest expected value (here the iteration
-- count), so this checks codes, stops, iterations and the flat-objective flag;
-- tests/test_calibration_kernel.py checks thousands of baskets against NumPy to the last digits
-- that can agree.
-- ==
-- entry: calibrate64
-- input {
--   200i32
--   1e-10f64
--   1e-12f64
--   0.001f64
--   [[0.05f64, 0.01f64], [0.02f64, 0.01f64]]
--   [[1e-08f64, 1e-08f64], [-f64.inf, 1e-08f64]]
--   [[5.0f64, 1.0f64], [f64.inf, 1.0f64]]
--   [[1i8, 1i8], [0i8, 1i8]]
--   [[1i8, 1i8, 1i8], [1i8, 0i8, 0i8]]
--   [[1.0f64, 2.0054794520547947f64, 3.0027397260273974f64], [2.0054794520547947f64, 0.0f64,
--   0.0f64]]
--   [[1.0f64, 2.0054794520547947f64, 3.0027397260273974f64], [2.0054794520547947f64, 0.0f64,
--   0.0f64]]
--   [[0.9753099120283326f64, 0.9510991280247174f64, 0.927679944430264f64], [0.9510991280247174f64,
--   1.0f64, 1.0f64]]
--   [[1.0f64, 1.0f64, 1.0f64], [1.0f64, 1.0f64, 1.0f64]]
--   [[1i8, 1i8, 1i8], [0i8, 0i8, 0i8]]
--   [[0.018078123433871662f64, 0.02017901383265014f64, 0.018298233174839806f64],
--   [0.01337402123960657f64, 1.0f64, 1.0f64]]
--   [[55.31547583785012f64, 49.556435626302786f64, 54.65008508990948f64], [74.77182681888857f64,
--   1.0f64, 1.0f64]]
--   [[1.0f64, 1.0f64, 1.0f64], [1.0f64, 1.0f64, 1.0f64]]
--   [[0i64, 6i64, 12i64], [0i64, 6i64, 12i64]]
--   [[5i64, 4i64, 3i64], [6i64, 0i64, 0i64]]
--   [[2.0f64, 3.0f64, 4.002739726027397f64, 5.002739726027397f64, 6.002739726027397f64, 0.0f64,
--   3.0054794520547947f64, 4.008219178082192f64, 5.008219178082192f64, 6.002739726027397f64,
--   6.002739726027397f64, 0.0f64, 4.005479452054795f64, 5.005479452054795f64, 6.002739726027397f64,
--   6.002739726027397f64, 6.002739726027397f64, 0.0f64], [2.5013698630136987f64,
--   3.0054794520547947f64, 3.504109589041096f64, 4.008219178082192f64, 4.504109589041096f64,
--   5.002739726027397f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64,
--   0.0f64, 0.0f64, 0.0f64]]
--   [[0.027143228977125594f64, 0.027143228977125594f64, 0.027143228977125594f64,
--   0.027143228977125594f64, 0.027143228977125622f64, 0.0f64, 0.027634056038444457f64,
--   0.027634056038444457f64, 0.027634056038444457f64, 0.027480533504897542f64, 0.0f64, 0.0f64,
--   0.028447433706399086f64, 0.028447433706399086f64, 0.028368413057214603f64, 0.0f64, 0.0f64,
--   0.0f64], [0.012589620921941649f64, 0.012589620921941649f64, 0.012589620921941649f64,
--   0.012589620921941649f64, 0.012589620921941649f64, 0.012449736245031096f64, 0.0f64, 0.0f64,
--   0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64]]
--   [[0.951229424500714f64, 0.9277434863285529f64, 0.9047754449927293f64, 0.8824364596612544f64,
--   0.8526540344148185f64, 1.0f64, 0.927616406884011f64, 0.9046515116397291f64,
--   0.8822704664573685f64, 0.8526540344148185f64, 1.0f64, 1.0f64, 0.9047134761940828f64,
--   0.8823534591558667f64, 0.8526540344148185f64, 1.0f64, 1.0f64, 1.0f64], [0.9393808916841211f64,
--   0.927616406884011f64, 0.9161247444104094f64, 0.9046515116397291f64, 0.893505543877895f64,
--   0.8824364596612544f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64, 1.0f64,
--   1.0f64, 1.0f64, 1.0f64]]
-- }
-- output {
--   [[0.040000000000094f64, 0.011000000000003f64, 0.000000000000000f64, 0.000000000000000f64,
--   1.000000000000000f64, 12.000000000000000f64, 0.000000000000000f64, 0.000000000000000f64,
--   0.000000000000000f64, 0.000000000000000f64, 1.000000000000000f64, 0.000000000000000f64,
--   0.000000000000000f64, 0.000000000000003f64, 0.018078123433872f64, 0.020179013832650f64,
--   0.018298233174840f64], [0.020000000000000f64, 0.009000000000036f64, 0.000000000000000f64,
--   0.000000000000000f64, 1.000000000000000f64, 3.000000000000000f64, 0.000000000000000f64,
--   0.000000000000000f64, 0.000000000000000f64, 0.000000000000000f64, 1.000000000000000f64,
--   0.000000000004030f64, 0.000000000000000f64, 0.000000000000000f64, 0.013374021239660f64,
--   0.000000000000000f64, 0.000000000000000f64]]
-- }

-- | Solver outcomes (python/trinom/model/calibration.py).
def CONVERGED: f64 = 0
def MAX_ITERATIONS: f64 = 1
def NOT_FINITE: f64 = 2
def NOT_RUN: f64 = 3
-- | Why a converged trade stopped.
def GRADIENT: f64 = 1
def STEP: f64 = 2
def COST: f64 = 3
def STALLED: f64 = 4

-- | A change of the cost below this fraction of it is rounding.
def NOISE: f64 = 1e-13
-- | Newton iterations of the Jamshidian root.
def MAX_ROOT_ITERATIONS: i32 = 60
-- | Below this a tau the bond factor's derivative in a uses its series.
def SMALL: f64 = 1e-3
-- | Singular values below this fraction of the largest are dropped by the pseudo-inverse (NumPy's pinv).
def RCOND: f64 = 1e-15

-- | NumPy's maximum and minimum: NaN if either is NaN (f64.max/min ignore a NaN).
def nan_max (x: f64) (y: f64) : f64 = if f64.isnan x || f64.isnan y then f64.nan else f64.max x y
def nan_min (x: f64) (y: f64) : f64 = if f64.isnan x || f64.isnan y then f64.nan else f64.min x y
-- | Neither NaN nor infinite.
def finite64 (x: f64) : bool = !(f64.isnan x || f64.isinf x)

-- | np.clip.
def clip (x: f64) (lo: f64) (hi: f64) : f64 = nan_min (nan_max x lo) hi

-- | exp(y) - 1 to within an ulp or two (Futhark has no expm1): below ln(2) / 2 in magnitude its
-- Taylor series to y^14 / 14! (the next term is below 1e-17 of the sum), above it exp(y) - 1 (which
-- loses at most a bit or two there).
def expm1 (y: f64) : f64 =
  if f64.abs y < 0.34657359027997264
  then let p = 1.1470745597729725e-11
       let p = 1.6059043836821613e-10 + y * p
       let p = 2.08767569878681e-09 + y * p
       let p = 2.505210838544172e-08 + y * p
       let p = 2.755731922398589e-07 + y * p
       let p = 2.7557319223985893e-06 + y * p
       let p = 2.48015873015873e-05 + y * p
       let p = 0.0001984126984126984 + y * p
       let p = 0.001388888888888889 + y * p
       let p = 0.008333333333333333 + y * p
       let p = 0.041666666666666664 + y * p
       let p = 0.16666666666666666 + y * p
       let p = 0.5 + y * p
       let p = 1.0 + y * p
       in y * p
  else f64.exp y - 1

-- | B = (1 - exp(-a tau)) / a (tau where a is 0).
def bond_factor (a: f64) (tau: f64) : f64 =
  if a == 0 then tau else -(expm1 (-a * tau)) / a

-- | d log B(tau) / d a, with its series where a tau is small.
def dlog_bond_factor (a: f64) (tau: f64) : f64 =
  let y = a * tau
  in if f64.abs y < SMALL then -0.5 * tau + y * tau / 12 - y ** 3 * tau / 720
     else (y / expm1 y - 1) / a

def normal_cdf (x: f64) : f64 = 0.5 * f64.erfc (-x / f64.sqrt 2)
def normal_pdf (x: f64) : f64 = f64.exp (-0.5 * x * x) / f64.sqrt (2 * f64.pi)

-- | One swaption's price and its derivatives in a and sigma (Jamshidian, the exact root): its fixed
-- leg is the `len` flows of the trade's table from `first`, the flow j paying K tau_j N (the last
-- also N; a flow of 0 pays nothing) at t_j, discounted by P[date_j]; `c` (at least every leg's
-- length) sizes the per-thread row of bond factors.
def swaption [f][u] (c: i64) (a: f64) (sigma: f64) (T: f64) (t0: f64) (P0: f64) (N: f64) (payer: bool) (K: f64)
                    (first: i64) (len: i64) (t: [f]f64) (tau: [f]f64) (date: [f]i64) (P: [u]f64)
                    : (f64, f64, f64) =
  -- the cash flow j of the leg, as NumPy's Swaptions.amounts makes it: K tau N, the notional added to the last
  let amount (j: i64) : f64 = let cf = K * tau[first + j] * N in if j == len - 1 then cf + N else cf
  let V = sigma * sigma * bond_factor (2 * a) T
  let root_v = f64.sqrt V
  let B0 = bond_factor a (t0 - T)
  let Bs = tabulate c (\j -> if j < len && amount j != 0 then bond_factor a (t[first + j] - T) else 0)
  -- the root: Newton from 0
  let (x, _, converged) =
    loop (x, i, done) = (0f64, 0i32, false) while !done && i < MAX_ROOT_ITERATIONS do
      let (total, slope) =
        loop (total, slope) = (0f64, 0f64) for j < len do
          let cf = amount j
          in if cf == 0 then (total, slope)
             else let Bi = Bs[j]
                  let beta = Bi - B0
                  let gamma = 0.5 * beta * (Bi + B0) * V
                  let term = cf * P[date[first + j]] / P0 * f64.exp (-beta * x - gamma)
                  in (total + term, slope + term * beta)
      let h = total - N
      let raw = -h / -slope
      let step = if finite64 raw then f64.max (-1) (f64.min 1 raw) else 0
      let stop = f64.abs step <= 1e-15 * f64.max 1 (f64.abs x) + 1e-300
                 || f64.abs h <= 4 * f64.epsilon * (total + f64.abs N)
      in (x + step, i + 1, stop)
  let x = if converged then x else f64.nan
  let sign = if payer then -1f64 else 1f64
  let safe = if root_v > 0 then root_v else 1
  let inf_side = if x > 0 then f64.inf else -f64.inf
  let d0 = if root_v > 0 then x / safe + B0 * root_v else inf_side
  let tau0 = t0 - T
  let dlog_t = dlog_bond_factor (2 * a) T
  let (sum_cdf, sum_sigma, sum_a) =
    loop (sum_cdf, sum_sigma, sum_a) = (0f64, 0f64, 0f64) for j < len do
      let cf = amount j
      in if cf == 0 then (sum_cdf, sum_sigma, sum_a)
         else let Bi = Bs[j]
              let cp = cf * P[date[first + j]]
              let di = if root_v > 0 then x / safe + Bi * root_v else inf_side
              let vega = cp * normal_pdf di
              let v = root_v * (Bi - B0)
              let dlog_v = dlog_bond_factor a (t[first + j] - t0) - tau0 + dlog_t
              in (sum_cdf + cp * normal_cdf (sign * di), sum_sigma + vega * v, sum_a + vega * v * dlog_v)
  let price = nan_max (sign * (sum_cdf - N * P0 * normal_cdf (sign * d0))) 0
  in (price, sum_a, sum_sigma / sigma)

-- | A trade's quotes as the solver sees them: slot k holds the quote `quote[k]` (-1: none) of the
-- per-quote arrays ([v]: valid, its swaption, market price, the residual's scale), its leg the
-- `len[k]` flows of the trade's table from `first[k]` (pay times, accrual fractions, and each flow's
-- discount factor discount[date[i]]); `c` is the longest leg of all trades.  The per-quote arrays
-- and the discount factors are slices of the caller's (no copy per thread).
type quotes [q][v][f][u] = {c: i64, quote: [q]i64, first: [q]i64, len: [q]i64,
                            valid: [v]i8, expiry: [v]f64, start: [v]f64, discount_start: [v]f64,
                            notional: [v]f64, payer: [v]i8, market: [v]f64, scale: [v]f64, rate: [v]f64,
                            pay_time: [f]f64, accrual: [f]f64, date: [f]i64, discount: [u]f64}

-- | The LM's view of the residuals at (a, sigma): cost 0.5 sum r^2, g = J'r, H = J'J (h00, h01, h11),
-- and whether every derivative is finite.
type view = {cost: f64, g0: f64, g1: f64, h00: f64, h01: f64, h11: f64, finite: bool}

-- | Quote k at (a, sigma): its model price, residual and the residual's derivatives in a and sigma
-- (all 0 in an empty slot).
def used_slot [q][v][f][u] (d: quotes [q][v][f][u]) (k: i64) : bool =
  let j = d.quote[k]
  in if j < 0 then false else d.valid[j] != 0

def quote [q][v][f][u] (d: quotes [q][v][f][u]) (a: f64) (sigma: f64) (k: i64) : (f64, f64, f64, f64) =
  if !(used_slot d k) then (0, 0, 0, 0)
  else let j = d.quote[k]
       let (price, d_a, d_s) = swaption d.c a sigma d.expiry[j] d.start[j] d.discount_start[j] d.notional[j]
                                        (d.payer[j] != 0) d.rate[j] d.first[k] d.len[k] d.pay_time d.accrual
                                        d.date d.discount
       let s = d.scale[j]
       in (price, (price - d.market[j]) * s, d_a * s, d_s * s)

def residual [q][v][f][u] (d: quotes [q][v][f][u]) (a: f64) (sigma: f64) (k: i64) : (f64, f64, f64) =
  let (_, r, j0, j1) = quote d a sigma k
  in (r, j0, j1)

def evaluate [q][v][f][u] (d: quotes [q][v][f][u]) (a: f64) (sigma: f64) : view =
  let (rr, g0, g1, h00, h01, h11, finite) =
    loop (rr, g0, g1, h00, h01, h11, finite) = (0f64, 0f64, 0f64, 0f64, 0f64, 0f64, true) for k < q do
      let (r, j0, j1) = residual d a sigma k
      in (rr + r * r, g0 + j0 * r, g1 + j1 * r, h00 + j0 * j0, h01 + j0 * j1, h11 + j1 * j1,
          finite && finite64 j0 && finite64 j1)
  in {cost = 0.5 * rr, g0, g1, h00, h01, h11, finite}

-- | The pseudo-inverse of the symmetric 2x2 [[h00, h01], [h01, h11]] times (b0, b1), singular values
-- at or below RCOND times the largest dropped (np.linalg.pinv); the matrix is scaled to its largest
-- element first, so that no square overflows (J'J of relative errors of tiny prices reaches 1e126).
def pinv_solve (h00: f64) (h01: f64) (h11: f64) (b0: f64) (b1: f64) : (f64, f64) =
  let s = f64.max (f64.abs h00) (f64.max (f64.abs h01) (f64.abs h11))
  in if !(s > 0) || f64.isinf s then (0, 0)
     else
       let (h00, h01, h11) = (h00 / s, h01 / s, h11 / s)
       let m = 0.5 * (h00 + h11)
       let r = f64.sqrt (0.25 * (h00 - h11) * (h00 - h11) + h01 * h01)
       let lam = if m >= 0 then m + r else m - r  -- the eigenvalue of largest magnitude
       let det = h00 * h11 - h01 * h01
       let other = det / lam
       in if f64.abs other > RCOND * f64.abs lam
          then ((h11 * b0 - h01 * b1) / det / s, (h00 * b1 - h01 * b0) / det / s)
          else -- rank one: pinv = v v' / lam with v the unit eigenvector of lam
               let (u0, u1) = if f64.abs (lam - h11) >= f64.abs (lam - h00) then (lam - h11, h01)
                              else (h01, lam - h00)
               let size = f64.max (f64.abs u0) (f64.abs u1)
               in if size == 0 then (b0 / lam / s, b1 / lam / s)  -- a multiple of the identity
                  else let (u0, u1) = (u0 / size, u1 / size)
                       let p = (u0 * b0 + u1 * b1) / ((u0 * u0 + u1 * u1) * lam) / s
                       in (p * u0, p * u1)

-- | The Gauss-Newton step's pseudo-inverse on the parameters `on0`, `on1` (the others' rows and
-- columns zero): rhs is -g on them.
def newton_step (v: view) (on0: bool) (on1: bool) : (f64, f64) =
  let b0 = if on0 then -v.g0 else 0
  let b1 = if on1 then -v.g1 else 0
  in if on0 && on1 then pinv_solve v.h00 v.h01 v.h11 b0 b1
     else if on0 then ((if v.h00 > 0 then 1 / v.h00 else 0) * b0, 0)
     else if on1 then (0, (if v.h11 > 0 then 1 / v.h11 else 0) * b1)
     else (0, 0)

-- | Solve the 2x2 system [[s00, s01], [s10, s11]] d = b by LU with partial pivoting (np.linalg.solve),
-- or by the pseudo-inverse where it is singular (the least-squares fallback).
def solve2 (s00: f64) (s01: f64) (s10: f64) (s11: f64) (b0: f64) (b1: f64) : (f64, f64) =
  let swap = f64.abs s10 > f64.abs s00
  let (p00, p01, p10, p11, c0, c1) = if swap then (s10, s11, s00, s01, b1, b0) else (s00, s01, s10, s11, b0, b1)
  in if p00 == 0 then pinv_solve s00 s01 s11 b0 b1
     else let l = p10 / p00
          let u11 = p11 - l * p01
          in if u11 == 0 then pinv_solve s00 s01 s11 b0 b1
             else let d1 = (c1 - l * c0) / u11
                  in ((c0 - p01 * d1) / p00, d1)

-- | The solver's state for one trade.
type state = {x0: f64, x1: f64, v: view, mu: f64, nu: f64, code: f64, reason: f64, iterations: i32, active: bool}

-- | One trade's fit: [a, sigma, cost, code, reason, iterations, at_lower a, at_lower sigma, at_upper a,
-- at_upper sigma].
def fit [q][v][f][u] (max_iterations: i32) (tolerance: f64) (x_scale: f64) (damping: f64)
                     (x0: [2]f64) (lo: [2]f64) (hi: [2]f64) (free: [2]bool) (d: quotes [q][v][f][u]) : [10]f64 =
  let x0' = clip x0[0] lo[0] hi[0]
  let x1' = clip x0[1] lo[1] hi[1]
  let v = evaluate d x0' x1'
  let used = loop used = 0i64 for k < q do used + i64.bool (used_slot d k)
  let moving = i64.bool free[0] + i64.bool free[1]
  let not_run = used < moving || used == 0
  let bad = !not_run && !(finite64 v.cost && v.finite)
  let code = if not_run then NOT_RUN else if bad then NOT_FINITE else MAX_ITERATIONS
  let s0 : state = {x0 = x0', x1 = x1', v, mu = damping, nu = 2, code, reason = 0, iterations = 0,
                    active = !not_run && !bad}
  let (s, _) =
    loop (s: state, i) = (s0, 0i32) while s.active && i < max_iterations do
      let v = s.v
      let blocked0 = (s.x0 <= lo[0] && v.g0 > 0) || (s.x0 >= hi[0] && v.g0 < 0)
      let blocked1 = (s.x1 <= lo[1] && v.g1 > 0) || (s.x1 >= hi[1] && v.g1 < 0)
      let on0 = free[0] && !blocked0
      let on1 = free[1] && !blocked1
      -- the undamped Gauss-Newton step: converged where it is negligible
      let (n0, n1) = newton_step v on0 on1
      let scale0 = nan_max (f64.abs s.x0) x_scale
      let scale1 = nan_max (f64.abs s.x1) x_scale
      let size = nan_max (if on0 then f64.abs n0 / scale0 else 0) (if on1 then f64.abs n1 / scale1 else 0)
      let small_step = size <= tolerance
      let gain = -0.5 * (v.g0 * n0 + v.g1 * n1)
      let polish = !small_step && gain <= NOISE * v.cost
      let s = if polish
              then let x0 = clip (s.x0 + n0) lo[0] hi[0]
                   let x1 = clip (s.x1 + n1) lo[1] hi[1]
                   in s with x0 = x0 with x1 = x1 with v = evaluate d x0 x1
              else s
      in if small_step || polish || s.v.cost == 0
         then (s with code = CONVERGED with reason = GRADIENT with active = false, i + 1)
         else
           -- the damped step
           let floor = 1e-12 * nan_max (nan_max v.h00 v.h11) 1e-300
           let damped0 = v.h00 + s.mu * nan_max v.h00 floor
           let damped1 = v.h11 + s.mu * nan_max v.h11 floor
           let b0 = if on0 then -v.g0 else 0
           let b1 = if on1 then -v.g1 else 0
           let (d0, d1) = solve2 (if on0 then damped0 else 1) (if on0 && on1 then v.h01 else 0)
                                 (if on0 && on1 then v.h01 else 0) (if on1 then damped1 else 1) b0 b1
           let t0 = clip (s.x0 + (if on0 then d0 else 0)) lo[0] hi[0]
           let t1 = clip (s.x1 + (if on1 then d1 else 0)) lo[1] hi[1]
           let d0 = t0 - s.x0
           let d1 = t1 - s.x1
           let w = evaluate d t0 t1
           let finite = finite64 w.cost && w.finite
           let quad = d0 * v.h00 * d0 + d0 * v.h01 * d1 + d1 * v.h01 * d0 + d1 * v.h11 * d1
           let predicted = -((v.g0 * d0 + v.g1 * d1) + 0.5 * quad)
           let rho = if predicted > 0 then (v.cost - w.cost) / predicted else -1
           let accept = finite && rho > 1e-4 && w.cost <= v.cost
           let relative_step = nan_max (if on0 then f64.abs d0 / scale0 else 0)
                                       (if on1 then f64.abs d1 / scale1 else 0)
           let decrease = v.cost - w.cost
           let s = s with iterations = s.iterations + 1
           let s = if accept
                   then s with x0 = t0 with x1 = t1 with v = w
                          with mu = s.mu * nan_max (1 / 3) (1 - (2 * rho - 1) ** 3) with nu = 2
                   else s with mu = s.mu * s.nu with nu = s.nu * 2
           let step_done = accept && relative_step <= tolerance
           let cost_done = accept && decrease <= NOISE * nan_max v.cost 1e-300
           let stuck = !accept && s.mu > 1e30
           let reason = if step_done then STEP else if cost_done then COST else if stuck then STALLED else 0
           in if reason > 0 then (s with code = CONVERGED with reason = reason with active = false, i + 1)
              else (s, i + 1)
  let v = s.v
  let at_lower0 = free[0] && s.x0 <= lo[0] && v.g0 >= 0 && finite64 lo[0]
  let at_lower1 = free[1] && s.x1 <= lo[1] && v.g1 >= 0 && finite64 lo[1]
  let at_upper0 = free[0] && s.x0 >= hi[0] && v.g0 <= 0 && finite64 hi[0]
  let at_upper1 = free[1] && s.x1 >= hi[1] && v.g1 <= 0 && finite64 hi[1]
  in [s.x0, s.x1, v.cost, s.code, s.reason, f64.i32 s.iterations, f64.bool at_lower0, f64.bool at_lower1,
      f64.bool at_upper0, f64.bool at_upper1]

-- | One trade's outcome, `w` values: the fit's ten, the flat-objective flag (whether a free parameter
-- moves some quote's residual at the fit), then `w - 11` values per slot: (w = 11 + 2q) each slot's
-- residual, then its model price at the fit; (w = 11 + q) its model price; (w = 11) none.
def outcome [q][v][f][u] (max_iterations: i32) (tolerance: f64) (x_scale: f64) (damping: f64) (w: i64)
                         (x0: [2]f64) (lo: [2]f64) (hi: [2]f64) (free: [2]i8) (d: quotes [q][v][f][u]) : [w]f64 =
  let free' = map (!= 0) free
  let out = fit max_iterations tolerance x_scale damping x0 lo hi free' d
  let (prices, rs, j0s, j1s) = unzip4 (map (quote d out[0] out[1]) (iota q))
  let moving = any (\(j0, j1) -> (free'[0] && f64.abs j0 > 0) || (free'[1] && f64.abs j1 > 0)) (zip j0s j1s)
  let r = if w == 11 + 2 * q then q else 0
  -- one tabulate (not ++: the multicore backend of Futhark 0.25 emits C that does not compile for it)
  in tabulate w (\i -> if i < 10 then out[i] else if i == 10 then f64.bool moving
                       else if i < 11 + r then rs[i - 11] else prices[i - 11 - r])

entry calibrate64 [n][q][f] (max_iterations: i32) (tolerance: f64) (x_scale: f64) (damping: f64)
                            (x0: [n][2]f64) (lower: [n][2]f64) (upper: [n][2]f64) (free: [n][2]i8)
                            (valid: [n][q]i8) (expiry: [n][q]f64) (start: [n][q]f64)
                            (discount_start: [n][q]f64) (notional: [n][q]f64) (payer: [n][q]i8)
                            (market: [n][q]f64) (scale: [n][q]f64) (rate: [n][q]f64) (first: [n][q]i64)
                            (len: [n][q]i64) (pay_time: [n][f]f64) (accrual: [n][f]f64)
                            (discount_pay: [n][f]f64)
                            : [n][]f64 =
  let c = i64.maximum (map (\k -> if valid[k / q][k % q] != 0 then len[k / q][k % q] else 0) (iota (n * q)))
  in map (\k ->
            let d : quotes [q][q][f][f] =
              {c, quote = iota q, first = first[k], len = len[k], valid = valid[k], expiry = expiry[k],
               start = start[k], discount_start = discount_start[k], notional = notional[k], payer = payer[k],
               market = market[k], scale = scale[k], rate = rate[k], pay_time = pay_time[k],
               accrual = accrual[k], date = iota f, discount = discount_pay[k]}
            in outcome max_iterations tolerance x_scale damping (11 + 2 * q) x0[k] lower[k] upper[k] free[k] d)
         (iota n)

entry calibrate_scenarios64 [S][n][q][v][f][u]
    (max_iterations: i32) (tolerance: f64) (x_scale: f64) (damping: f64) (with_model: bool)
    (x0: [S][n][2]f64) (lower: [S][n][2]f64) (upper: [S][n][2]f64) (free: [S][n][2]i8)
    (quote: [n][q]i64) (first: [n][q]i64) (len: [n][q]i64)
    (pay_time: [n][f]f64) (accrual: [n][f]f64) (date: [n][f]i64)
    (expiry: [v]f64) (notional: [v]f64) (payer: [v]i8)
    (valid: [S][v]i8) (market: [S][v]f64) (scale: [S][v]f64) (rate: [S][v]f64) (discount_start: [S][v]f64)
    (discount: [S][u]f64)
    : [S][n][]f64 =
  let c = i64.maximum (map (\k -> if quote[k / q][k % q] >= 0 then len[k / q][k % q] else 0) (iota (n * q)))
  let w = if with_model then 11 + q else 11
  -- one flat map over the (scenario, trade) rows: every target spreads them all (a nested map may be
  -- parallel over the scenarios alone on a CPU)
  in unflatten (map (\i ->
                       let s = i / n
                       let k = i % n
                       let d : quotes [q][v][f][u] =
                         {c, quote = quote[k], first = first[k], len = len[k], valid = valid[s], expiry,
                          start = expiry, discount_start = discount_start[s], notional, payer, market = market[s],
                          scale = scale[s], rate = rate[s], pay_time = pay_time[k], accrual = accrual[k],
                          date = date[k], discount = discount[s]}
                       in outcome max_iterations tolerance x_scale damping w x0[s, k] lower[s, k] upper[s, k]
                                  free[s, k] d)
                    (iota (S * n)))
