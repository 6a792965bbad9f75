# Checks that executables boardtrace puts on a board are statically linked
# binaries for the build's machine, as `file` reports them.
# Run as: cmake -DFILES="a;b" -DMACHINE="UCB RISC-V" -P check_static.cmake
find_program(FILE_COMMAND file REQUIRED)
set(failures 0)
foreach(f IN LISTS FILES)
    execute_process(COMMAND ${FILE_COMMAND} -b "${f}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    string(STRIP "${out}" out)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "statically linked" OR NOT out MATCHES "${MACHINE}")
        message(SEND_ERROR "${f}: expected a statically linked ${MACHINE} executable, file says: ${out}")
        math(EXPR failures "${failures} + 1")
    else()
        message(STATUS "${f}: ${out}")
    endif()
endforeach()
if(failures)
    message(FATAL_ERROR "${failures} executable(s) not statically linked for ${MACHINE}")
endif()
