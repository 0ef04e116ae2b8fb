/* Internal: record a failure for fp2_error_message() and return its status. */
#ifndef FP2_STATUS_H
#define FP2_STATUS_H

#include "fp2.h"

#ifdef __cplusplus
extern "C" {
#endif

fp2_status fp2_fail(fp2_status status, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
