// The wide-tree block kernel's variants (see kernel_bonds.cuh) instantiated for double, apart from the warp-segment
// kernels so that they compile in parallel.
#include "kernel_bonds.cuh"

namespace trinom {
template void launch_bonds_block<double>(int, const BondArgs<double> &, const int *, int, int, const long long *,
                                         BlockShare, double *, cudaStream_t);
}  // namespace trinom
