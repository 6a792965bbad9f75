# Builds the demo program with RUNTIME_TRACING=OFF in a separate tree and
# checks with nm that it holds no tracing code: no bt_ runtime symbol, no LZ4,
# no Tracy wire tables. The same check on the normal (tracing) build must find
# them, so the test proves it can fail. Then builds names/ (every public name
# of upstream Tracy's Tracy.hpp and TracyC.h) against that tree's headers
# without the library: with tracing off they compile and need nothing of it.
# Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -DNM=... -DTRACED=<demo>
#         -DCC=... [-DCXX=...] -P check_tracing_off.cmake
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

set(names "${SOURCE_DIR}/tests/build/names")
set(flags -Wall -Wextra -Wshadow -Werror "-I${SOURCE_DIR}/runtime/include" "-I${dir}/generated")
run("building names/tracyc_names.c with tracing off"
    "${CC}" -std=c11 ${flags} -o "${dir}/tracyc_names" "${names}/tracyc_names.c")
set(built "${dir}/tracyc_names")
if(CXX)
    foreach(std 17 20)
        run("building names/tracy_names.cpp with tracing off (C++${std})"
            "${CXX}" -std=c++${std} ${flags} -o "${dir}/tracy_names${std}"
            "${names}/tracy_names.cpp")
        list(APPEND built "${dir}/tracy_names${std}")
    endforeach()
endif()
foreach(b IN LISTS built)
    tracing_symbols("${b}" names_symbols)
    if(names_symbols)
        message(FATAL_ERROR "${b} (tracing off) holds tracing symbols: ${names_symbols}")
    endif()
endforeach()
message(STATUS "names/ built with tracing off, without the library: ${built}")
file(REMOVE_RECURSE "${dir}")
