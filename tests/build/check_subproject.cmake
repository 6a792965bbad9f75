# Builds tests/consumer-subproject, which brings boardtrace in with
# add_subdirectory() or FetchContent, and checks what a user would: only the
# runtime is built (no capture, tests or CLI), the parent's cache keeps the
# build type it chose (none here), no .deps/ is needed on the host, TRACY_ENABLE turns tracing on, Tracy::TracyClient links, and the
# program runs in the mode boardtrace_trace() chose and carries it in its
# boardtrace ELF note.
# Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -DHOW=add_subdirectory|FetchContent
#               -DREADELF=... -P check_subproject.cmake
include("${CMAKE_CURRENT_LIST_DIR}/run.cmake")
set(build "${WORK_DIR}/subproject-${HOW}")
file(REMOVE_RECURSE "${build}")
set(args -S "${SOURCE_DIR}/tests/consumer-subproject" -B "${build}" -G Ninja "-DHOW=${HOW}")
if(HOW STREQUAL "FetchContent")
    # A clone of this checkout's commit, as a user's clone would be: it has
    # no .deps/ (the host build must not need it).
    run("git rev-parse" git -C "${SOURCE_DIR}" rev-parse HEAD)
    string(STRIP "${run_output}" commit)
    list(APPEND args "-DBOARDTRACE_GIT=file://${SOURCE_DIR}" "-DBOARDTRACE_TAG=${commit}"
                     -DFETCHCONTENT_QUIET=ON)
    # FetchContent's clone and checkout write reflog entries, which need an
    # identity: where git has none configured (a fresh machine's root), it
    # makes one up from the machine's name, looked up through the resolver.
    # The test's own identity keeps that look-up off the network.
    foreach(who AUTHOR COMMITTER)
        set(ENV{GIT_${who}_NAME} "boardtrace test")
        set(ENV{GIT_${who}_EMAIL} "test@localhost")
    endforeach()
else()
    list(APPEND args "-DBOARDTRACE_SOURCE=${SOURCE_DIR}")
endif()
run("configuring the consumer" ${CMAKE_COMMAND} ${args})
# The parent configured no build type: boardtrace must not have chosen one
# for it (it would change how the parent's own code is compiled).
file(STRINGS "${build}/CMakeCache.txt" build_type REGEX "^CMAKE_BUILD_TYPE:")
if(NOT build_type STREQUAL "" AND NOT build_type MATCHES "^CMAKE_BUILD_TYPE:[A-Z]+=$")
    message(FATAL_ERROR "${HOW}: boardtrace set the parent project's ${build_type}")
endif()
run("building the consumer" ${CMAKE_COMMAND} --build "${build}")
foreach(unwanted boardtrace/tools/capture/boardtrace-capture boardtrace/deploy/boardtrace
                 _deps/boardtrace-build/tools/capture/boardtrace-capture)
    if(EXISTS "${build}/${unwanted}")
        message(FATAL_ERROR "${HOW}: ${unwanted} was built; only the runtime should be")
    endif()
endforeach()
file(GLOB_RECURSE tests_built "${build}/boardtrace/*/test_*"
                              "${build}/_deps/boardtrace-build/*/test_*")
list(FILTER tests_built EXCLUDE REGEX "\\.[a-z]+$")
if(tests_built)
    message(FATAL_ERROR "${HOW}: boardtrace's tests were built: ${tests_built}")
endif()
run("running the consumer" ${CMAKE_COMMAND} -E env TRACY_NO_BROADCAST=1 "${build}/consumer")
if(NOT run_output MATCHES "consumer: boardtrace [0-9]+\\.[0-9]+\\.[0-9]+ mode 3")
    message(FATAL_ERROR "${HOW}: unexpected consumer output: ${run_output}")
endif()
run("reading the consumer's notes" ${READELF} -p .note.boardtrace "${build}/consumer")
if(NOT run_output MATCHES "version=[0-9.]+ mode=3")
    message(FATAL_ERROR "${HOW}: the consumer's boardtrace note is not mode 3: ${run_output}")
endif()
message(STATUS "${HOW}: consumer built with the runtime only, traced in mode 3")
file(REMOVE_RECURSE "${build}")
