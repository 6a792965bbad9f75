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
# It announces itself like any traced program would; tests keep every packet
# on this machine.
run("running the consumer" ${CMAKE_COMMAND} -E env TRACY_NO_BROADCAST=1 ${EMULATOR}
    "${build}/consumer")
message(STATUS "consumer output: ${run_output}")
if(NOT run_output MATCHES "consumer: boardtrace [0-9]+\\.[0-9]+\\.[0-9]+ mode [1-4]")
    message(FATAL_ERROR "unexpected consumer output: ${run_output}")
endif()
run("running the C++ consumer" ${CMAKE_COMMAND} -E env TRACY_NO_BROADCAST=1 ${EMULATOR}
    "${build}/consumer-cpp")
message(STATUS "C++ consumer output: ${run_output}")
if(NOT run_output MATCHES "consumer-cpp: C\\+\\+ API 3 zones")
    message(FATAL_ERROR "unexpected C++ consumer output: ${run_output}")
endif()
file(REMOVE_RECURSE "${prefix}" "${build}")
