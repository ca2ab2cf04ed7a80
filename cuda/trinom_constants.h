/* The model constants of the Hull-White trinomial tree, defined once for CUDA and C.
 * They must equal python/trinom/constants.py (tests/test_constants.py checks this). */
#ifndef TRINOM_CONSTANTS_H
#define TRINOM_CONSTANTS_H

/* Days in a year: a term unit of 365 days means yearly terms (ceil(DAYS_IN_YEAR / term_unit)). */
#define DAYS_IN_YEAR 365
/* Hull-White's bound on the tree's half width: jmax = int(JMAX_FACTOR / M) + 1, M = exp(-a dt) - 1. */
#define JMAX_FACTOR -0.184
/* Face value of the zero-coupon bond: every node of the last level starts at this price. */
#define FACE_VALUE 100.0
/* Option types, as in the thesis' files. */
#define CALL 0
#define PUT 1
/* Coupon bonds (docs/paper-instrument.md): a term unit of 360 days is one year, and spreads are
 * in percent (the per-step OAS factor is exp(-(spread / SPREAD_UNIT) dt)). */
#define BOND_DAYS_IN_YEAR 360
#define SPREAD_UNIT 100.0

#endif
