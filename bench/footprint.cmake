# Footprint on the board: what the runtime adds to a program, as binutils'
# `size -A` shows it: bench_zone_loop traced minus the same program with
# tracing compiled out (bench_zone_loop_off), .text and all allocated
# sections (those with an address: code, data, .bss); then the size of
# boardtrace-capture; and, with -DBT_UPSTREAM_ZONE_LOOP=PATH (the loop built
# against upstream Tracy's client outside this repository, static like ours),
# what upstream's client adds to the same program.
#
# bench/CMakeLists.txt includes this file to register the test (label
# "bench"); the test runs it again as a script (cmake -P) to print the figures.

if(NOT CMAKE_SCRIPT_MODE_FILE)
    if(NOT TARGET bench_zone_loop OR NOT TARGET bench_zone_loop_off)
        return()
    endif()
    # The size of the toolchain's binutils: riscv64-linux-gnu-size beside
    # riscv64-linux-gnu-nm, plain size on the host.
    get_filename_component(_bt_nm_dir "${CMAKE_NM}" DIRECTORY)
    get_filename_component(_bt_nm_name "${CMAKE_NM}" NAME)
    string(REGEX REPLACE "nm$" "size" _bt_size_name "${_bt_nm_name}")
    find_program(BT_SIZE NAMES ${_bt_size_name} size HINTS "${_bt_nm_dir}"
                 DOC "binutils' size for the build's target (the footprint benchmark)")
    if(NOT BT_SIZE)
        message(STATUS "boardtrace: no ${_bt_size_name} found; bench_footprint is not registered")
        return()
    endif()
    set(_bt_footprint_capture "")
    if(TARGET boardtrace-capture)
        set(_bt_footprint_capture "$<TARGET_FILE:boardtrace-capture>")
    endif()
    add_test(NAME bench_footprint
             COMMAND "${CMAKE_COMMAND}" "-DSIZE=${BT_SIZE}" "-DTRACED=$<TARGET_FILE:bench_zone_loop>"
                     "-DOFF=$<TARGET_FILE:bench_zone_loop_off>" "-DCAPTURE=${_bt_footprint_capture}"
                     "-DUPSTREAM=${BT_UPSTREAM_ZONE_LOOP}" -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(bench_footprint PROPERTIES LABELS bench TIMEOUT 60)
    return()
endif()

# Sets <prefix>_text, <prefix>_alloc, <prefix>_bss, <prefix>_linking
# ("static" or "dynamic") and <prefix>_debug (1 if it has DWARF sections) from
# `size -A file`.
function(bt_footprint_sections file prefix)
    execute_process(COMMAND "${SIZE}" -A "${file}" OUTPUT_VARIABLE out ERROR_VARIABLE err
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${SIZE} -A ${file} failed (${rc}): ${err}")
    endif()
    string(REPLACE "\n" ";" lines "${out}")
    set(text 0)
    set(alloc 0)
    set(bss 0)
    set(linking static)
    set(debug 0)
    foreach(line IN LISTS lines)
        if(NOT line MATCHES "^([^ ]+) +([0-9]+) +([0-9]+) *$")
            continue()
        endif()
        set(name "${CMAKE_MATCH_1}")
        set(bytes "${CMAKE_MATCH_2}")
        if(NOT CMAKE_MATCH_3 EQUAL 0)
            math(EXPR alloc "${alloc} + ${bytes}")
        endif()
        if(name STREQUAL ".text")
            set(text ${bytes})
        elseif(name STREQUAL ".bss")
            set(bss ${bytes})
        elseif(name STREQUAL ".interp")
            set(linking dynamic)
        elseif(name MATCHES "^\\.debug_")
            set(debug 1)
        endif()
    endforeach()
    if(text EQUAL 0)
        message(FATAL_ERROR "${SIZE} -A ${file} shows no .text:\n${out}")
    endif()
    set(${prefix}_text ${text} PARENT_SCOPE)
    set(${prefix}_alloc ${alloc} PARENT_SCOPE)
    set(${prefix}_bss ${bss} PARENT_SCOPE)
    set(${prefix}_linking ${linking} PARENT_SCOPE)
    set(${prefix}_debug ${debug} PARENT_SCOPE)
endfunction()

# "12345 B (12.1 KiB)"
function(bt_footprint_bytes bytes out)
    math(EXPR tenths "(${bytes} * 10 + 512) / 1024")
    math(EXPR whole "${tenths} / 10")
    math(EXPR frac "${tenths} % 10")
    set(${out} "${bytes} B (${whole}.${frac} KiB)" PARENT_SCOPE)
endfunction()

bt_footprint_sections("${TRACED}" traced)
bt_footprint_sections("${OFF}" off)
math(EXPR added_text "${traced_text} - ${off_text}")
math(EXPR added_alloc "${traced_alloc} - ${off_alloc}")
math(EXPR added_bss "${traced_bss} - ${off_bss}")
bt_footprint_bytes(${added_text} text_shown)
bt_footprint_bytes(${added_alloc} alloc_shown)
set(note "")
if(traced_linking STREQUAL "dynamic")
    set(note " (what comes from shared libraries is not counted)")
endif()
message("footprint: what the runtime adds to bench_zone_loop, ${traced_linking}ally linked${note}")
message("  .text            ${text_shown}   (traced ${traced_text}, compiled out ${off_text}; "
        "the target on riscv64: at most 100 KB)")
message("  allocated, all   ${alloc_shown}   (traced ${traced_alloc}, compiled out ${off_alloc}; "
        ".bss ${added_bss} of it)")

if(CAPTURE)
    bt_footprint_sections("${CAPTURE}" capture)
    file(SIZE "${CAPTURE}" capture_file)
    bt_footprint_bytes(${capture_text} capture_text_shown)
    bt_footprint_bytes(${capture_alloc} capture_alloc_shown)
    bt_footprint_bytes(${capture_file} capture_file_shown)
    message("footprint: boardtrace-capture, ${capture_linking}ally linked")
    message("  .text            ${capture_text_shown}")
    message("  allocated, all   ${capture_alloc_shown}")
    if(capture_debug)
        set(capture_file_shown "${capture_file_shown}   (debug information included)")
    endif()
    message("  file             ${capture_file_shown}")
endif()

if(UPSTREAM)
    bt_footprint_sections("${UPSTREAM}" upstream)
    math(EXPR upstream_text "${upstream_text} - ${off_text}")
    math(EXPR upstream_alloc "${upstream_alloc} - ${off_alloc}")
    bt_footprint_bytes(${upstream_text} upstream_text_shown)
    bt_footprint_bytes(${upstream_alloc} upstream_alloc_shown)
    math(EXPR text_percent "(${added_text} * 100 + ${upstream_text} / 2) / ${upstream_text}")
    math(EXPR alloc_percent "(${added_alloc} * 100 + ${upstream_alloc} / 2) / ${upstream_alloc}")
    message("footprint: what upstream's client adds to the same loop (${UPSTREAM}, "
            "${upstream_linking}ally linked)")
    message("  .text            ${upstream_text_shown}   (boardtrace: ${text_percent}% of it)")
    message("  allocated, all   ${upstream_alloc_shown}   (boardtrace: ${alloc_percent}% of it)")
    if(NOT upstream_linking STREQUAL traced_linking)
        message("  (linked differently from ours: the figures do not compare)")
    endif()
else()
    message("  (no upstream loop to compare: configure with -DBT_UPSTREAM_ZONE_LOOP=PATH)")
endif()
