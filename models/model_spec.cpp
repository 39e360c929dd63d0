#include "kvsim/models/model_spec.hpp"

#include <cmath>

namespace kvsim::models {

double dtype_bytes(DType d) {
  switch (d) {
    case DType::kBf16:
    case DType::kFp16:
      return 2.0;
    case DType::kFp8:
    case DType::kInt8:
      return 1.0;
    case DType::kInt4:
      return 0.5;
  }
  return 2.0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
    case DType::kInt4:
      return "int4";
  }
  return "bf16";
}

Bytes ModelSpec::kv_bytes_per_token() const {
  const double b = 2.0 * num_layers * num_kv_heads * head_dim * dtype_bytes(kv_dtype);
  return Bytes{static_cast<std::int64_t>(std::llround(b))};
}

Bytes ModelSpec::weight_bytes() const {
  return Bytes{static_cast<std::int64_t>(std::llround(static_cast<double>(num_params) * dtype_bytes(dtype)))};
}

}  // namespace kvsim::models
