// The fast kernel (see kernel_fast.cuh) instantiated for double; one file per precision so that
// the two halves compile in parallel.
#include "kernel_fast.cuh"

namespace trinom {
template void launch_fast<double>(int, const Params<double> &, DeviceCurve<double>, OptionEntries, const int *, int, int, double *, int,
                              cudaStream_t);
}  // namespace trinom
