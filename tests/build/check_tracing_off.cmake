# Builds the demo program with RUNTIME_TRACING=OFF in a separate tree and
# checks with nm that it holds no tracing code: no bt_ runtime symbol, no LZ4,
# no Tracy wire tables. The same check on the normal (tracing) build must find
# them, so the test proves it can fail.
# Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -DNM=... -DTRACED=<demo> -P check_tracing_off.cmake
include("${CMAKE_CURRENT_LIST_DIR}/run.cmake")
set(pattern " [TtDdBbRr] (bt_[a-z_]+|LZ4_[A-Za-z_]+)$")

function(tracing_symbols binary out)
    execute_process(COMMAND "${NM}" "${binary}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "nm ${binary} failed (${rc})")
    endif()
    string(REPLACE "\n" ";" lines "${syms}")
    set(found "")
    foreach(l IN LISTS lines)
        if(l MATCHES "${pattern}")
            list(APPEND found "${CMAKE_MATCH_1}")
        endif()
    endforeach()
    set(${out} "${found}" PARENT_SCOPE)
endfunction()

tracing_symbols("${TRACED}" with_tracing)
list(LENGTH with_tracing n_with)
if(n_with EQUAL 0)
    message(FATAL_ERROR "the traced demo ${TRACED} shows no tracing symbols; the check could not tell")
endif()
message(STATUS "traced demo: ${n_with} tracing symbols (e.g. ${with_tracing})")

set(dir "${WORK_DIR}/tracing-off")
file(REMOVE_RECURSE "${dir}")
run("configuring with RUNTIME_TRACING=OFF" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${dir}" -G Ninja
    -DENABLE_TRACY=ON -DRUNTIME_TRACING=OFF -DBUILD_TESTING=OFF)
run("building boardtrace-demo with RUNTIME_TRACING=OFF"
    ${CMAKE_COMMAND} --build "${dir}" --target boardtrace-demo)
file(GLOB_RECURSE demo "${dir}/*/boardtrace-demo")
tracing_symbols("${demo}" without_tracing)
if(without_tracing)
    message(FATAL_ERROR "RUNTIME_TRACING=OFF demo still holds tracing symbols: ${without_tracing}")
endif()
message(STATUS "RUNTIME_TRACING=OFF demo ${demo}: no tracing symbols")
file(REMOVE_RECURSE "${dir}")
