/* The collector's error domain. */
#include "errors.h"

G_DEFINE_QUARK(ringside-error-quark, rs_error)
