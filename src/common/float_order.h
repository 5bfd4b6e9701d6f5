/* The library's order of floats for MIN and MAX (cureduce.h): IEEE 754-2019 minimum and
 * maximum, where a NaN wins and -0.0 orders below +0.0. Shared by the CPU reference and the
 * multi-GPU combine. */
#ifndef CUREDUCE_COMMON_FLOAT_ORDER_H
#define CUREDUCE_COMMON_FLOAT_ORDER_H

#include "host_device.h"

#include <math.h>

CR_HD double cr_float_min(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) ? a : b;
  if (a == b)
    return signbit(a) ? a : b;
  return a < b ? a : b;
}

CR_HD double cr_float_max(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) ? a : b;
  if (a == b)
    return signbit(a) ? b : a;
  return a > b ? a : b;
}

#endif
