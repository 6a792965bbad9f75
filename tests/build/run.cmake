# Shared by the build-integration check scripts: run(WHAT COMMAND...) runs a
# command, stops with its output when it fails, and leaves stdout in run_output.
function(run what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
    endif()
    set(run_output "${out}" PARENT_SCOPE)
endfunction()
