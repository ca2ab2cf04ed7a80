// The coupon-bond kernels (see kernel_bonds.cuh) instantiated for double; one file per precision so
// that the two halves compile in parallel.
#include "kernel_bonds.cuh"

namespace trinom {
template void launch_bonds<double>(int, const BondArgs<double> &, const int *, int, int, const long long *, double *, int,
                                  cudaStream_t);
template void launch_bonds_wide<double>(const BondArgs<double> &, const int *, int, int, const long long *, double *,
                                       cudaStream_t);
template void launch_flow_terms<double>(const BondArgs<double> &, int, int, int, cudaStream_t);
}  // namespace trinom
