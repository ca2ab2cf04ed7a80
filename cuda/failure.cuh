// Errors of the host code on their way to the caller's trinom_error (api.cu fills it): a
// CudaFailure carries the status, the failing row of the section's input arrays, the field at
// fault and the stage that failed, as data. The stage is the thread's current Stage unless the
// thrower names one.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "trinom_cuda.h"

namespace trinom {

struct CudaFailure {
    int code = TRINOM_ERR_CUDA;
    std::string message;                // without the row: the caller formats "row N: message"
    long long row = -1;                 // row in the section's input arrays, -1 if none
    std::string field;                  // input field at fault, empty if none
    std::string stage;                  // the stage that failed
    int section = TRINOM_SECTION_NONE;  // set by api.cu from the section being priced

    CudaFailure() = default;
    CudaFailure(int code, std::string message, long long row = -1, std::string field = {});
};

// The stage the calling thread is in (what CudaFailure records): set for a scope, restored after.
class Stage {
  public:
    explicit Stage(const char *name);
    ~Stage();
    Stage(const Stage &) = delete;
    Stage &operator=(const Stage &) = delete;
    static const char *current();

  private:
    const char *previous_;
};

// Throws a CudaFailure (TRINOM_ERR_CUDA with CUDA's error name and string) unless err is cudaSuccess.
void check_cuda(cudaError_t err, const char *what);
#define TRINOM_CHECK(call) ::trinom::check_cuda((call), #call)

}  // namespace trinom
