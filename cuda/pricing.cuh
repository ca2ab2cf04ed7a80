// The two sections of a book, each priced on a leased device context (device_context.cuh) with
// the context's primary context current: options_host.cu and bonds_host.cu. Arguments were
// checked by api.cu. Prices are written in input order (float* or double* per
// options.precision); failures are thrown as CudaFailure with rows in the section's arrays.
#pragma once

#include "device_context.cuh"
#include "trinom_cuda.h"

namespace trinom {

// The options' curve: `curve`, or with portfolio.curve_index the curves `option_curves`.
void price_options(DeviceContext &ctx, const trinom_portfolio &portfolio, const trinom_curve &curve,
                   const trinom_bond_curves &option_curves, const trinom_run_options &options, void *prices,
                   trinom_section_timing &timing);

void price_bonds(DeviceContext &ctx, const trinom_bonds &bonds, const trinom_bond_curves &curves,
                 const trinom_run_options &options, void *prices, trinom_section_timing &timing);

}  // namespace trinom
