# boardtrace_trace(<target> [MODE <1-4>])
#
# Links <target> with boardtrace::runtime and, with MODE, compiles that
# target's tracing macros in the given tracing mode (1 zones + messages,
# 2 + allocation tracking, 3 + allocation callstacks, 4 + callstacks on every
# zone) instead of the TRACING_MODE boardtrace was configured with. The
# program records its mode in its boardtrace ELF note, which `boardtrace run`
# reports. The same as target_compile_definitions(<target> PRIVATE
# BT_TRACING_MODE=<n>) plus target_link_libraries(<target> PRIVATE
# boardtrace::runtime). Available after add_subdirectory/FetchContent of
# boardtrace and after find_package(boardtrace).
function(boardtrace_trace target)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "MODE" "")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "boardtrace_trace(${target}): unexpected arguments "
                            "'${arg_UNPARSED_ARGUMENTS}'; usage: boardtrace_trace(<target> [MODE <1-4>])")
    endif()
    if(NOT TARGET ${target})
        message(FATAL_ERROR "boardtrace_trace(${target}): no target of that name")
    endif()
    target_link_libraries(${target} PRIVATE boardtrace::runtime)
    if(DEFINED arg_MODE)
        if(NOT arg_MODE MATCHES "^[1-4]$")
            message(FATAL_ERROR
                "boardtrace_trace(${target} MODE ${arg_MODE}): allowed modes are 1 zones + "
                "messages, 2 + allocation tracking, 3 + allocation callstacks, 4 + callstacks "
                "on every zone")
        endif()
        target_compile_definitions(${target} PRIVATE BT_TRACING_MODE=${arg_MODE})
    endif()
endfunction()
