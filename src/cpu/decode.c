/* Host decoding of input elements. See decode.h. */
#include "decode.h"

#include "../common/convert.h"

#include <string.h>

void cr_decode_float(cureduce_dtype d, const void *in, uint64_t first, size_t count, double *out) {
  const unsigned char *bytes = (const unsigned char *)in + first * cureduce_dtype_size(d);
  for (size_t k = 0; k < count; ++k) {
    switch (d) {
    case CUREDUCE_F32: {
      float v;
      memcpy(&v, bytes + 4 * k, 4);
      out[k] = v;
      break;
    }
    case CUREDUCE_F64: memcpy(&out[k], bytes + 8 * k, 8); break;
    case CUREDUCE_F16: {
      uint16_t v;
      memcpy(&v, bytes + 2 * k, 2);
      out[k] = cr_f16_to_float(v);
      break;
    }
    case CUREDUCE_BF16: {
      uint16_t v;
      memcpy(&v, bytes + 2 * k, 2);
      out[k] = cr_bf16_to_float(v);
      break;
    }
    case CUREDUCE_F8_E4M3: out[k] = cr_e4m3_to_float(bytes[k]); break;
    default: out[k] = cr_e5m2_to_float(bytes[k]); break; /* F8_E5M2 */
    }
  }
}

void cr_decode_int(cureduce_dtype d, const void *in, uint64_t first, size_t count, int64_t *out) {
  const unsigned char *bytes = (const unsigned char *)in + first * cureduce_dtype_size(d);
  for (size_t k = 0; k < count; ++k) {
    switch (d) {
    case CUREDUCE_I8: out[k] = (int8_t)bytes[k]; break;
    case CUREDUCE_I32: {
      int32_t v;
      memcpy(&v, bytes + 4 * k, 4);
      out[k] = v;
      break;
    }
    default: memcpy(&out[k], bytes + 8 * k, 8); break; /* I64 */
    }
  }
}
