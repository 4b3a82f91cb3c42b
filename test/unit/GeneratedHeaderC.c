/* The generated header is C99 as well as C++: compiled here as C. */
#include "deepseek_r1_decode_fp8.h"

int mla_c_header_target_count(void) {
  return deepseek_r1_decode_fp8_spec.num_targets;
}
