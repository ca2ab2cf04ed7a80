-- The model constants of the Hull-White trinomial tree, defined once for Futhark.
--
-- They must equal python/trinom/constants.py (and cuda/trinom_constants.h);
-- tests/test_constants.py compares them.  Reals are f64, integers i32.

-- | Days in a year: a term unit of 365 days means yearly terms.
def DAYS_IN_YEAR: i32 = 365

-- | Hull-White's bound on the half width: jmax = int(JMAX_FACTOR / M) + 1.
def JMAX_FACTOR: f64 = -0.184

-- | Face value of the zero-coupon bond (the price at every node of the last level).
def FACE_VALUE: f64 = 100.0

-- | Option types, as in the thesis' Type array.
def CALL: i32 = 0
def PUT: i32 = 1

-- | Coupon bonds (docs/paper-instrument.md): days in a year, so that a term unit of 360
-- days is one year (u = ceil(BOND_DAYS_IN_YEAR / term_unit)).
def BOND_DAYS_IN_YEAR: i32 = 360

-- | Bond spreads are given in percent: the per-step OAS factor is exp(-(spread / SPREAD_UNIT) dt).
def SPREAD_UNIT: f64 = 100.0
