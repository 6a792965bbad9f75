/* What tracy_c_decls.c (upstream's view of the C API) hands the test. */
#ifndef TRACY_C_ABI_H
#define TRACY_C_ABI_H

#include <stddef.h>

struct tracy_c_abi_function {
    const char *name;
    void (*address)(void);
};
struct tracy_c_abi_field {
    const char *name; /* struct.field */
    size_t offset;
    size_t struct_size;
};

extern const struct tracy_c_abi_function tracy_c_abi_functions[];
extern const size_t tracy_c_abi_function_count;
extern const struct tracy_c_abi_field tracy_c_abi_fields[];
extern const size_t tracy_c_abi_field_count;

#endif
