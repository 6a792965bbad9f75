# Configures the project with invalid option values and checks that each
# configure stops with a message naming the option, the value and what is
# allowed. Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P check_options.cmake
set(cases
    "TRACING_MODE=7|TRACING_MODE=7 is not valid: allowed values are whole numbers from 1 to 4"
    "TRACING_MODE=0|TRACING_MODE=0 is not valid: allowed values are whole numbers from 1 to 4"
    "TRACING_MODE=two|TRACING_MODE=two is not valid"
    "TRACING_CALLSTACK_DEPTH=63|TRACING_CALLSTACK_DEPTH=63 is not valid: allowed values are whole numbers from 1 to 62"
    "TRACING_CALLSTACK_DEPTH=0|TRACING_CALLSTACK_DEPTH=0 is not valid"
    "ENABLE_TRACY=maybe|ENABLE_TRACY=maybe is not valid: allowed values are ON or OFF"
    "RUNTIME_TRACING=sometimes|RUNTIME_TRACING=sometimes is not valid: allowed values are ON or OFF"
    "NO_POINTER_COMPRESSION=2|NO_POINTER_COMPRESSION=2 is not valid: allowed values are ON or OFF")

set(failures 0)
foreach(c IN LISTS cases)
    string(REPLACE "|" ";" parts "${c}")
    list(GET parts 0 setting)
    list(GET parts 1 expected)
    set(dir "${WORK_DIR}/options")
    file(REMOVE_RECURSE "${dir}")
    execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${dir}" -G Ninja
                            -DBUILD_TESTING=OFF "-D${setting}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REGEX REPLACE "[ \t\r\n]+" " " err "${err}")
    if(rc EQUAL 0)
        message(SEND_ERROR "-D${setting}: configure succeeded, expected it to fail")
        math(EXPR failures "${failures} + 1")
    elseif(NOT err MATCHES "${expected}")
        message(SEND_ERROR "-D${setting}: expected \"${expected}\" in:\n${err}")
        math(EXPR failures "${failures} + 1")
    else()
        message(STATUS "-D${setting}: rejected as expected")
    endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}/options")
if(failures)
    message(FATAL_ERROR "${failures} invalid option value(s) not rejected clearly")
endif()
