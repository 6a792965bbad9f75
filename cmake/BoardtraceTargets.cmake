# Helpers every folder uses to declare its targets the same way: the
# project's warning flags, and static linking for what runs on a board.

# Warnings for boardtrace's own code; -Werror when BT_WERROR is on (CI).
function(bt_target_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wformat=2 -Wvla
                           $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
    if(BT_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()

# An executable of boardtrace's own: warnings, and a static link when it is
# meant for a board (BT_STATIC_EXECUTABLES, on for cross builds).
function(bt_add_executable target)
    add_executable(${target} ${ARGN})
    bt_target_warnings(${target})
    if(BT_STATIC_EXECUTABLES)
        target_link_options(${target} PRIVATE -static)
    endif()
endfunction()

# A cmocka test program registered with ctest. Usage:
#   bt_add_test(NAME name SOURCES a.c ... [LIBS lib ...] [LABELS unit ...]
#               [ARGS ...] [TIMEOUT seconds])
function(bt_add_test)
    cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
    bt_add_executable(${T_NAME} ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE bt::cmocka ${T_LIBS})
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
    if(NOT T_LABELS)
        set(T_LABELS unit)
    endif()
    if(NOT T_TIMEOUT)
        set(T_TIMEOUT 120)
    endif()
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

# Marks executables for `cmake --install` (installed to bin/).
function(bt_install_programs)
    set_property(GLOBAL APPEND PROPERTY BT_INSTALL_PROGRAMS ${ARGN})
endfunction()
