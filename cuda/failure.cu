// Errors as data (failure.cuh): the CudaFailure that the host code throws, the per-thread stage
// it records, and the check of CUDA runtime calls.
#include <utility>

#include "failure.cuh"

namespace trinom {

namespace {
thread_local const char *t_stage = "";
}  // namespace

CudaFailure::CudaFailure(int code_, std::string message_, long long row_, std::string field_)
    : code(code_), message(std::move(message_)), row(row_), field(std::move(field_)), stage(Stage::current()) {}

Stage::Stage(const char *name) : previous_(t_stage) { t_stage = name ? name : ""; }

Stage::~Stage() { t_stage = previous_; }

const char *Stage::current() { return t_stage; }

void check_cuda(cudaError_t err, const char *what) {
    if (err == cudaSuccess) return;
    cudaGetLastError();  // clear a non-sticky error
    throw CudaFailure(TRINOM_ERR_CUDA, std::string("CUDA error ") + cudaGetErrorName(err) + ": " +
                                           cudaGetErrorString(err) + " (in " + what + ")");
}

}  // namespace trinom
