/* Host decoding of input elements. See decode.h. */
#include "decode.h"

#include "../common/convert.h"

#include <string.h>

void cr_decode_float(cureduce_dtype d, const void *in, uint64_t first, size_t count, uint64_t stride,
                     double *out) {
  const size_t step = cureduce_dtype_size(d) * stride;
  const unsigned char *bytes = (const unsigned char *)in + first * step;
  for (size_t k = 0; k < count; ++k) {
    switch (d) {
    case CUREDUCE_F32: {
      float v;
      memcpy(&v, bytes + step * k, 4);
      out[k] = v;
      break;
    }
    case CUREDUCE_F64: memcpy(&out[k], bytes + step * k, 8); break;
    case CUREDUCE_F16: {
      uint16_t v;
      memcpy(&v, bytes + step * k, 2);
      out[k] = cr_f16_to_float(v);
      break;
    }
    case CUREDUCE_BF16: {
      uint16_t v;
      memcpy(&v, bytes + step * k, 2);
      out[k] = cr_bf16_to_float(v);
      break;
    }
    case CUREDUCE_F8_E4M3: out[k] = cr_e4m3_to_float(bytes[step * k]); break;
    default: out[k] = cr_e5m2_to_float(bytes[step * k]); break; /* F8_E5M2 */
    }
  }
}

void cr_decode_int(cureduce_dtype d, const void *in, uint64_t first, size_t count, uint64_t stride,
                   int64_t *out) {
  const size_t step = cureduce_dtype_size(d) * stride;
  const unsigned char *bytes = (const unsigned char *)in + first * step;
  for (size_t k = 0; k < count; ++k) {
    switch (d) {
    case CUREDUCE_I8: out[k] = (int8_t)bytes[step * k]; break;
    case CUREDUCE_I32: {
      int32_t v;
      memcpy(&v, bytes + step * k, 4);
      out[k] = v;
      break;
    }
    default: memcpy(&out[k], bytes + step * k, 8); break; /* I64 */
    }
  }
}
