// The wide-tree block kernel's variants (see kernel_bonds.cuh) instantiated for float, apart from the warp-segment
// kernels so that they compile in parallel.
#include "kernel_bonds.cuh"

namespace trinom {
template void launch_bonds_block<float>(int, const BondArgs<float> &, const int *, int, int, const long long *,
                                         BlockShare, float *, cudaStream_t);
}  // namespace trinom
