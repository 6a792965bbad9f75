# Installs the build into a private prefix, then configures, builds and runs
# a small consumer project (tests/consumer) that does find_package(boardtrace)
# and links boardtrace::runtime, as a user's project would.
# Run as: cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=...
#               [-DTOOLCHAIN=...] [-DEMULATOR=...] -P check_consumer.cmake
set(prefix "${WORK_DIR}/consumer-prefix")
set(build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${prefix}" "${build}")

include("${CMAKE_CURRENT_LIST_DIR}/run.cmake")

run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f include/boardtrace/trace.h include/boardtrace/config.h include/tracy/TracyC.h
          include/tracy/Tracy.hpp
          lib/libboardtrace.a lib/cmake/boardtrace/boardtraceConfig.cmake)
    if(NOT EXISTS "${prefix}/${f}")
        message(FATAL_ERROR "cmake --install did not install ${f}")
    endif()
endforeach()

# boardtrace_DIR names the package directly: a cross toolchain restricts
# package searches to the target's root path.
set(args -S "${CONSUMER_DIR}" -B "${build}" -G Ninja
         "-Dboardtrace_DIR=${prefix}/lib/cmake/boardtrace")
if(TOOLCHAIN)
    list(APPEND args "--toolchain=${TOOLCHAIN}")
endif()
run("configuring the consumer" ${CMAKE_COMMAND} ${args})
run("building the consumer" ${CMAKE_COMMAND} --build "${build}")
# Each announces itself like any traced program would; tests keep every
# packet on this machine. The C program prints its version and mode, the C++
# one (Tracy's C++ API) the zones it opened.
foreach(pair "consumer@consumer: boardtrace [0-9]+\\.[0-9]+\\.[0-9]+ mode [1-4]"
             "consumer-cpp@consumer-cpp: C\\+\\+ API 3 zones")
    string(REPLACE "@" ";" pair "${pair}")
    list(GET pair 0 program)
    list(GET pair 1 expected)
    run("running ${program}" ${CMAKE_COMMAND} -E env TRACY_NO_BROADCAST=1 ${EMULATOR}
        "${build}/${program}")
    message(STATUS "${program} output: ${run_output}")
    if(NOT run_output MATCHES "${expected}")
        message(FATAL_ERROR "unexpected ${program} output: ${run_output}")
    endif()
endforeach()
file(REMOVE_RECURSE "${prefix}" "${build}")
