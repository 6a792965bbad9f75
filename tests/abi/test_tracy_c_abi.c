/* A program compiled against upstream's view of Tracy's C API links to
 * libboardtrace (this test's link is the first check: every ___tracy_*
 * function must be defined), and boardtrace's tracy/TracyC.h lays out every
 * struct of that API as upstream does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tracy/TracyC.h"
#include "tracy_c_abi.h"

#define OURS(type, field)                                                   \
    {                                                                       \
#type "." #field, offsetof(struct type, field), sizeof(struct type) \
    }

static const struct tracy_c_abi_field ours[] = {
    OURS(___tracy_source_location_data, name),
    OURS(___tracy_source_location_data, function),
    OURS(___tracy_source_location_data, file),
    OURS(___tracy_source_location_data, line),
    OURS(___tracy_source_location_data, color),
    OURS(___tracy_c_zone_context, id),
    OURS(___tracy_c_zone_context, active),
    OURS(___tracy_gpu_time_data, gpuTime),
    OURS(___tracy_gpu_time_data, queryId),
    OURS(___tracy_gpu_time_data, context),
    OURS(___tracy_gpu_zone_begin_data, srcloc),
    OURS(___tracy_gpu_zone_begin_data, queryId),
    OURS(___tracy_gpu_zone_begin_data, context),
    OURS(___tracy_gpu_zone_begin_callstack_data, srcloc),
    OURS(___tracy_gpu_zone_begin_callstack_data, depth),
    OURS(___tracy_gpu_zone_begin_callstack_data, queryId),
    OURS(___tracy_gpu_zone_begin_callstack_data, context),
    OURS(___tracy_gpu_zone_end_data, queryId),
    OURS(___tracy_gpu_zone_end_data, context),
    OURS(___tracy_gpu_new_context_data, gpuTime),
    OURS(___tracy_gpu_new_context_data, period),
    OURS(___tracy_gpu_new_context_data, context),
    OURS(___tracy_gpu_new_context_data, flags),
    OURS(___tracy_gpu_new_context_data, type),
    OURS(___tracy_gpu_context_name_data, context),
    OURS(___tracy_gpu_context_name_data, name),
    OURS(___tracy_gpu_context_name_data, len),
    OURS(___tracy_gpu_calibration_data, gpuTime),
    OURS(___tracy_gpu_calibration_data, cpuDelta),
    OURS(___tracy_gpu_calibration_data, context),
    OURS(___tracy_gpu_time_sync_data, gpuTime),
    OURS(___tracy_gpu_time_sync_data, context),
};

static void every_function_of_the_c_api_is_exported(void **state)
{
    (void)state;
    /* upstream v0.14.0's TracyC.h declares 84 functions */
    assert_int_equal(tracy_c_abi_function_count, 84);
    for (size_t i = 0; i < tracy_c_abi_function_count; i++) {
        if (!tracy_c_abi_functions[i].address)
            fail_msg("%s has no address", tracy_c_abi_functions[i].name);
    }
    /* and the names are distinct: each is its own export */
    for (size_t i = 0; i < tracy_c_abi_function_count; i++)
        for (size_t j = i + 1; j < tracy_c_abi_function_count; j++)
            assert_ptr_not_equal(tracy_c_abi_functions[i].address,
                                 tracy_c_abi_functions[j].address);
}

static void every_struct_is_laid_out_as_upstream(void **state)
{
    (void)state;
    assert_int_equal(sizeof(ours) / sizeof(ours[0]), tracy_c_abi_field_count);
    for (size_t i = 0; i < tracy_c_abi_field_count; i++) {
        const struct tracy_c_abi_field *u = &tracy_c_abi_fields[i], *o = &ours[i];
        assert_string_equal(u->name, o->name);
        if (u->offset != o->offset || u->struct_size != o->struct_size)
            fail_msg("%s: upstream at %zu of %zu bytes, ours at %zu of %zu", u->name, u->offset,
                     u->struct_size, o->offset, o->struct_size);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_function_of_the_c_api_is_exported),
        cmocka_unit_test(every_struct_is_laid_out_as_upstream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
