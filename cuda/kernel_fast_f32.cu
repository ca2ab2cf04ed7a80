// The fast kernel (see kernel_fast.cuh) instantiated for float; one file per precision so that
// the two halves compile in parallel.
#include "kernel_fast.cuh"

namespace trinom {
template void launch_fast<float>(int, const Params<float> &, DeviceCurve<float>, OptionEntries, const int *, int, int, float *, int,
                              cudaStream_t);
}  // namespace trinom
