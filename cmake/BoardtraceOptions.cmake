# The user-facing build options (names as DESIGN.md gives them), validated so
# that a wrong value stops the configure with the option, the value and what is
# allowed. Every option reaches C code through one generated header,
# <boardtrace/config.h>.

set(_bt_bool_regex "^([Oo][Nn]|[Oo][Ff][Ff]|[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|[Yy]|[Nn]|1|0)$")

function(bt_require_bool name value)
    if(NOT "${value}" MATCHES "${_bt_bool_regex}")
        message(FATAL_ERROR
            "boardtrace: ${name}=${value} is not valid: allowed values are ON or OFF "
            "(also TRUE/FALSE, YES/NO, 1/0).")
    endif()
endfunction()

function(bt_require_int_range name value low high meaning)
    if(NOT "${value}" MATCHES "^[0-9]+$" OR value LESS low OR value GREATER high)
        message(FATAL_ERROR
            "boardtrace: ${name}=${value} is not valid: allowed values are whole numbers "
            "from ${low} to ${high} (${meaning}).")
    endif()
endfunction()

option(ENABLE_TRACY "Profiling support: builds the capture tool for the target and turns RUNTIME_TRACING on by default" OFF)
# TRACY_ENABLE, upstream Tracy's name for it, is a synonym: a project that
# switched from Tracy keeps its -DTRACY_ENABLE=ON (or set(TRACY_ENABLE ON)
# before add_subdirectory). When set, it decides.
if(DEFINED TRACY_ENABLE)
    bt_require_bool(TRACY_ENABLE "${TRACY_ENABLE}")
    if(TRACY_ENABLE)
        set(ENABLE_TRACY ON)
    else()
        set(ENABLE_TRACY OFF)
    endif()
endif()
bt_require_bool(ENABLE_TRACY "${ENABLE_TRACY}")

# RUNTIME_TRACING follows ENABLE_TRACY unless the user sets it; an empty cache
# value means "follow", so switching ENABLE_TRACY later still takes effect.
set(RUNTIME_TRACING "" CACHE STRING "Compile instrumentation into the runtime (ON/OFF; empty follows ENABLE_TRACY)")
if("${RUNTIME_TRACING}" STREQUAL "")
    set(BT_RUNTIME_TRACING_EFFECTIVE ${ENABLE_TRACY})
else()
    bt_require_bool(RUNTIME_TRACING "${RUNTIME_TRACING}")
    set(BT_RUNTIME_TRACING_EFFECTIVE ${RUNTIME_TRACING})
endif()

set(TRACING_MODE 2 CACHE STRING
    "1 zones + messages, 2 + allocation tracking, 3 + allocation callstacks, 4 + callstacks on every zone")
set_property(CACHE TRACING_MODE PROPERTY STRINGS 1 2 3 4)
bt_require_int_range(TRACING_MODE "${TRACING_MODE}" 1 4
    "1 zones + messages, 2 + allocation tracking, 3 + allocation callstacks, 4 + callstacks on every zone")

option(NO_POINTER_COMPRESSION "Send every address exactly as the program sees it instead of canonicalizing it" OFF)
bt_require_bool(NO_POINTER_COMPRESSION "${NO_POINTER_COMPRESSION}")

set(TRACING_CALLSTACK_DEPTH 16 CACHE STRING "Frames per captured callstack (1..62)")
bt_require_int_range(TRACING_CALLSTACK_DEPTH "${TRACING_CALLSTACK_DEPTH}" 1 62
    "frames per captured callstack")

option(CODE_TRANSFER "Let the runtime answer a capture's requests for symbol code and source files (off: as upstream's TRACY_NO_CODE_TRANSFER)" ON)
bt_require_bool(CODE_TRANSFER "${CODE_TRANSFER}")

option(BT_WERROR "Treat compiler warnings as errors (CI turns this on)" OFF)
bt_require_bool(BT_WERROR "${BT_WERROR}")

# Executables that boardtrace itself puts on a board link statically so they
# run with whatever libc the board has.
if(CMAKE_CROSSCOMPILING)
    set(_bt_static_default ON)
else()
    set(_bt_static_default OFF)
endif()
option(BT_STATIC_EXECUTABLES "Link boardtrace's own executables statically" ${_bt_static_default})
bt_require_bool(BT_STATIC_EXECUTABLES "${BT_STATIC_EXECUTABLES}")

if(BT_RUNTIME_TRACING_EFFECTIVE)
    set(BT_CONFIG_RUNTIME_TRACING 1)
else()
    set(BT_CONFIG_RUNTIME_TRACING 0)
endif()
if(NO_POINTER_COMPRESSION)
    set(BT_CONFIG_NO_POINTER_COMPRESSION 1)
else()
    set(BT_CONFIG_NO_POINTER_COMPRESSION 0)
endif()
if(CODE_TRANSFER)
    set(BT_CONFIG_CODE_TRANSFER 1)
else()
    set(BT_CONFIG_CODE_TRANSFER 0)
endif()
if(ENABLE_TRACY)
    set(BT_CONFIG_ENABLE_TRACY 1)
else()
    set(BT_CONFIG_ENABLE_TRACY 0)
endif()

message(STATUS "boardtrace: ENABLE_TRACY=${ENABLE_TRACY} RUNTIME_TRACING=${BT_RUNTIME_TRACING_EFFECTIVE} "
               "TRACING_MODE=${TRACING_MODE} NO_POINTER_COMPRESSION=${NO_POINTER_COMPRESSION} "
               "TRACING_CALLSTACK_DEPTH=${TRACING_CALLSTACK_DEPTH} CODE_TRANSFER=${CODE_TRANSFER}")
