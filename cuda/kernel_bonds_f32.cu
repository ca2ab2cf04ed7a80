// The coupon-bond kernels (see kernel_bonds.cuh) instantiated for float; one file per precision so
// that the two halves compile in parallel.
#include "kernel_bonds.cuh"

namespace trinom {
template void launch_bonds<float>(int, const BondArgs<float> &, const int *, int, int, const long long *, float *, int,
                                  cudaStream_t);
template void launch_bonds_wide<float>(const BondArgs<float> &, const int *, int, int, const long long *, float *,
                                       cudaStream_t);
template void launch_flow_terms<float>(const BondArgs<float> &, int, int, int, cudaStream_t);
}  // namespace trinom
