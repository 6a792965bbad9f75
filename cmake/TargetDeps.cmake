# Third-party libraries for the build's target: lz4 (Tracy's wire framing,
# the only one the runtime needs), zstd (trace files: tools), zlib (the
# reports' Perfetto export: tools) and cmocka (tests). On the host they come from Debian's
# -dev packages; for a cross target (Debian 12 ships no riscv64 packages) they
# are compiled here, statically, from source directories the user can name. By
# default those are Debian's source packages unpacked by tools/fetch-deps.sh.
# Either way the result is the imported targets bt::lz4, bt::zstd, bt::zlib,
# bt::cmocka.

if(CMAKE_CROSSCOMPILING)
    set(_bt_from_source_default ON)
else()
    set(_bt_from_source_default OFF)
endif()
option(BT_DEPS_FROM_SOURCE "Compile lz4, zstd and cmocka from source for the target" ${_bt_from_source_default})
bt_require_bool(BT_DEPS_FROM_SOURCE "${BT_DEPS_FROM_SOURCE}")

set(BT_DEPS_SOURCE_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH
    "Folder holding unpacked lz4-*, libzstd-* and cmocka-* sources (tools/fetch-deps.sh fills it)")

# Finds <dir>/<pattern> unless the user named the folder in <var>.
function(bt_find_source_dir var pattern marker what)
    if(NOT "${${var}}" STREQUAL "")
        set(dir "${${var}}")
    else()
        file(GLOB candidates LIST_DIRECTORIES true "${BT_DEPS_SOURCE_DIR}/${pattern}")
        list(SORT candidates)
        list(REVERSE candidates)
        set(dir "")
        foreach(c IN LISTS candidates)
            if(EXISTS "${c}/${marker}")
                set(dir "${c}")
                break()
            endif()
        endforeach()
    endif()
    if("${dir}" STREQUAL "" OR NOT EXISTS "${dir}/${marker}")
        if("${${var}}" STREQUAL "")
            set(looked "${BT_DEPS_SOURCE_DIR}/${pattern}/${marker}")
        else()
            set(looked "${${var}}/${marker}, from ${var}")
        endif()
        # The Debian source package is the folder's name without its version.
        string(REPLACE "-*" "" package "${pattern}")
        message(FATAL_ERROR
            "boardtrace: the ${what} sources for the target were not found (looked for "
            "${looked}). Run tools/fetch-deps.sh ${package} to unpack Debian's source package "
            "(only what this build needs), or set -D${var}=/path/to/${what}-source.")
    endif()
    set(${var} "${dir}" CACHE PATH "${what} source folder used for the target build" FORCE)
    message(STATUS "boardtrace: ${what} for the target from ${dir}")
endfunction()

function(bt_third_party_flags target)
    # Third-party code is compiled as its authors ship it: optimized, and
    # without our warning flags, so a newer compiler cannot break our -Werror.
    target_compile_options(${target} PRIVATE -O2 -w)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 99
                                               C_EXTENSIONS ON)
endfunction()

if(BT_DEPS_FROM_SOURCE)
    bt_find_source_dir(BT_LZ4_SOURCE_DIR "lz4-*" "lib/lz4.c" "lz4")
    add_library(bt_lz4 OBJECT EXCLUDE_FROM_ALL
        "${BT_LZ4_SOURCE_DIR}/lib/lz4.c"
        "${BT_LZ4_SOURCE_DIR}/lib/lz4hc.c"
        "${BT_LZ4_SOURCE_DIR}/lib/lz4frame.c"
        "${BT_LZ4_SOURCE_DIR}/lib/xxhash.c")
    target_include_directories(bt_lz4 SYSTEM PUBLIC "${BT_LZ4_SOURCE_DIR}/lib")
    target_compile_definitions(bt_lz4 PRIVATE XXH_NAMESPACE=LZ4_)
    bt_third_party_flags(bt_lz4)
    add_library(bt::lz4 ALIAS bt_lz4)
    # lz4.c again, one section per function, for the runtime's own copy of
    # the compressor (bt_link_lz4_compressor); plain objects, never LTO ones,
    # as ld reads them without the compiler.
    add_library(bt_lz4_sections OBJECT EXCLUDE_FROM_ALL "${BT_LZ4_SOURCE_DIR}/lib/lz4.c")
    target_compile_options(bt_lz4_sections PRIVATE -ffunction-sections -fdata-sections -fno-lto)
    bt_third_party_flags(bt_lz4_sections)

    # zstd: the capture's trace files (tools only).
    if(BOARDTRACE_BUILD_TOOLS)
        bt_find_source_dir(BT_ZSTD_SOURCE_DIR "libzstd-*" "lib/zstd.h" "zstd")
        file(GLOB _bt_zstd_sources
            "${BT_ZSTD_SOURCE_DIR}/lib/common/*.c"
            "${BT_ZSTD_SOURCE_DIR}/lib/compress/*.c"
            "${BT_ZSTD_SOURCE_DIR}/lib/decompress/*.c")
        add_library(bt_zstd OBJECT EXCLUDE_FROM_ALL ${_bt_zstd_sources})
        target_include_directories(bt_zstd SYSTEM PUBLIC "${BT_ZSTD_SOURCE_DIR}/lib")
        # The hand-written x86-64 Huffman decoder is the only assembly; the C
        # path is used everywhere so one source list serves every target.
        target_compile_definitions(bt_zstd PRIVATE XXH_NAMESPACE=ZSTD_ ZSTD_DISABLE_ASM=1)
        bt_third_party_flags(bt_zstd)
        add_library(bt::zstd ALIAS bt_zstd)

        # zlib: the Perfetto export of the reports (tools only).
        bt_find_source_dir(BT_ZLIB_SOURCE_DIR "zlib-*" "zlib.h" "zlib")
        file(GLOB _bt_zlib_sources "${BT_ZLIB_SOURCE_DIR}/*.c")
        add_library(bt_zlib OBJECT EXCLUDE_FROM_ALL ${_bt_zlib_sources})
        target_include_directories(bt_zlib SYSTEM PUBLIC "${BT_ZLIB_SOURCE_DIR}")
        bt_third_party_flags(bt_zlib)
        add_library(bt::zlib ALIAS bt_zlib)
    endif()

    if(BT_BUILD_TESTS)
        bt_find_source_dir(BT_CMOCKA_SOURCE_DIR "cmocka-*" "src/cmocka.c" "cmocka")
        configure_file("${PROJECT_SOURCE_DIR}/cmake/cmocka-config.h.in"
                       "${CMAKE_CURRENT_BINARY_DIR}/cmocka-config/config.h" @ONLY)
        add_library(bt_cmocka STATIC EXCLUDE_FROM_ALL "${BT_CMOCKA_SOURCE_DIR}/src/cmocka.c")
        target_include_directories(bt_cmocka SYSTEM PUBLIC "${BT_CMOCKA_SOURCE_DIR}/include")
        target_include_directories(bt_cmocka PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/cmocka-config")
        target_compile_definitions(bt_cmocka PRIVATE HAVE_CONFIG_H=1)
        bt_third_party_flags(bt_cmocka)
        add_library(bt::cmocka ALIAS bt_cmocka)
    endif()
else()
    function(bt_import_system_library target header library what package)
        find_path(_dir_${target} NAMES ${header})
        find_library(_lib_${target} NAMES ${library})
        if(NOT _dir_${target} OR NOT _lib_${target})
            message(FATAL_ERROR
                "boardtrace: ${what} was not found on this machine (${header}, lib${library}). "
                "Install Debian's ${package} (tools/setup.sh does), or configure with "
                "-DBT_DEPS_FROM_SOURCE=ON to compile it from source.")
        endif()
        add_library(${target} UNKNOWN IMPORTED GLOBAL)
        set_target_properties(${target} PROPERTIES
            IMPORTED_LOCATION "${_lib_${target}}"
            INTERFACE_INCLUDE_DIRECTORIES "${_dir_${target}}")
    endfunction()
    bt_import_system_library(bt::lz4 lz4.h lz4 "lz4" liblz4-dev)
    if(BOARDTRACE_BUILD_TOOLS)
        bt_import_system_library(bt::zstd zstd.h zstd "zstd" libzstd-dev)
        bt_import_system_library(bt::zlib zlib.h z "zlib" zlib1g-dev)
    endif()
    if(BT_BUILD_TESTS)
        bt_import_system_library(bt::cmocka cmocka.h cmocka "cmocka" libcmocka-dev)
    endif()
endif()

# The LZ4 functions the runtime calls (runtime/src/encode/encoder.c). A runtime that
# calls another one must name it here, or a from-source build fails to link.
set(BT_LZ4_RUNTIME_FUNCTIONS LZ4_createStream LZ4_freeStream LZ4_resetStream_fast
                             LZ4_compress_fast_continue)

# Gives <target> (the runtime) the LZ4 compressor so that an installed static
# library carries it. A system lz4 (host builds) is named for consumers' link
# lines. One compiled from source goes into the archive as one object holding
# only BT_LZ4_RUNTIME_FUNCTIONS and what they reach (a partial link that drops
# the unreferenced sections: lz4.c is one object file, and a program linking
# it would otherwise get every compressor and decompressor, about 40 KB), under
# the names bt_LZ4_* with everything else local, so a program that links its
# own lz4 as well gets no duplicate symbols.
function(bt_link_lz4_compressor target)
    if(NOT BT_DEPS_FROM_SOURCE)
        target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:bt::lz4>
                                        INTERFACE $<INSTALL_INTERFACE:lz4>)
        return()
    endif()
    foreach(tool CMAKE_LINKER CMAKE_OBJCOPY)
        if(NOT ${tool})
            message(FATAL_ERROR "boardtrace: ${tool} (the toolchain's ld or objcopy) was not found; "
                                "it is needed to build the runtime's copy of the LZ4 compressor")
        endif()
    endforeach()
    set(roots "")
    set(renames "")
    set(globals "")
    set(defines "")
    foreach(f IN LISTS BT_LZ4_RUNTIME_FUNCTIONS)
        list(APPEND roots "--undefined=${f}")
        list(APPEND renames "--redefine-sym=${f}=bt_${f}")
        list(APPEND globals "--keep-global-symbol=bt_${f}")
        list(APPEND defines "${f}=bt_${f}")
    endforeach()
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_lz4.o")
    add_custom_command(OUTPUT "${out}"
        COMMAND "${CMAKE_LINKER}" -r --gc-sections ${roots} -o "${out}.partial"
                "$<TARGET_OBJECTS:bt_lz4_sections>"
        COMMAND "${CMAKE_OBJCOPY}" ${renames} ${globals} "${out}.partial" "${out}"
        COMMAND "${CMAKE_COMMAND}" -E rm -f "${out}.partial"
        DEPENDS bt_lz4_sections "$<TARGET_OBJECTS:bt_lz4_sections>"
        COMMENT "Keeping the LZ4 compressor the runtime calls"
        COMMAND_EXPAND_LISTS VERBATIM)
    target_sources(${target} PRIVATE "${out}")
    target_compile_definitions(${target} PRIVATE ${defines})
    target_include_directories(${target} SYSTEM PRIVATE "${BT_LZ4_SOURCE_DIR}/lib")
endfunction()
